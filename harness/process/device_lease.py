"""A lease per device: a cell holds one while it runs, so that two cells never share a card unless told to.

The supervisor (`vramlab run-cell`) takes a lease on one of the machine's devices (harness/core/devices.py): a file
lock per device slot, first slots first. It starts the measuring process on that device alone and hands it the
lease to record (harness/run/worker_status.py, `recorded_lease`). Why it is so: docs/measurement.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core import environment_variables
from harness.core.devices import Device, machine_devices
from harness.core.file_locks import try_lock_file
from harness.core.path_problems import naming
from harness.run.worker_status import LEASE_ENV

POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Lease:
    device: Device
    slot: int
    slots: int
    devices: tuple[str, ...]
    waited_seconds: float

    def record(self) -> dict[str, Any]:
        """What the result keeps (harness/results/model.py, DeviceLeaseRecord)."""
        return {"device": self.device.entry, "index": self.device.index, "slot": self.slot, "slots": self.slots,
                "devices": list(self.devices), "waited_seconds": round(self.waited_seconds, 3)}

    def env(self) -> dict[str, str]:
        """The measuring process's environment: that device alone, and the lease to record."""
        return {"CUDA_VISIBLE_DEVICES": self.device.entry, LEASE_ENV: json.dumps(self.record())}


def leases_folder() -> Path:
    """One folder per user and machine, so that every run there sees the same leases; $VRAMLAB_LEASES names another
    (checked with every VRAMLAB_* variable, harness/core/environment_variables.py)."""
    return (environment_variables.leases_folder()
            or Path(tempfile.gettempdir()) / f"vramlab-{os.getuid()}" / "device-leases")


def slots_wanted(given: int | None = None) -> int:
    """Cells that may share one device: `given` (--device-slots), else $VRAMLAB_DEVICE_SLOTS, else 1."""
    if given is None:
        return environment_variables.device_slots()
    if given < 1:
        raise ValueError(f"cells per device must be at least 1, got {given}")
    problem = environment_variables.device_slots_problem(given)
    if problem:
        raise ValueError(problem)
    return given


def _try_lock(path: Path) -> int | None:
    fd = try_lock_file(path)
    if fd is None:
        return None
    with naming(path):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
    return fd


def _holders(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.glob("*.lock")):
        with contextlib.suppress(OSError):
            text = path.read_text().strip()
            if text:
                found.append(f"{path.stem}: {text}")
    return found


@contextlib.contextmanager
def device_lease(devices: list[Device], slots: int = 1, folder: Path | None = None,
                 waiting: Callable[[list[str]], None] | None = None) -> Iterator[Lease]:
    """Hold one slot of one of `devices` for the block: the first free slot, lowest slot number first, so that
    cells spread over the devices before any shares one. Waits while every slot is held (`waiting` is told the
    holders once)."""
    folder = folder or leases_folder()
    folder.mkdir(parents=True, exist_ok=True)
    started, told = time.monotonic(), False
    while True:
        for slot in range(slots):
            for device in devices:
                fd = _try_lock(folder / f"{device.file_key}.slot{slot}.lock")
                if fd is None:
                    continue
                try:
                    yield Lease(device, slot, slots, tuple(d.entry for d in devices), time.monotonic() - started)
                finally:
                    os.close(fd)  # the lock goes with its descriptor
                return
        if waiting is not None and not told:
            waiting(_holders(folder))
            told = True
        time.sleep(POLL_SECONDS)


@contextlib.contextmanager
def cell_lease(settings: Mapping[str, Any], slots: int = 1,
               waiting: Callable[[list[str]], None] | None = None) -> Iterator[Lease | None]:
    """A lease for a cell that may use a GPU (its `device` is not 'cpu') on a machine that has some; None for the
    others, which run as they always did."""
    devices = machine_devices() if settings.get("device") != "cpu" else []
    if not devices:
        yield None
        return
    with device_lease(devices, slots, waiting=waiting) as lease:
        yield lease
