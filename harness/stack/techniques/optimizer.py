"""AdamW in full precision, 8-bit (bitsandbytes), or 8-bit with state paged to host memory."""

from __future__ import annotations

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique, require_cuda, require_package

TRAINER_NAMES = {"adamw_torch": "adamw_torch", "adamw_8bit": "adamw_bnb_8bit",
                 "paged_adamw_8bit": "paged_adamw_8bit"}


class Optimizer(Technique):
    axis = "optimizer"
    settings = (Setting("optimizer", str, "adamw_torch", "AdamW in fp32, 8-bit, or 8-bit paged to host memory",
                        levels=tuple(TRAINER_NAMES), owner="optimizer"),)
    cuda_levels = ("adamw_8bit", "paged_adamw_8bit")

    def check(self, plan: Plan) -> None:
        if plan.level(self.axis) in self.cuda_levels:
            require_cuda(plan, "bitsandbytes 8-bit optimizers")
            require_package("bitsandbytes", "8-bit optimizers")

    def before_load(self, plan: Plan) -> None:
        plan.trainer_kwargs["optim"] = TRAINER_NAMES[plan.level(self.axis)]
        plan.records["optimizer"] = {"trainer_optim": TRAINER_NAMES[plan.level(self.axis)],
                                     "paged": plan.level(self.axis).startswith("paged")}
