"""Activation checkpointing: off, on (non-reentrant), or offload.

`offload` is checkpointing whose saved layer inputs go to pinned host memory and come back for the
backward pass, which is what Unsloth's "unsloth" mode does. On the transformers path it is built from
torch's own pieces: each decoder layer's checkpoint runs under `torch.autograd.graph.save_on_cpu`, so
the only tensors kept across layers (the checkpoint inputs) live on the host.
"""

from __future__ import annotations

from typing import Any

from harness.techniques.base import Plan, Technique

UNSLOTH_MODES = {"off": False, "on": True, "offload": "unsloth"}


def _offloading_checkpoint(function, *args, **kwargs):
    import torch
    from torch.utils.checkpoint import checkpoint

    with torch.autograd.graph.save_on_cpu(pin_memory=torch.cuda.is_available()):
        return checkpoint(function, *args, use_reentrant=False, **kwargs)


class Checkpointing(Technique):
    axis = "checkpointing"

    def before_load(self, plan: Plan) -> None:
        level = plan.level(self.axis)
        plan.unsloth_checkpointing = UNSLOTH_MODES[level]
        plan.records["checkpointing"] = {"mode": level}

    def after_load(self, model: Any, plan: Plan) -> Any:
        level = plan.level(self.axis)
        if plan.loader == "unsloth":
            return model  # Unsloth applies it with the adapters (see Adapter)
        model.config.use_cache = False
        if level == "off":
            return model
        from transformers.modeling_layers import GradientCheckpointingLayer

        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        layers = [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer) and m.gradient_checkpointing]
        if level == "offload":
            for layer in layers:
                layer._gradient_checkpointing_func = _offloading_checkpoint
            plan.records["checkpointing"]["offloaded_modules"] = len(layers)
        plan.records["checkpointing"]["checkpointed_modules"] = len(layers)
        return model
