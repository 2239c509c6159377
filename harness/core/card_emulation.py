"""While a budgeted cell runs on a larger GPU, torch answers what programs ask a card as the emulated card would:
`mem_get_info`, `get_device_properties(i).total_memory` and `get_per_process_memory_fraction`, installed over
torch.cuda by the budget (harness/core/budget.py) while the allocator is capped. VRAMLAB_EMULATE_CARD=0 turns it
off; the result's `budget.card_emulation` says whether it was on. Which libraries ask, and what it cannot reach:
docs/measurement.md.
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
    return f"{ENV}={os.environ[ENV]}" if os.environ.get(ENV) == "0" else None  # any other value is refused first


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
