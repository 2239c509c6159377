"""Activation checkpointing: off, on (non-reentrant), or offload.

`offload` is checkpointing whose saved layer inputs go to pinned host memory and come back for the
backward pass, which is what Unsloth's "unsloth" mode does; on the transformers path it is
OffloadedCheckpoint below.
"""

from __future__ import annotations

from typing import Any

from harness.techniques.base import Plan, Technique

UNSLOTH_MODES = {"off": False, "on": True, "offload": "unsloth"}


class OffloadedCheckpoint:
    """Checkpointing whose only saved tensor, the layer input, waits in pinned host memory.

    Forward: copy the input to the host, run the layer without building a graph. Backward: bring the
    input back, run the layer again with a graph (under the autocast state of the forward) and
    backpropagate through it. Only one layer's activations exist on the device at a time, and none
    between layers, which is what Unsloth's "unsloth" mode does. torch's own checkpoint cannot be
    combined with `save_on_cpu` for this: it keeps the layer inputs referenced on the device.
    Dropout inside the layer would draw new random numbers on recomputation; LoRA cells use none.
    """

    @staticmethod
    def make():
        import torch

        class _Offloaded(torch.autograd.Function):
            @staticmethod
            def forward(ctx, function, hidden_states, *rest):
                ctx.function, ctx.rest, ctx.device = function, rest, hidden_states.device
                ctx.autocast = (torch.is_autocast_enabled(ctx.device.type),
                                torch.get_autocast_dtype(ctx.device.type))
                host = torch.empty(hidden_states.shape, dtype=hidden_states.dtype, device="cpu",
                                   pin_memory=hidden_states.is_cuda)
                host.copy_(hidden_states, non_blocking=True)
                ctx.host = host
                with torch.no_grad():
                    return function(hidden_states, *rest)

            @staticmethod
            def backward(ctx, *grads):
                hidden = ctx.host.to(ctx.device, non_blocking=True).detach().requires_grad_(True)
                enabled, dtype = ctx.autocast
                with torch.enable_grad(), torch.autocast(ctx.device.type, dtype=dtype, enabled=enabled):
                    outputs = ctx.function(hidden, *ctx.rest)
                outputs = outputs if isinstance(outputs, tuple) else (outputs,)
                pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                         if g is not None and isinstance(o, torch.Tensor) and o.requires_grad]
                torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
                ctx.host = None
                return (None, hidden.grad, *([None] * len(ctx.rest)))

        def checkpoint(function, hidden_states, *rest, **kwargs):
            return _Offloaded.apply(function, hidden_states, *rest)

        return checkpoint


class Checkpointing(Technique):
    axis = "checkpointing"
    _installed: CountedCheckpoint | None = None  # set when the transformers path checkpoints layers

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
        function = layers[0]._gradient_checkpointing_func if layers else None
        if level == "offload":
            # the offloading function is re-entrant style: autograd calls its backward only if the
            # first layer's input requires a gradient, so make the embedding output require one
            model.enable_input_require_grads()
            function = OffloadedCheckpoint.make()
            plan.records["checkpointing"]["offloaded_modules"] = len(layers)
        self._installed = CountedCheckpoint(function)
        for layer in layers:
            layer._gradient_checkpointing_func = self._installed
        self._layers = layers
        plan.records["checkpointing"]["checkpointed_modules"] = len(layers)
        return model

    def after_train(self, model: Any, plan: Plan) -> None:
        if plan.loader == "unsloth":
            return
        # evidence of what ran: the trainer must not have turned checkpointing on over `off`, nor
        # replaced the function installed here (TRL's defaults once did both)
        record = plan.records["checkpointing"]
        record["active_after_train"] = bool(getattr(model, "is_gradient_checkpointing", False))
        if self._installed is not None:
            record["checkpointed_calls"] = self._installed.calls
            record["function_kept"] = all(layer._gradient_checkpointing_func is self._installed
                                          for layer in self._layers)


class CountedCheckpoint:
    """The checkpoint function given to every layer, counting its calls: evidence that it ran."""

    def __init__(self, function: Any) -> None:
        self.function, self.calls = function, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.function(*args, **kwargs)
