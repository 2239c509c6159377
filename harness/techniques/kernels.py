"""Fused kernels: none, Liger-Kernel, or Unsloth.

Liger patches the loaded model in place (RMSNorm, RoPE, SwiGLU and the fused linear cross-entropy that
never materializes the full logits). Unsloth is more than kernels: it loads the model and attaches the
adapters itself, so choosing it switches the plan's loader. Both at once is a declared conflict
(harness/rules.py).
"""

from __future__ import annotations

from typing import Any

from harness.techniques.base import Plan, Technique, require_cuda, require_package


def liger_patched(model: Any) -> dict[str, int]:
    """Modules whose forward is now Liger's, counted by class, and the model's rotary function: what
    Liger replaced, read off the model rather than assumed."""
    import sys

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


class Kernels(Technique):
    axis = "kernels"

    def check(self, plan: Plan) -> None:
        level = plan.level(self.axis)
        if level == "liger":
            require_cuda(plan, "Liger-Kernel (Triton kernels)")
            require_package("liger_kernel", "Liger-Kernel")
        elif level == "unsloth":
            require_cuda(plan, "Unsloth")
            require_package("unsloth", "Unsloth")

    def before_load(self, plan: Plan) -> None:
        level = plan.level(self.axis)
        plan.records["kernels"] = {"kernels": level}
        if level == "unsloth":
            import unsloth  # must come before transformers, peft and trl are used: it patches them

            plan.loader = "unsloth"
            plan.records["kernels"]["unsloth_version"] = getattr(unsloth, "__version__", None)

    def after_load(self, model: Any, plan: Plan) -> Any:
        if plan.level(self.axis) == "liger":
            from liger_kernel.transformers import _apply_liger_kernel_to_instance

            # TRL's SFTTrainer computes the loss through its own chunked LM head and calls the backbone
            # directly, so Liger's fused linear cross-entropy would never run; TRL itself turns it off
            # for the same reason. Liger's layer kernels (RMSNorm, RoPE, SwiGLU) do run.
            _apply_liger_kernel_to_instance(model=model, fused_linear_cross_entropy=False, cross_entropy=False)
            plan.records["kernels"]["liger_patched"] = liger_patched(model)
            plan.records["kernels"]["liger_fused_linear_cross_entropy"] = "off: TRL's chunked LM head computes the loss"
        return model
