"""Activation checkpointing: off, on (non-reentrant), or offload (layer inputs wait in pinned host memory).

How each mode is put in place belongs to the model path (harness/stack/backends); this technique asks for it and
records the evidence the backend gives that it ran.
"""

from __future__ import annotations

from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique


class Checkpointing(Technique):
    axis = "checkpointing"
    settings = (Setting("checkpointing", str, "off",
                        "activation checkpointing; offload keeps layer inputs on the host",
                        levels=("off", "on", "offload"), owner="checkpointing"),)

    def before_load(self, plan: Plan) -> None:
        plan.records["checkpointing"] = {"mode": plan.level(self.axis)}

    def after_load(self, model: Any, plan: Plan) -> Any:
        return plan.backend.enable_checkpointing(model, plan.level(self.axis), plan.records["checkpointing"])

    def after_train(self, model: Any, plan: Plan) -> None:
        plan.backend.checkpointing_evidence(model, plan.records["checkpointing"])
