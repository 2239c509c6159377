"""What differs between the model paths a cell can take, behind one interface.

A backend loads the model (with the quantization and attention the techniques asked for), patches in
kernels, enables each checkpointing mode, attaches adapters, and says what it did. The techniques call
these methods and never ask which backend is in use; `harness.backends.for_settings` picks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.techniques.base import Plan


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
