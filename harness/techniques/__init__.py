"""The registry of techniques, in the order the recipe applies them.

Order matters and is fixed here: kernels first (Unsloth must be imported before the rest and decides
who loads), quantization and attention shape the load, vocabulary slicing works on the plain loaded
model, checkpointing before adapters (peft wraps the model), optimizer last.
To add a technique: write one module with a Technique subclass, add its setting in harness/settings.py,
list it here.
"""

from harness.techniques.adapter import Adapter
from harness.techniques.attention import Attention
from harness.techniques.base import Plan, Technique, Unavailable
from harness.techniques.checkpointing import Checkpointing
from harness.techniques.kernels import Kernels
from harness.techniques.optimizer import Optimizer
from harness.techniques.quantization import Quantization
from harness.techniques.vocabulary import Vocabulary


def registry() -> list[Technique]:
    """Fresh instances for one cell (some keep per-run state, like the attention probe)."""
    return [Kernels(), Quantization(), Attention(), Vocabulary(), Checkpointing(), Adapter(), Optimizer()]


__all__ = ["Plan", "Technique", "Unavailable", "registry"]
