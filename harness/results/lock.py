"""One process at a time makes a given result file: a lock per cell, held by the process that runs it.

Two runs on one results folder (two `snakemake` runs, which the workflow allows with `nolock`, or a `vramlab
run-cell` by hand beside one) would otherwise train the same cell at the same time, each slowing the other,
and both write its result. The lock is an fcntl lock on results/<matrix>/.locks/<cell_id>.json.lock: the kernel
drops it when its process ends, however it ends, so a killed run leaves nothing to clear by hand (the lock file
itself stays, empty of meaning, and is reused). A second process waits for the first, says so, and then finds
the cell measured.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.core.atomic_files import file_mode
from harness.results.model import now

LOCKS = ".locks"


def lock_path(out: Path) -> Path:
    return Path(out).parent / LOCKS / f"{Path(out).name}.lock"


@contextlib.contextmanager
def result_lock(out: Path, waiting: Callable[[str, Path], None] | None = None) -> Iterator[bool]:
    """Hold the lock of result file `out` for the block; yields whether another process held it first (this one
    then waited for it to end). `waiting` is told who holds it (as that process wrote it) before the wait."""
    path = lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, file_mode())
    try:
        waited = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 500, 0).decode("utf-8", "replace").strip() or "another process"
            if waiting is not None:
                waiting(holder, path)
            fcntl.flock(fd, fcntl.LOCK_EX)
            waited = True
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {now()}\n".encode(), 0)
        yield waited
    finally:
        os.close(fd)  # the lock goes with the last descriptor of it
