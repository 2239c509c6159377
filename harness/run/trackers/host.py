"""Host memory, where offloaded activations and paged optimizer state go.

The resident set also counts the memory-mapped checkpoint (16 GB for an 8B model in bf16), which hides
those, so two more views are kept: the resident memory not backed by a file (anonymous and shared), and
the pinned memory held by PyTorch's host allocator, which holds offloaded activations and need not be
resident.
"""

from __future__ import annotations

from typing import Any

import psutil

from harness.run.trackers.base import Tracker
from harness.run.trackers.memory import high_water_mark_bytes

_STATUS = "/proc/self/status"


def host_unmapped_bytes() -> int | None:
    """Resident memory not backed by a file (RssAnon + RssShmem), or None where /proc does not say."""
    try:
        with open(_STATUS) as status:
            fields = dict(line.split(":", 1) for line in status if line.startswith(("RssAnon", "RssShmem")))
    except OSError:
        return None
    if len(fields) < 2:
        return None
    return sum(int(value.split()[0]) for value in fields.values()) * 1024  # reported in kB


def pinned_peak_bytes() -> int | None:
    """Peak of pinned host memory owned by PyTorch's host allocator since its last reset."""
    import torch

    stats = getattr(torch.cuda, "host_memory_stats", None)
    try:  # a statistic must never cost the cell its result
        return stats().get("allocated_bytes.peak") if stats else None
    except RuntimeError:
        return None


def reset_pinned_peak() -> None:
    import torch

    reset = getattr(torch.cuda, "reset_peak_host_memory_stats", None)
    if reset:
        reset()


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


class HostMemoryTracker(Tracker):
    name = "host_memory"
    samples = True

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        self.process = psutil.Process()
        self.total: dict[str, int | None] = {"peak_host_bytes": 0, "peak_host_unmapped_bytes": None,
                                             "peak_host_pinned_bytes": None}
        self.phases: dict[str, dict[str, int | None]] = {}
        self._current: dict[str, int | None] | None = None

    def sample(self) -> None:
        host = self.process.memory_info().rss
        unmapped = host_unmapped_bytes()
        for peaks in (self.total, self._current):
            if peaks is not None:
                peaks["peak_host_bytes"] = max(peaks["peak_host_bytes"] or 0, host)
                peaks["peak_host_unmapped_bytes"] = _max(peaks["peak_host_unmapped_bytes"], unmapped)

    def phase_started(self, phase: str) -> None:
        if self.cuda:
            reset_pinned_peak()
        self._current = self.phases[phase] = {"peak_host_bytes": 0, "peak_host_unmapped_bytes": None,
                                              "peak_host_pinned_bytes": None}

    def phase_ended(self, phase: str) -> None:
        current, self._current = self.phases[phase], None
        if self.cuda:
            current["peak_host_pinned_bytes"] = pinned_peak_bytes()
            self.total["peak_host_pinned_bytes"] = _max(self.total["peak_host_pinned_bytes"],
                                                        current["peak_host_pinned_bytes"])

    def stopped(self) -> None:
        self.total["peak_host_bytes"] = max(self.total["peak_host_bytes"] or 0, high_water_mark_bytes())

    def report(self, metrics: dict[str, Any]) -> None:
        metrics.update(self.total)
        for phase, peaks in self.phases.items():
            metrics["phases"].setdefault(phase, {}).update(peaks)
