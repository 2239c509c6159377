"""LoRA or rank-stabilized LoRA adapters (peft), rank, alpha and target modules from the cell."""

from __future__ import annotations

from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import AdapterSpec, Plan, Technique

DEFAULT_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _targets_problem(value: Any) -> str | None:
    """An adapter needs a module to attach to (peft fails only after the model loads), and a module named twice
    would change the cell id without changing the cell."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"{value!r} is not a list of strings"
    if not value:
        return "an empty list: name at least one module to adapt (e.g. [q_proj, v_proj])"
    twice = sorted({v for v in value if value.count(v) > 1})
    return f"{', '.join(twice)} listed twice; name each module once" if twice else None


class Adapter(Technique):
    axis = "adapter"
    settings = (
        Setting("adapter", str, "lora", "LoRA, or rank-stabilized LoRA (alpha/sqrt(r) scaling)",
                levels=("lora", "rslora"), owner="adapter"),
        Setting("lora_rank", int, 16, "LoRA rank r", minimum=1, maximum=65536, owner="adapter"),
        Setting("lora_alpha", int, 16, "LoRA alpha", minimum=1, maximum=65536, owner="adapter"),
        Setting("lora_targets", list, DEFAULT_TARGETS, "module names that get adapters", owner="adapter",
                validate=_targets_problem),
    )

    def after_load(self, model: Any, plan: Plan) -> Any:
        s = plan.settings
        rslora = plan.level(self.axis) == "rslora"
        spec = AdapterSpec(rank=s["lora_rank"], alpha=s["lora_alpha"], targets=tuple(s["lora_targets"]),
                           rslora=rslora, seed=s["seed"], max_seq_length=s["context"])
        model = plan.backend.attach_adapter(model, spec)
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        total = sum(p.numel() for p in model.parameters())
        scale = s["lora_alpha"] / (s["lora_rank"] ** 0.5 if rslora else s["lora_rank"])
        plan.records["adapter"] = {"kind": plan.level(self.axis), "trainable_parameters": trainable,
                                   "total_parameters": total, "scaling": scale}
        return model
