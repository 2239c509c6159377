"""This process's whole device memory, read through NVML: what a real card fails on (the CUDA context, cuBLAS's
workspaces and bitsandbytes' paged optimizer state included, none of which the allocator sees). Read by the
measuring process's tracker (harness/run/trackers/memory.py) and by the budget both training and evaluation apply
(harness/core/device_cap.py)."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import psutil


def nvml_handle(pynvml: Any, device_index: int) -> Any:
    """NVML's handle of the GPU that CUDA calls `device_index`. NVML numbers every GPU of the machine and
    ignores CUDA_VISIBLE_DEVICES, so a process given the second GPU of two (CUDA_VISIBLE_DEVICES=1) would
    otherwise read the first one's processes; the variable names GPUs by index or by UUID."""
    visible = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    if not visible:
        return pynvml.nvmlDeviceGetHandleByIndex(device_index)
    entry = visible[device_index]
    if entry.isdigit():
        return pynvml.nvmlDeviceGetHandleByIndex(int(entry))
    return pynvml.nvmlDeviceGetHandleByUUID(entry)


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
        self.handle = nvml_handle(pynvml, device_index)
        self.baseline = pynvml.nvmlDeviceGetMemoryInfo(self.handle).used
        self.total = pynvml.nvmlDeviceGetMemoryInfo(self.handle).total
        self.pid = os.getpid()
        self.method = "nvml-process"
        self.others: set[int] = set()  # other processes seen computing on this GPU while this one did

    def read(self) -> int:
        try:
            procs = list(self._nvml.nvmlDeviceGetComputeRunningProcesses(self.handle))
            for proc in procs:
                if proc.pid == self.pid and proc.usedGpuMemory is not None:
                    self.method = "nvml-process"
                    self._note_others({p.pid for p in procs} - {self.pid})
                    return int(proc.usedGpuMemory)
        except self._nvml.NVMLError:
            pass
        self.method = "nvml-device-minus-baseline"
        return max(0, self._nvml.nvmlDeviceGetMemoryInfo(self.handle).used - self.baseline)

    def _note_others(self, pids: set[int]) -> None:
        """Remember the processes beside this one on the GPU, but not this process's own children. Only called
        where NVML lists this process itself, so its pids are this namespace's (in a container that hides them,
        nothing can be told and nothing is noted)."""
        for pid in pids - self.others:
            with contextlib.suppress(psutil.Error):
                if any(parent.pid == self.pid for parent in psutil.Process(pid).parents()):
                    continue
            self.others.add(pid)

    def driver(self) -> str:
        return self._nvml.nvmlSystemGetDriverVersion()
