"""The Unsloth path: Unsloth's FastLanguageModel loads the model (its own NF4 setup), patches its kernels
and attention in, and attaches the adapters together with its checkpointing mode, so the mode asked for
is kept until the adapters are attached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.stack.contract import AdapterSpec, Backend, Plan

# the harness's checkpointing levels in Unsloth's terms; "unsloth" is its offloading mode
CHECKPOINTING_MODES: dict[str, bool | str] = {"off": False, "on": True, "offload": "unsloth"}


class UnslothBackend(Backend):
    name = "unsloth"

    def __init__(self) -> None:
        self._checkpointing: bool | str = False
        self.version: str | None = None

    def prepare(self, plan: Plan) -> None:
        import unsloth  # must come before transformers, peft and trl are used: it patches them

        self.version = getattr(unsloth, "__version__", None)

    def load(self, path: Path, plan: Plan) -> tuple[Any, Any]:
        import os

        from unsloth import FastLanguageModel

        # Unsloth's loader reads UNSLOTH_TILED_MLP over its own argument; the cell's tiled_mlp setting must be
        # the only thing that decides, so a value left in the shell cannot tile an `off` cell
        os.environ.pop("UNSLOTH_TILED_MLP", None)

        # Unsloth builds the same BitsAndBytesConfig as the Hugging Face path (nf4, double quantization,
        # compute in its dtype) from load_in_4bit
        return FastLanguageModel.from_pretrained(
            model_name=str(path), max_seq_length=plan.load.max_seq_length, dtype=plan.runtime.dtype,
            load_in_4bit=plan.load.quantization == "nf4", full_finetuning=False,
            unsloth_tiled_mlp=plan.load.tiled_mlp == "arctic")

    def attention_note(self) -> str | None:
        return "Unsloth runs its own attention path"

    def attention_through_sdpa(self, implementation: str) -> bool:
        return True  # its attention path calls torch SDPA whatever the loader was asked

    def apply_kernels(self, model: Any, level: str, record: dict[str, Any]) -> Any:
        if level != "unsloth":
            raise ValueError(f"the Unsloth path has no kernels {level!r}")
        record["unsloth_version"] = self.version  # patched in at import and load
        return model

    def apply_loss_path(self, model: Any, level: str, record: dict[str, Any]) -> Any:
        if level != "unsloth-fused-ce":
            return super().apply_loss_path(model, level, record)
        return model  # Unsloth's forward computes its fused loss whenever it is given labels

    def enable_checkpointing(self, model: Any, mode: str, record: dict[str, Any]) -> Any:
        self._checkpointing = CHECKPOINTING_MODES[mode]  # applied with the adapters
        return model

    def attach_adapter(self, model: Any, spec: AdapterSpec) -> Any:
        from unsloth import FastLanguageModel

        return FastLanguageModel.get_peft_model(
            model, use_gradient_checkpointing=self._checkpointing, random_state=spec.seed,
            max_seq_length=spec.max_seq_length, **spec.peft_arguments())
