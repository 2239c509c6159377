"""Base weights in 4-bit NF4 (bitsandbytes, double quantization, bf16 compute), or as loaded."""

from __future__ import annotations

from typing import Any

from harness.techniques.base import Plan, Technique, require_cuda, require_package


class Quantization(Technique):
    axis = "quantization"

    def check(self, plan: Plan) -> None:
        if plan.level(self.axis) == "nf4":
            require_cuda(plan, "NF4 quantization (bitsandbytes)")
            require_package("bitsandbytes", "NF4 quantization")

    def before_load(self, plan: Plan) -> None:
        if plan.level(self.axis) != "nf4":
            return
        if plan.loader == "unsloth":
            # Unsloth builds the same BitsAndBytesConfig (nf4, double quant, compute in its dtype)
            plan.load_kwargs["load_in_4bit"] = True
        else:
            import torch
            from transformers import BitsAndBytesConfig

            plan.load_kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=torch.bfloat16)
        # prepare_model_for_kbit_training is deliberately not called: it casts every non-quantized
        # parameter to fp32, the hidden states reach attention in fp32 and SDPA falls back from the
        # flash kernel to the math kernel (a 32 GiB score matrix at 16k tokens).
        plan.records["quantization"] = {"method": "bitsandbytes nf4", "double_quant": True,
                                        "compute_dtype": "bfloat16"}

    def after_load(self, model: Any, plan: Plan) -> Any:
        if plan.level(self.axis) == "nf4":
            plan.records.setdefault("quantization", {})["linear4bit_modules"] = sum(
                type(m).__name__ == "Linear4bit" for m in model.modules())
        return model
