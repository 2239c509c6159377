"""Base weights in 4-bit NF4 (bitsandbytes, double quantization, bf16 compute), or as loaded."""

from __future__ import annotations

from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique, require_cuda, require_package


class Quantization(Technique):
    axis = "quantization"
    settings = (Setting("quantization", str, "none", "base weights: bf16/fp32 as loaded, or bitsandbytes NF4",
                        levels=("none", "nf4"), owner="quantization"),)
    cuda_levels = ("nf4",)

    def check(self, plan: Plan) -> None:
        if plan.level(self.axis) in self.cuda_levels:
            require_cuda(plan, "NF4 quantization (bitsandbytes)")
            require_package("bitsandbytes", "NF4 quantization")

    def before_load(self, plan: Plan) -> None:
        plan.load.quantization = plan.level(self.axis)
        if plan.level(self.axis) != "nf4":
            return
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
