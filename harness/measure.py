"""Trackers, used as context managers around the phases of a cell (load, train).

Memory has three views, all recorded because they differ in ways that decide whether a run fits:
- the PyTorch allocator's peaks (allocated, reserved): what `max_memory_*` report;
- the whole process's device memory, sampled through NVML: adds the CUDA context, cuBLAS workspaces
  and bitsandbytes' paged (unified-memory) optimizer state, none of which the allocator sees. A real
  16 GB card fails on this number. On a CPU run it is the process's resident set.
- the host's resident set, where offloaded activations and paged optimizer state go. The resident set
  also counts the memory-mapped checkpoint (16 GB for an 8B model in bf16), which hides those, so two
  more views are kept: the resident memory not backed by a file (anonymous and shared), and the pinned
  memory held by PyTorch's host allocator, which holds offloaded activations and need not be resident.
"""

from __future__ import annotations

import contextlib
import os
import resource
import statistics
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psutil

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


class DeviceMemoryProbe:
    """Reads this process's device memory through NVML.

    NVML lists the processes using a GPU with their memory; where the process cannot be found there
    (a PID namespace hides it), the device's used memory minus what was in use before this process
    touched CUDA is taken instead, and the method says so.
    """

    def __init__(self, device_index: int = 0) -> None:
        import pynvml

        self._nvml = pynvml
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        self.baseline = pynvml.nvmlDeviceGetMemoryInfo(self.handle).used
        self.total = pynvml.nvmlDeviceGetMemoryInfo(self.handle).total
        self.pid = os.getpid()
        self.method = "nvml-process"

    def read(self) -> int:
        try:
            for proc in self._nvml.nvmlDeviceGetComputeRunningProcesses(self.handle):
                if proc.pid == self.pid and proc.usedGpuMemory is not None:
                    self.method = "nvml-process"
                    return int(proc.usedGpuMemory)
        except self._nvml.NVMLError:
            pass
        self.method = "nvml-device-minus-baseline"
        return max(0, self._nvml.nvmlDeviceGetMemoryInfo(self.handle).used - self.baseline)

    def driver(self) -> str:
        return self._nvml.nvmlSystemGetDriverVersion()


@dataclass
class PhasePeaks:
    device: int = 0
    host: int = 0
    host_unmapped: int | None = None
    host_pinned: int | None = None
    allocated: int | None = None
    reserved: int | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"peak_device_bytes": self.device, "peak_host_bytes": self.host,
                "peak_host_unmapped_bytes": self.host_unmapped, "peak_host_pinned_bytes": self.host_pinned,
                "peak_allocated_bytes": self.allocated, "peak_reserved_bytes": self.reserved,
                "seconds": self.seconds}


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


class MemoryTracker:
    """Samples device and host memory on a thread every `interval` seconds; keeps whole-run and
    per-phase peaks. Sampling cannot see a spike shorter than the interval; on CUDA the allocator
    peaks (exact) bound that error from below, on the CPU the kernel's own high-water mark does."""

    def __init__(self, probe: DeviceMemoryProbe | None, cuda: bool, interval: float = 0.01,
                 observer: Callable[[int, int], None] | None = None) -> None:
        self.probe, self.cuda, self.interval, self.observer = probe, cuda, interval, observer
        self.process = psutil.Process()
        self.total = PhasePeaks()
        self.phases: dict[str, PhasePeaks] = {}
        self._current: PhasePeaks | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="vramlab-memory")
        self.samples = 0

    def _sample(self) -> None:
        host = self.process.memory_info().rss
        unmapped = host_unmapped_bytes()
        if self.observer is not None and self.cuda:
            import torch

            # reserved read on both sides of the device read: taking the larger never overstates what
            # lives outside the allocator when the cache is being released meanwhile
            before = torch.cuda.memory_reserved()
            device = self.probe.read()
            self.observer(device, max(before, torch.cuda.memory_reserved()))
        else:
            device = self.probe.read() if self.probe else host
        self.samples += 1
        for peaks in (self.total, self._current):
            if peaks is not None:
                peaks.host = max(peaks.host, host)
                peaks.host_unmapped = _max(peaks.host_unmapped, unmapped)
                peaks.device = max(peaks.device, device)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> MemoryTracker:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self._fold_high_water_mark(self.total)

    def _fold_high_water_mark(self, peaks: PhasePeaks) -> None:
        # ru_maxrss is the kernel's exact peak for the whole process so far (KiB on Linux)
        hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        peaks.host = max(peaks.host, hwm) if peaks is self.total else peaks.host
        if self.probe is None and peaks is self.total:
            peaks.device = max(peaks.device, hwm)

    @contextmanager
    def phase(self, name: str):
        import torch

        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            reset_pinned_peak()
        peaks = PhasePeaks()
        self._current = peaks
        self._sample()
        start = time.perf_counter()
        try:
            yield peaks
        finally:
            if self.cuda:
                # after an OOM the device may still be busy; the peaks are still wanted
                with contextlib.suppress(RuntimeError):
                    torch.cuda.synchronize()
                peaks.allocated = torch.cuda.max_memory_allocated()
                peaks.reserved = torch.cuda.max_memory_reserved()
                self.total.allocated = max(self.total.allocated or 0, peaks.allocated)
                self.total.reserved = max(self.total.reserved or 0, peaks.reserved)
                peaks.host_pinned = pinned_peak_bytes()
                self.total.host_pinned = _max(self.total.host_pinned, peaks.host_pinned)
            self._sample()
            peaks.seconds = time.perf_counter() - start
            self.phases[name] = peaks
            self._current = None


@dataclass
class StepRecord:
    seconds: list[float] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)


def summarize_steps(step_seconds: list[float], warmup: int, tokens_per_step: int) -> dict[str, Any]:
    """Timings over the measured (post warm-up) optimizer steps."""
    measured = step_seconds[warmup:]
    if not measured:
        return {"measured_steps": 0, "median_step_seconds": None, "tokens_per_second": None}
    median = statistics.median(measured)
    return {
        "measured_steps": len(measured),
        "tokens_per_step": tokens_per_step,
        "median_step_seconds": median,
        "min_step_seconds": min(measured),
        "max_step_seconds": max(measured),
        # the spread, as the interquartile range where there are enough steps to have one
        "step_seconds_iqr": (statistics.quantiles(measured, n=4)[2] - statistics.quantiles(measured, n=4)[0])
        if len(measured) >= 4 else max(measured) - min(measured),
        "tokens_per_second": tokens_per_step / median,
        "tokens_per_second_mean": tokens_per_step * len(measured) / sum(measured),
    }
