"""The Hugging Face path: transformers loads the model (bitsandbytes for NF4), peft attaches adapters,
checkpointing is the layers' own mechanism with a function this harness installs, Liger patches the
loaded model in place."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from harness.stack.backends.checkpoint_functions import CountedCheckpoint, OffloadedCheckpoint
from harness.stack.contract import AdapterSpec, Backend, Plan


def liger_patched(model: Any) -> dict[str, int]:
    """Modules whose forward is now Liger's, counted by class, and the model's rotary function: what
    Liger replaced, read off the model rather than assumed."""
    counts: dict[str, int] = {}
    for module in model.modules():
        forward = getattr(module, "forward", None)
        owner = getattr(getattr(forward, "__func__", forward), "__module__", "") or ""
        if owner.startswith("liger_kernel"):
            counts[type(module).__name__] = counts.get(type(module).__name__, 0) + 1
    modeling = sys.modules.get(type(model).__module__)
    rope = getattr(getattr(modeling, "apply_rotary_pos_emb", None), "__module__", "") or ""
    counts["apply_rotary_pos_emb"] = int(rope.startswith("liger_kernel"))
    return counts


class HuggingFaceBackend(Backend):
    name = "huggingface"

    def __init__(self) -> None:
        self._installed: CountedCheckpoint | None = None
        self._layers: list[Any] = []

    def load(self, path: Path, plan: Plan) -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kwargs: dict[str, Any] = {"attn_implementation": plan.load.attention}
        if plan.load.quantization == "nf4":
            import torch
            from transformers import BitsAndBytesConfig

            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=torch.bfloat16)
        device_map = {"": 0} if plan.runtime.cuda else None
        model = AutoModelForCausalLM.from_pretrained(path, dtype=plan.runtime.dtype, device_map=device_map, **kwargs)
        return model, AutoTokenizer.from_pretrained(path)

    def apply_kernels(self, model: Any, level: str, record: dict[str, Any]) -> Any:
        if level == "liger":
            from liger_kernel.transformers import _apply_liger_kernel_to_instance

            # the layer kernels (RMSNorm, RoPE, SwiGLU); the loss is the loss path's (apply_loss_path)
            _apply_liger_kernel_to_instance(model=model, fused_linear_cross_entropy=False, cross_entropy=False)
            record["liger_patched"] = liger_patched(model)
        elif level != "none":
            raise ValueError(f"the Hugging Face path has no kernels {level!r}")
        return model

    def apply_loss_path(self, model: Any, level: str, record: dict[str, Any]) -> Any:
        if level == "liger-flce":
            from liger_kernel.transformers import _apply_liger_kernel_to_instance

            # only the causal LM's forward: the layer kernels are the kernels level's to choose
            _apply_liger_kernel_to_instance(model=model, fused_linear_cross_entropy=True, cross_entropy=False,
                                            rope=False, rms_norm=False, swiglu=False)
        elif level != "full-logits":  # transformers' own forward: the whole logits, then the cross-entropy
            return super().apply_loss_path(model, level, record)
        return model

    def enable_checkpointing(self, model: Any, mode: str, record: dict[str, Any]) -> Any:
        model.config.use_cache = False
        if mode == "off":
            return model
        from transformers.modeling_layers import GradientCheckpointingLayer

        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        layers = [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer) and m.gradient_checkpointing]
        function = layers[0]._gradient_checkpointing_func if layers else None
        if mode == "offload":
            # the offloading function is re-entrant style: autograd calls its backward only if the
            # first layer's input requires a gradient, so make the embedding output require one
            model.enable_input_require_grads()
            function = OffloadedCheckpoint.make()
            record["offloaded_modules"] = len(layers)
        self._installed = CountedCheckpoint(function)
        for layer in layers:
            layer._gradient_checkpointing_func = self._installed
        self._layers = layers
        record["checkpointed_modules"] = len(layers)
        return model

    def checkpointing_evidence(self, model: Any, record: dict[str, Any]) -> None:
        # the trainer must not have turned checkpointing on over `off`, nor replaced the function
        # installed here (TRL's defaults once did both)
        record["active_after_train"] = bool(getattr(model, "is_gradient_checkpointing", False))
        if self._installed is not None:
            record["checkpointed_calls"] = self._installed.calls
            record["function_kept"] = all(layer._gradient_checkpointing_func is self._installed
                                          for layer in self._layers)

    def attach_adapter(self, model: Any, spec: AdapterSpec) -> Any:
        from peft import LoraConfig, get_peft_model

        return get_peft_model(model, LoraConfig(task_type="CAUSAL_LM", **spec.peft_arguments()))
