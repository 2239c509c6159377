"""The registry of techniques, in the order the recipe applies them.

Order matters and is fixed here: kernels patch the freshly loaded model, and the loss path (Liger's fused
loss is a patch of the same kind) reads which forward will compute the loss before peft wraps it;
quantization, attention and MLP tiling (an option of Unsloth's loader) shape the load, vocabulary slicing
works on the plain loaded model, checkpointing before adapters (peft wraps the model), optimizer last.
To add a technique: write one module with a Technique subclass that declares its settings, and list it here.
"""

from harness.stack.contract import Technique
from harness.stack.techniques.adapter import Adapter
from harness.stack.techniques.attention import Attention
from harness.stack.techniques.checkpointing import Checkpointing
from harness.stack.techniques.kernels import Kernels
from harness.stack.techniques.loss_path import LossPath
from harness.stack.techniques.optimizer import Optimizer
from harness.stack.techniques.quantization import Quantization
from harness.stack.techniques.tiled_mlp import TiledMlp
from harness.stack.techniques.vocabulary import Vocabulary

TECHNIQUES: tuple[type[Technique], ...] = (Kernels, LossPath, Quantization, Attention, TiledMlp, Vocabulary,
                                           Checkpointing, Adapter, Optimizer)


def needs_cuda(settings: dict) -> bool:
    """Whether a cell can only be measured on a CUDA GPU, told from its settings alone (no torch import)."""
    if settings.get("device") == "cuda":
        return True
    return any(settings.get(t.axis) in t.cuda_levels for t in TECHNIQUES)


def registry() -> list[Technique]:
    """Fresh instances for one cell (some keep per-run state, like the attention probe)."""
    return [technique() for technique in TECHNIQUES]


__all__ = ["TECHNIQUES", "needs_cuda", "registry"]
