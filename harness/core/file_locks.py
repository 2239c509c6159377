"""Exclusive locks on files, on whatever filesystem holds them. flock() first: the kernel drops it when its process
ends, however it ends. Where the filesystem gives no flock (NFS without local lock emulation, Lustre mounted
without `-o flock`), flock raises ENOLCK, EOPNOTSUPP or ENOSYS; POSIX record locks (fcntl F_SETLK, which NFS serves
through its lock manager) are tried next, dropped the same way. Where neither is given, the lock fails in one line
that names the folder and what to do, rather than every cell failing with an OSError's traceback."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from harness.core.errors import UsageError

# what flock and F_SETLK raise where the filesystem does not give that kind of lock
UNSUPPORTED = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS})
# what F_SETLK raises, without waiting, while another process holds the lock
HELD = frozenset({errno.EAGAIN, errno.EACCES})


class LocksUnsupported(UsageError):
    """The filesystem of a lock file gives neither flock nor POSIX record locks."""


def lock_exclusive(fd: int, path: Path, wait: bool = True) -> bool:
    """Lock the open file `fd` (the file at `path`, named in errors) for this process; without `wait`, False where
    another process holds it. The lock goes when the descriptor is closed, or its process ends."""
    flags = fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)
    try:
        fcntl.flock(fd, flags)
        return True
    except BlockingIOError:
        return False
    except OSError as err:
        if err.errno not in UNSUPPORTED:
            raise
        refused = err
    try:
        fcntl.lockf(fd, flags)
        return True
    except OSError as err:
        if err.errno in HELD and not wait:
            return False
        if err.errno not in UNSUPPORTED:
            raise
        raise LocksUnsupported(
            f"{Path(path).parent}/: its filesystem gives no file locks (flock: {_name(refused)}, fcntl record "
            f"locks: {_name(err)}), and without them two runs could measure one cell at once; put this folder on a "
            "filesystem that has them (a local disk, NFS with its lock manager running, Lustre mounted with "
            "-o flock)") from None


def _name(err: OSError) -> str:
    return errno.errorcode.get(err.errno or 0, str(err.errno))


def try_lock_file(path: Path, mode: int = 0o666) -> int | None:
    """A descriptor of the file at `path` (made where missing), locked by this process; None where another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        if lock_exclusive(fd, path, wait=False):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


@contextlib.contextmanager
def held(path: Path, said_while_waiting: str = "") -> Iterator[None]:
    """An exclusive lock on the file at `path` (made where missing) while the block runs, waiting for another process
    that holds it (and saying `said_while_waiting` first, where given, so that a wait is not taken for a hang)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if not lock_exclusive(fd, path, wait=False):
            if said_while_waiting:
                logging.getLogger("vramlab").warning(said_while_waiting)
            lock_exclusive(fd, path)
        yield
    finally:
        os.close(fd)
