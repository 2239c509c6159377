"""Checkpoint functions the Hugging Face path installs into each decoder layer.

`offload` is checkpointing whose saved layer inputs go to pinned host memory and come back for the
backward pass, which is what Unsloth's "unsloth" mode does on its own path; every installed function is
wrapped in a counter, so a result can show how many layer calls really went through it.
"""

from __future__ import annotations

from typing import Any


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


class CountedCheckpoint:
    """The checkpoint function given to every layer, counting its calls: evidence that it ran."""

    def __init__(self, function: Any) -> None:
        self.function, self.calls = function, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.function(*args, **kwargs)
