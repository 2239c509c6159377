"""Fused kernels: none, Liger-Kernel, or Unsloth.

Liger patches the loaded model in place (RMSNorm, RoPE, SwiGLU). Unsloth's kernels come with its own
model path (harness/stack/backends/unsloth.py), which this level selects. Both at once is a declared conflict
(harness/spec/conflicts.py).
"""

from __future__ import annotations

from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique, require_cuda, require_package

REQUIREMENTS = {"liger": ("liger_kernel", "Liger-Kernel (Triton kernels)"), "unsloth": ("unsloth", "Unsloth")}


class Kernels(Technique):
    axis = "kernels"
    settings = (Setting("kernels", str, "none", "fused kernels patched into the model",
                        levels=("none", "liger", "unsloth", "liger+unsloth"), owner="kernels"),)
    cuda_levels = tuple(REQUIREMENTS)

    def check(self, plan: Plan) -> None:
        level = plan.level(self.axis)
        if level in REQUIREMENTS:
            package, what = REQUIREMENTS[level]
            require_cuda(plan, what)
            require_package(package, what.split(" (")[0])

    def before_load(self, plan: Plan) -> None:
        plan.records["kernels"] = {"kernels": plan.level(self.axis)}

    def after_load(self, model: Any, plan: Plan) -> Any:
        return plan.backend.apply_kernels(model, plan.level(self.axis), plan.records["kernels"])
