"""While a budgeted cell runs on a larger GPU, torch answers what programs ask a card as the emulated card would.

The budget caps PyTorch's allocator (harness/budget.py), but libraries also ask the device how much memory it has
and how much is free, and decide on the answer. Read in the versions the GPU results ran with:
- unsloth_zoo 2026.10.9 gradient_checkpointing.py: offloaded checkpointing keeps a second staging buffer from the
  second step on when `torch.cuda.mem_get_info` says more than 512 MiB are free (DOUBLE_BUFFER_HEADROOM);
- unsloth_zoo tiled_mlp.py `_default_target_gb` (half the free memory) sizes the tiled MLP's tiles and the fused
  log-prob and cross-entropy chunks (fused_losses/), and fused_linear.py takes another route for a card of at most
  24.5 GiB (`get_device_properties(...).total_memory`);
- unsloth/models/_utils.py `usable_cuda_bytes`: free + reserved - allocated, within total x the per-process
  fraction, decides whether the input embedding leaves the device;
- transformers 5.17 `caching_allocator_warmup` reserves at most total - 1.2 GiB ahead of loading.
On an H200 they all saw about 140 GiB. From here on, for as long as the cell runs:
- `get_device_properties(i).total_memory` and mem_get_info's total are the card's memory: a card budget's as
  nvidia-smi reports it (harness/cards.py, the driver's reservation included, as cudaMemGetInfo counts it), a
  size's the size;
- mem_get_info's free is the budget less what this process holds: the allocator's reservation, the memory outside
  it that the budget accounts (CUDA context, workspaces, kernel modules) and the paged optimizer state it takes
  off the cap; never more than the real device has free;
- `get_per_process_memory_fraction` is the allocator cap as a share of that total, so total x fraction is still
  the cap (what a library that combines them, as Unsloth does, must get).
What it cannot reach: calls from C++ or straight to the CUDA runtime or NVML, and a reference to the function a
library took before the cell started. VRAMLAB_EMULATE_CARD=0 turns it off (to measure one commit with and
without it); the result's `budget.card_emulation` says whether it was on and how often each answer was asked.
"""

from __future__ import annotations

import os
from typing import Any

ENV = "VRAMLAB_EMULATE_CARD"
# (module under torch.cuda, function): torch.cuda re-exports torch.cuda.memory's functions, and a library may
# call either name
PATCHED = (("torch.cuda", "mem_get_info"), ("torch.cuda.memory", "mem_get_info"),
           ("torch.cuda", "get_device_properties"),
           ("torch.cuda", "get_per_process_memory_fraction"), ("torch.cuda.memory", "get_per_process_memory_fraction"))


def switched_off() -> str | None:
    """Why the emulation is off by request, or None."""
    return f"{ENV}={os.environ[ENV]}" if os.environ.get(ENV, "1").strip() in ("0", "false", "no", "off") else None


class CardProperties:
    """The device's properties with the emulated card's total memory; every other property is the device's."""

    def __init__(self, real: Any, total_memory: int) -> None:
        self._real = real
        self.total_memory = total_memory

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __repr__(self) -> str:
        return f"{self._real!r} (answered as an emulated card of total_memory={self.total_memory})"


class CardEmulation:
    """Installed over torch.cuda for one cell. `held_outside` gives the bytes the budget accounts outside the
    allocator at this moment (outside memory and the paged optimizer state); `cap` the allocator cap."""

    def __init__(self, total_bytes: int, limit_bytes: int, held_outside: Any, cap: Any) -> None:
        self.total_bytes = total_bytes
        self.limit_bytes = limit_bytes
        self.held_outside = held_outside
        self.cap = cap
        self.calls = {name: 0 for _, name in PATCHED}
        self.lowest_free_bytes: int | None = None
        self._originals: dict[tuple[str, str], Any] = {}

    # --- the answers ------------------------------------------------------------------------------------------

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        import torch

        self.calls["mem_get_info"] += 1
        real_free, _ = self._original("torch.cuda.memory", "mem_get_info")(device)
        held = torch.cuda.memory_reserved(device) + self.held_outside()
        free = max(0, min(int(real_free), self.limit_bytes - held))
        self.lowest_free_bytes = free if self.lowest_free_bytes is None else min(self.lowest_free_bytes, free)
        return free, self.total_bytes

    def get_device_properties(self, device: Any = None) -> CardProperties:
        self.calls["get_device_properties"] += 1
        real = self._original("torch.cuda", "get_device_properties")
        return CardProperties(real(device) if device is not None else real(), self.total_bytes)

    def get_per_process_memory_fraction(self, device: Any = None) -> float:
        self.calls["get_per_process_memory_fraction"] += 1
        cap = self.cap()
        return 1.0 if cap is None else min(1.0, cap / self.total_bytes)

    # --- installing -------------------------------------------------------------------------------------------

    def install(self) -> None:
        import importlib

        for module_name, name in PATCHED:
            module = importlib.import_module(module_name)
            if hasattr(module, name) and (module_name, name) not in self._originals:
                self._originals[(module_name, name)] = getattr(module, name)
                setattr(module, name, getattr(self, name))

    def uninstall(self) -> None:
        import importlib

        for (module_name, name), original in self._originals.items():
            module = importlib.import_module(module_name)
            if getattr(module, name, None) == getattr(self, name):  # not replaced again by someone else since
                setattr(module, name, original)
        self._originals.clear()

    @property
    def installed(self) -> bool:
        return bool(self._originals)

    def _original(self, module_name: str, name: str) -> Any:
        found = self._originals.get((module_name, name)) or self._originals.get(("torch.cuda", name))
        if found is None:
            import importlib

            found = getattr(importlib.import_module(module_name), name)
        return found

    def record(self) -> dict[str, Any]:
        return {"on": True, "total_bytes": self.total_bytes, "calls": dict(self.calls),
                "lowest_free_bytes": self.lowest_free_bytes}


def not_emulated(why: str) -> dict[str, Any]:
    return {"on": False, "why_not": why}
