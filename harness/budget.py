"""A memory budget that behaves like a real card of that size.

On a GPU larger than the budget, PyTorch's allocator is capped at the budget minus what lives outside
the allocator (the CUDA context and libraries' workspaces and kernel modules, measured at start and
again at every memory sample, and bitsandbytes' paged optimizer state once the trainable parameters
are known), and the whole process's device memory is sampled through NVML. A cell
is `ok` only when that sampled peak stays within the budget, since a real card fails on that number,
not on the allocator's.

On a CPU there is no allocator to cap; the budget is judged against the process's peak resident set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.settings import parse_bytes

GIB = 2**30


@dataclass
class Budget:
    limit_bytes: int
    cuda: bool
    outside_allocator_bytes: int = 0
    paged_optimizer_bytes: int = 0
    allocator_cap_bytes: int | None = None
    device_total_bytes: int | None = None
    notes: list[str] = field(default_factory=list)
    recaps: int = 0
    RECAP_STEP = 16 * 2**20

    @classmethod
    def from_setting(cls, text: str, cuda: bool) -> Budget:
        return cls(limit_bytes=parse_bytes(text), cuda=cuda)

    def apply(self, outside_bytes: int) -> None:
        """Cap the allocator; `outside_bytes` is the device memory outside it right after CUDA init."""
        if not self.cuda:
            return
        import torch

        self.device_total_bytes = torch.cuda.get_device_properties(0).total_memory
        self.outside_allocator_bytes = outside_bytes
        self._set_cap()

    def observe(self, device_bytes: int, reserved_bytes: int) -> None:
        """Called with every memory sample: memory outside the allocator grows after start (CUDA loads
        kernel modules lazily, cuBLAS and cuDNN make workspaces, Triton kernels load); lower the cap
        as it does, so that allocator plus outside stays within the budget as on a real card."""
        outside = device_bytes - reserved_bytes
        if outside > self.outside_allocator_bytes + self.RECAP_STEP:
            self.outside_allocator_bytes = outside
            self.recaps += 1
            self._set_cap()

    def _set_cap(self) -> None:
        import torch

        cap = self.limit_bytes - self.outside_allocator_bytes - self.paged_optimizer_bytes
        if cap <= 0:
            raise ValueError(f"budget {self.limit_bytes} bytes leaves nothing for the allocator")
        if cap >= self.device_total_bytes:
            self.notes.append("budget exceeds the device: the allocator is not capped")
            self.allocator_cap_bytes = None
            return
        self.allocator_cap_bytes = cap
        torch.cuda.set_per_process_memory_fraction(cap / self.device_total_bytes)

    def account_for_paged_optimizer(self, plan: Any, model: Any) -> None:
        """8-bit paged AdamW keeps two 1-byte states per trainable parameter in unified memory,
        outside the allocator; lower the cap by that much."""
        if not self.cuda or not plan.records.get("optimizer", {}).get("paged"):
            return
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        self.paged_optimizer_bytes = 2 * trainable
        self._set_cap()

    def judge(self, peak_device_bytes: int) -> str | None:
        """Why the cell did not fit, or None."""
        if peak_device_bytes > self.limit_bytes:
            where = "device memory of the whole process" if self.cuda else "resident set of the process"
            return (f"the {where} peaked at {peak_device_bytes / GIB:.2f} GiB, over the "
                    f"{self.limit_bytes / GIB:.2f} GiB budget")
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"limit_bytes": self.limit_bytes, "allocator_cap_bytes": self.allocator_cap_bytes,
                "outside_allocator_bytes": self.outside_allocator_bytes,
                "paged_optimizer_bytes": self.paged_optimizer_bytes, "recaps": self.recaps,
                "device_total_bytes": self.device_total_bytes,
                "judged_on": "nvml process device memory" if self.cuda else "peak resident set",
                "notes": self.notes}
