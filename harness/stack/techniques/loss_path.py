"""Who turns the last hidden states into the training loss.

The LM head's logits are the widest activation a long-context cell has: 20,480 tokens x 151,936 vocabulary
entries is 5.8 GiB in bf16, and twice that once upcast to fp32. So who computes the loss, and in how many
pieces, moves the device peak by gigabytes.

- `trl-chunked` (the default, and every cell's path before this axis): TRL's SFTTrainer calls the backbone
  and its fused LM head, which projects and scores tiles of tokens and vocabulary at a time
  (harness/run/lm_head_loss.py where its Triton kernel cannot run). On the Unsloth path the kernel in that
  head is unsloth_zoo's fused linear log-probs, which importing Unsloth puts in TRL's place; the result's
  `trainer.lm_head_loss` names the kernel that was there (files written before 2026-12-01 name TRL's).
- `unsloth-fused-ce`: the model's own forward with labels on the Unsloth path, which computes the loss with
  Unsloth's fused linear cross-entropy (chunks of tokens, gradients made during the forward).
- `liger-flce`: the model's own forward with labels, patched with Liger's fused linear cross-entropy.
- `full-logits`: the model's own forward with labels as transformers writes it: the whole logits, upcast to
  fp32 for the cross-entropy. The reference the fused paths are measured against.

The last three keep SFTTrainer's data, collation and settings and take the loss as `Trainer.compute_loss`
does: the labels go to the model and its `loss` is the training loss. Which forward ran is read off the model
before training, and a cell whose model would not compute the loss as named fails instead of running under
the wrong name. Which levels fit which kernels is declared in harness/spec/conflicts.py.
"""

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
