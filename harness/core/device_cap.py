"""The budget applied to this process's device, the same way for training a cell and for evaluating it:
CUDA started, cuBLAS's workspace made (both live outside the allocator), then the allocator capped so that
allocator plus what lies outside it stays within the budget."""

from __future__ import annotations

from typing import Any

from harness.core.budget import Budget
from harness.core.device_memory import DeviceMemoryProbe


def start_capped(settings: dict[str, Any]) -> tuple[DeviceMemoryProbe, Budget, int]:
    """(the probe, read before this process touched CUDA; the budget, not applied yet; the device memory outside
    the allocator right after start). The caller applies the budget once it has read what it needs of the
    device as itself (from then on torch answers as the emulated card)."""
    import torch

    probe = DeviceMemoryProbe()
    budget = Budget.from_settings(settings, cuda=True)
    torch.cuda.init()
    # a first matrix product loads cuBLAS and its workspace, which live outside the allocator
    warm = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
    (warm @ warm).sum().item()
    del warm
    return probe, budget, probe.read() - torch.cuda.memory_reserved()
