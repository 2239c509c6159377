"""The GPUs of this machine a cell may be given, each as CUDA_VISIBLE_DEVICES names it.

Found without starting CUDA (the supervisor that leases a device never touches it, harness/process/supervisor.py): the
entries of CUDA_VISIBLE_DEVICES where it is set, else every GPU NVML counts. Each is keyed by its UUID where NVML
tells it, so that two jobs a cluster gave different GPUs, each seeing its own as device 0, never wait for each
other. VRAMLAB_DEVICES=0,1,2,3 names the list instead (tests give a machine without a GPU four fake ones; an
empty value turns leasing off).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEVICES_ENV = "VRAMLAB_DEVICES"


@dataclass(frozen=True)
class Device:
    entry: str  # what CUDA_VISIBLE_DEVICES takes to give a process this device: an index or a UUID
    index: int | None  # the index nvidia-smi gives it, where known
    key: str  # what its lease files are named by: the GPU's UUID where NVML tells it, else the entry

    @property
    def file_key(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", self.key)


def _entries(text: str) -> list[str]:
    return [entry.strip() for entry in text.split(",") if entry.strip()]


def machine_devices(env: Mapping[str, str] | None = None) -> list[Device]:
    env = os.environ if env is None else env
    if DEVICES_ENV in env:
        return [Device(e, int(e) if e.isdigit() else None, e) for e in _entries(env[DEVICES_ENV])]
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and _entries(visible) in ([], ["-1"]):
        return []
    if not Path("/proc/driver/nvidia/version").is_file():
        return []
    return _nvml_devices(_entries(visible) if visible is not None else None)


def _nvml_devices(entries: list[str] | None) -> list[Device]:
    """The devices NVML knows, in CUDA_VISIBLE_DEVICES' order where it is set; entries as given where NVML cannot
    say more."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return [Device(e, int(e) if e.isdigit() else None, e) for e in entries or []]
    try:
        if entries is None:
            entries = [str(i) for i in range(pynvml.nvmlDeviceGetCount())]
        return [_described(pynvml, entry) for entry in entries]
    finally:
        pynvml.nvmlShutdown()


def _described(pynvml: Any, entry: str) -> Device:
    try:
        handle = (pynvml.nvmlDeviceGetHandleByIndex(int(entry)) if entry.isdigit()
                  else pynvml.nvmlDeviceGetHandleByUUID(entry))
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        return Device(entry, int(pynvml.nvmlDeviceGetIndex(handle)), uuid.decode() if isinstance(uuid, bytes) else uuid)
    except Exception:  # a MIG instance or an entry NVML does not resolve: the entry is all that is known
        return Device(entry, int(entry) if entry.isdigit() else None, entry)
