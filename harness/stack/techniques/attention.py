"""Attention implementation: eager, PyTorch SDPA, or FlashAttention-2.

FlashAttention-2 comes from the flash-attn package when it is installed; otherwise the cell asks SDPA
and restricts it to its FlashAttention-2 kernel (with the math kernel allowed as the only way out),
and the kernel that actually ran is recorded either way. That record comes from a probe: the first
attention call of training runs under the PyTorch profiler, which names the aten operator chosen
(`_scaled_dot_product_flash_attention`, `..._efficient_attention`, `..._cudnn_attention`, or the
math composite). A math kernel where a fused one was asked for is recorded as a fall-back, with the
input dtype that caused it.
"""

from __future__ import annotations

import contextlib
import importlib.util
from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique, require_cuda

KERNEL_BY_OP = {
    "flash_attention": "flash",
    "efficient_attention": "mem_efficient",
    "cudnn_attention": "cudnn",
    "attention_math": "math",
}


class SdpaProbe:
    """Wraps torch's scaled_dot_product_attention; profiles the first call to see which kernel ran."""

    def __init__(self) -> None:
        self.observed: dict[str, Any] | None = None
        self._original = None

    def install(self) -> None:
        import torch.nn.functional as F

        self._original = original = F.scaled_dot_product_attention

        def probed(query, key, value, *args, **kwargs):
            import torch

            # only the first call of training, and never inside a graph being compiled (Unsloth compiles)
            if self.observed is not None or torch.compiler.is_compiling() or not torch.is_grad_enabled():
                return original(query, key, value, *args, **kwargs)
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                out = original(query, key, value, *args, **kwargs)
            ops = [e.name for e in prof.events()]
            kernel = next((k for marker, k in KERNEL_BY_OP.items() for op in ops if marker in op), "unknown")
            self.observed = {"kernel": kernel, "dtype": str(query.dtype).replace("torch.", ""),
                             "shape": list(query.shape), "ops": sorted({o for o in ops if "attention" in o})}
            return out

        F.scaled_dot_product_attention = probed

    def uninstall(self) -> None:
        import torch.nn.functional as F

        if self._original is not None:
            F.scaled_dot_product_attention = self._original


class Attention(Technique):
    axis = "attention"
    settings = (Setting("attention", str, "sdpa", "attention implementation asked for",
                        levels=("eager", "sdpa", "flash_attention_2"), owner="attention"),)
    cuda_levels = ("flash_attention_2",)

    def __init__(self) -> None:
        self.probe = SdpaProbe()
        self._restriction: contextlib.AbstractContextManager | None = None

    def check(self, plan: Plan) -> None:
        if plan.level(self.axis) in self.cuda_levels:
            require_cuda(plan, "FlashAttention-2")

    def before_load(self, plan: Plan) -> None:
        level = plan.level(self.axis)
        record: dict[str, Any] = {"requested": level}
        if level == "flash_attention_2" and importlib.util.find_spec("flash_attn") is not None:
            implementation = "flash_attention_2"
            record["provider"] = "flash-attn package"
        elif level == "flash_attention_2":
            implementation = "sdpa"
            record["provider"] = "torch SDPA restricted to its FlashAttention-2 kernel (flash-attn not installed)"
            from torch.nn.attention import SDPBackend, sdpa_kernel

            # MATH stays allowed so that a refusal (fp32 inputs, odd head size) shows up as a recorded
            # fall-back rather than as a crash that hides which inputs caused it.
            self._restriction = sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True)
        else:
            implementation = level
            record["provider"] = {"eager": "transformers eager (matmul + softmax)", "sdpa": "torch SDPA"}[level]
        record["implementation"] = implementation
        note = plan.backend.attention_note()
        if note:
            record["note"] = note
        plan.records["attention"] = record
        plan.load.attention = implementation

    def before_train(self, model: Any, plan: Plan) -> None:
        if plan.backend.attention_through_sdpa(plan.records["attention"]["implementation"]):
            self.probe.install()
        if self._restriction is not None:
            self._restriction.__enter__()

    def after_train(self, model: Any, plan: Plan) -> None:
        if self._restriction is not None:
            self._restriction.__exit__(None, None, None)
        self.probe.uninstall()
        record = plan.records["attention"]
        if self.probe.observed:
            record.update({"kernel": self.probe.observed["kernel"], "probe": self.probe.observed})
            asked_fused = plan.level(self.axis) in ("sdpa", "flash_attention_2")
            if asked_fused and self.probe.observed["kernel"] == "math":
                record["fallback"] = (f"SDPA ran its math kernel (inputs {self.probe.observed['dtype']}): "
                                      "the score matrix was materialized")
        elif record["implementation"] == "eager":
            record["kernel"] = "eager"
        elif record["implementation"] == "flash_attention_2":
            record["kernel"] = "flash-attn"
        else:
            record["kernel"] = "not observed (the attention path does not call torch SDPA)"
