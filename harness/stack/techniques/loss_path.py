"""Who turns the last hidden states into the training loss. Why it is so: docs/stack.md."""

from __future__ import annotations

from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique

# the module prefix of the forward that computes the loss, for each level where the model does it
FORWARD_OWNER = {"unsloth-fused-ce": "unsloth", "liger-flce": "liger_kernel", "full-logits": "transformers"}


class LossPath(Technique):
    axis = "loss_path"
    settings = (Setting("loss_path", str, "trl-chunked",
                        "who computes the loss from the last hidden states: TRL's chunked LM head, Unsloth's "
                        "fused cross-entropy, Liger's fused linear cross-entropy, or the whole logits",
                        levels=("trl-chunked", *FORWARD_OWNER), owner="loss_path", hashed_at_default=False),)
    cuda_levels = ("unsloth-fused-ce", "liger-flce")

    def before_load(self, plan: Plan) -> None:
        level = plan.level(self.axis)
        plan.records["loss_path"] = {"level": level}
        if level != "trl-chunked":
            plan.trainer_class = model_loss_trainer()

    def after_load(self, model: Any, plan: Plan) -> Any:
        level = plan.level(self.axis)
        if level == "trl-chunked":
            return model
        record = plan.records["loss_path"]
        model = plan.backend.apply_loss_path(model, level, record)
        forward = getattr(model.forward, "__func__", model.forward)
        record["forward"] = f"{getattr(forward, '__module__', '?')}.{getattr(forward, '__qualname__', '?')}"
        if not record["forward"].startswith(FORWARD_OWNER[level]):
            raise RuntimeError(f"loss_path: {level} was asked, but the model's forward is {record['forward']}")
        return model

    def after_train(self, model: Any, plan: Plan) -> None:
        record = plan.records.get("loss_path")
        if record is not None and plan.level(self.axis) != "trl-chunked":
            record["model_loss_calls"] = ModelLossCalls.count


class ModelLossCalls:
    count = 0  # training steps whose loss the model's own forward computed (one process, one cell)


def model_loss_trainer() -> type:
    """SFTTrainer whose loss is the model's own, as `transformers.Trainer.compute_loss` takes it."""
    from transformers import Trainer
    from trl import SFTTrainer

    class ModelLossSFTTrainer(SFTTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            ModelLossCalls.count += 1
            return Trainer.compute_loss(self, model, inputs, return_outputs=return_outputs,
                                        num_items_in_batch=num_items_in_batch)

    return ModelLossSFTTrainer
