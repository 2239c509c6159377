"""One process at a time makes a given result file: a lock per cell, held by the process that runs it.

Two runs on one results folder (two `snakemake` runs, which the workflow allows with `nolock`, or a `vramlab
run-cell` by hand beside one) would otherwise train the same cell at the same time, each slowing the other,
and both write its result. The lock is a file lock on results/<matrix>/.locks/<cell_id>.json.lock (flock, or
POSIX record locks where the filesystem gives no flock: harness/core/file_locks.py): the kernel drops it when its
process ends, however it ends, so a killed run leaves nothing to clear by hand (a kill -9 leaves the file, empty
of meaning, and the next run reuses it). A run that ends any other way removes the file, and the .locks folder
where it is empty then. A second process waits for the first, says so, and then finds the cell measured.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.core.atomic_files import file_mode
from harness.core.file_locks import LocksUnsupported, lock_exclusive
from harness.core.made_folders import make_folders
from harness.core.path_problems import naming
from harness.results.model import now

LOCKS = ".locks"


def lock_path(out: Path) -> Path:
    return Path(out).parent / LOCKS / f"{Path(out).name}.lock"


@contextlib.contextmanager
def result_lock(out: Path, waiting: Callable[[str, Path], None] | None = None) -> Iterator[bool]:
    """Hold the lock of result file `out` for the block; yields whether another process held it first (this one
    then waited for it to end). `waiting` is told who holds it (as that process wrote it) before the wait."""
    path = lock_path(out)
    fd, waited = _acquire(path, waiting)
    try:
        with naming(path):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {now()}\n".encode(), 0)
        yield waited
    finally:
        _release(path, fd)


def _acquire(path: Path, waiting: Callable[[str, Path], None] | None) -> tuple[int, bool]:
    """A descriptor of the lock file at `path`, locked, and whether another process held it first. A holder removes
    the file as it leaves, so a lock taken on a file no longer at `path` is let go and taken on the one there now."""
    waited = False
    while True:
        make_folders(path.parent)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, file_mode())
        except FileNotFoundError:  # the .locks folder removed by a holder leaving between the two: make it again
            continue
        try:
            waited = _lock(fd, path, waiting if not waited else None) or waited
        except LocksUnsupported:  # nobody can hold this file: nothing of it is left behind
            _release(path, fd)
            raise
        except BaseException:  # a Ctrl-C while it waits
            os.close(fd)
            raise
        if _same_file(fd, path):
            return fd, waited
        os.close(fd)


def _lock(fd: int, path: Path, waiting: Callable[[str, Path], None] | None) -> bool:
    """Lock `fd`, waiting for its holder where there is one (`waiting` is told who); whether it waited."""
    if lock_exclusive(fd, path, wait=False):
        return False
    if waiting is not None:
        waiting(os.pread(fd, 500, 0).decode("utf-8", "replace").strip() or "another process", path)
    lock_exclusive(fd, path)
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _release(path: Path, fd: int) -> None:
    """The file removed while still locked (so no process can take a lock on it after), then the lock let go with
    its descriptor; the .locks folder goes too where no other cell's lock is in it."""
    with contextlib.suppress(OSError):
        path.unlink()
    os.close(fd)
    with contextlib.suppress(OSError):
        path.parent.rmdir()
