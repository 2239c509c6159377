"""The one contract of the training stack: the plan the techniques fill in together (Plan, with its LoadRequest),
what every technique implements (Technique) and what every model path implements (Backend). A technique asks
the backend and never which backend is in use; the recipe calls the hooks in the registry's order
(docs/extending.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.core.runtime import Runtime
    from harness.core.setting import Setting
    from harness.data.training import TrainingData
    from harness.stack.token_map import TokenMap


class Unavailable(Exception):
    """This technique cannot run on this machine (no CUDA, a package missing): the cell is skipped."""


@dataclass
class LoadRequest:
    """What the techniques ask of the load; the backend translates it into its loader's arguments."""

    quantization: str = "none"  # "none" or "nf4" (bitsandbytes, double quantization, bf16 compute)
    attention: str = "sdpa"  # the implementation passed to the loader
    max_seq_length: int = 1024
    tiled_mlp: str = "off"  # "off" or "arctic" (Unsloth's loader option)


@dataclass(frozen=True)
class AdapterSpec:
    rank: int
    alpha: int
    targets: tuple[str, ...]
    rslora: bool
    seed: int
    max_seq_length: int

    def peft_arguments(self) -> dict[str, Any]:
        return {"r": self.rank, "lora_alpha": self.alpha, "target_modules": list(self.targets),
                "lora_dropout": 0.0, "bias": "none", "use_rslora": self.rslora}


@dataclass
class Plan:
    settings: dict[str, Any]
    runtime: Runtime
    backend: Backend
    load: LoadRequest
    trainer_kwargs: dict[str, Any] = field(default_factory=dict)   # extra SFTConfig fields
    trainer_class: type | None = None  # an SFTTrainer subclass that takes the loss another way; None: SFTTrainer
    records: dict[str, Any] = field(default_factory=dict)          # what each technique reports
    training: TrainingData | None = None                           # the cell's training data, token ids
    tokenizer: Any = None
    token_map: TokenMap | None = None  # a sliced vocabulary's map from the tokenizer's ids to the model's rows

    @property
    def device(self) -> str:
        return self.runtime.device

    def level(self, axis: str) -> Any:
        return self.settings[axis]


class Technique:
    axis: str = ""
    settings: tuple[Setting, ...] = ()  # the settings this technique owns, its axis first
    cuda_levels: tuple[str, ...] = ()  # levels of its axis that run only on a CUDA GPU

    def check(self, plan: Plan) -> None:
        """Raise Unavailable when this level cannot run here; called before anything is loaded."""

    def before_load(self, plan: Plan) -> None:
        """Fill the load request (quantization, attention) and the trainer settings."""

    def after_load(self, model: Any, plan: Plan) -> Any:
        """Change the loaded model (slice, patch, wrap) through the backend; return the model to train."""
        return model

    def before_train(self, model: Any, plan: Plan) -> None:
        """Last look at the model and the trainer settings."""

    def after_train(self, model: Any, plan: Plan) -> None:
        """Record what actually ran."""


class Backend:
    name: str = ""

    def prepare(self, plan: Plan) -> None:
        """Imports that must come before transformers, peft and trl are used."""

    def load(self, path: Path, plan: Plan) -> tuple[Any, Any]:
        """The model and its tokenizer, on the plan's device, as the load request says."""
        raise NotImplementedError

    def attention_note(self) -> str | None:
        """Anything the attention record should say about how this path treats the implementation asked."""
        return None

    def attention_through_sdpa(self, implementation: str) -> bool:
        """Whether attention calls torch's scaled_dot_product_attention, where a probe can see the kernel."""
        return implementation == "sdpa"

    def apply_kernels(self, model: Any, level: str, record: dict[str, Any]) -> Any:
        raise NotImplementedError

    def apply_loss_path(self, model: Any, level: str, record: dict[str, Any]) -> Any:
        """Make the model's own forward with labels compute the loss as the loss-path level names it."""
        raise ValueError(f"the {self.name} path cannot compute the loss as {level!r}")

    def enable_checkpointing(self, model: Any, mode: str, record: dict[str, Any]) -> Any:
        raise NotImplementedError

    def checkpointing_evidence(self, model: Any, record: dict[str, Any]) -> None:
        """After training: what shows the chosen checkpointing mode really ran."""

    def attach_adapter(self, model: Any, spec: AdapterSpec) -> Any:
        raise NotImplementedError

    def load_adapter(self, model: Any, folder: Path) -> Any:
        """A trained adapter, saved by a cell, put back on the base model for evaluation."""
        from peft import PeftModel

        return PeftModel.from_pretrained(model, str(folder), is_trainable=False)


def require_cuda(plan: Plan, what: str) -> None:
    if plan.device != "cuda":
        raise Unavailable(f"{what} needs a CUDA GPU; this cell runs on the CPU")


def require_package(module: str, what: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise Unavailable(f"{what} needs the Python package {module!r}, which is not installed "
                          "(pip install 'vramlab[gpu]')")
