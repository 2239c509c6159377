"""Device memory, three ways, because they differ in ways that decide whether a run fits:
- the PyTorch allocator's peaks (allocated, reserved): what `max_memory_*` report, exact, per phase;
- the whole process's device memory, sampled through NVML: adds the CUDA context, cuBLAS workspaces
  and bitsandbytes' paged (unified-memory) optimizer state, none of which the allocator sees. A real
  16 GB card fails on this number. On a CPU run it is the process's resident set.
Sampling cannot see a spike shorter than the interval; on CUDA the allocator peaks (exact) bound that
error from below, on the CPU the kernel's own high-water mark does.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Callable
from typing import Any

import psutil

from harness.core.device_memory import DeviceMemoryProbe
from harness.run.trackers.base import Tracker


def reserved_bytes(torch: Any) -> int:
    """torch.cuda.memory_reserved() without flattening all of the allocator's statistics into one dict in
    Python first, which it does on every call: this runs 100 times a second beside the cell, holding the GIL."""
    return int(torch.cuda.memory_stats_as_nested_dict().get("reserved_bytes", {}).get("all", {}).get("current", 0))


def high_water_mark_bytes() -> int:
    """The kernel's exact peak resident set of this process so far (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class DeviceMemoryTracker(Tracker):
    name = "device_memory"
    samples = True

    def __init__(self, probe: DeviceMemoryProbe | None, cuda: bool,
                 observer: Callable[[int, int], None] | None = None) -> None:
        self.probe, self.cuda, self.observer = probe, cuda, observer
        self.process = psutil.Process()
        self.peak = 0
        self.allocated: int | None = None
        self.reserved: int | None = None
        self.phases: dict[str, dict[str, int | None]] = {}
        self._current: dict[str, int | None] | None = None

    def sample(self) -> None:
        if self.cuda and self.probe is not None:
            import torch

            # reserved read on both sides of the device read: taking the larger never overstates what
            # lives outside the allocator when the cache is being released meanwhile
            before = reserved_bytes(torch)
            device = self.probe.read()
            if self.observer is not None:
                self.observer(device, max(before, reserved_bytes(torch)))
        else:
            device = self.process.memory_info().rss
        self.peak = max(self.peak, device)
        current = self._current
        if current is not None:
            current["peak_device_bytes"] = max(current["peak_device_bytes"] or 0, device)

    def phase_started(self, phase: str) -> None:
        if self.cuda:
            import torch

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        self._current = self.phases[phase] = {"peak_device_bytes": 0, "peak_allocated_bytes": None,
                                              "peak_reserved_bytes": None}

    def phase_ended(self, phase: str) -> None:
        current, self._current = self.phases[phase], None
        if not self.cuda:
            return
        import torch

        # after an OOM the device may still be busy; the peaks are still wanted
        with contextlib.suppress(RuntimeError):
            torch.cuda.synchronize()
        current["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        current["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
        self.allocated = max(self.allocated or 0, current["peak_allocated_bytes"])
        self.reserved = max(self.reserved or 0, current["peak_reserved_bytes"])

    def stopped(self) -> None:
        if not self.cuda:
            self.peak = max(self.peak, high_water_mark_bytes())

    def report(self, metrics: dict[str, Any]) -> None:
        metrics.update(peak_device_bytes=self.peak, peak_allocated_bytes=self.allocated,
                       peak_reserved_bytes=self.reserved)
        for phase, peaks in self.phases.items():
            metrics["phases"].setdefault(phase, {}).update(peaks)
