"""Files written whole or not at all: each is written to a temporary file in its own folder and renamed over its
final name, so an interrupted command (Ctrl-C, a kill, a full disk) leaves the previous file, never a cut one.
Result files, report tables, charts and designs all go through here.

A temporary file's name says which process writes it (`.<stem>.<host>_<pid namespace>-<pid>-<random>.tmp<suffix>`):
one that a killed writer (kill -9) left is removed by the next write into its folder, once that process is gone,
and no temporary file of a live writer (this host's, or another host's or container's on a shared folder) is ever
touched."""

from __future__ import annotations

import errno
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from harness.core.made_folders import make_folders
from harness.core.path_problems import naming

# the writer's host and pid in a temporary file's name; mkstemp's random part is 8 of [a-z0-9_]
TEMPORARY = re.compile(r"^\..*\.(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[a-z0-9_]{8}\.tmp(\.[^.]+)?$")


def _umask() -> int:
    """This process's umask, read without changing it where Linux tells it (os.umask can only be read by
    setting it, which races with other threads creating files)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions a new file gets from open() here (0o644 under the usual umask 022), so a file in a shared
    folder is as readable as the folder's other files; tempfile.mkstemp alone would give 0o600."""
    return 0o666 & ~_umask()


def writer_host() -> str:
    """This host as a temporary file's name gives it, with its pid namespace where Linux tells it: containers on one
    host may share its name, never their pids."""
    host = re.sub(r"[^A-Za-z0-9]", "_", socket.gethostname())[:64] or "host"
    try:
        return f"{host}_{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return host


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0 only asks; another user's process answers PermissionError, and is alive
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """The temporary files in `folder` whose writer, a process of this host, is gone (killed mid-write); the
    files removed. A pid in use again keeps its file (on the safe side): the next write after it ends removes it."""
    stale, here = [], writer_host()
    with suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            found = TEMPORARY.match(entry.name)
            if found and found["host"] == here and not _alive(int(found["pid"])) and entry.is_file():
                stale.append(Path(entry.path))
    for path in stale:
        with suppress(OSError):
            path.unlink()
    return stale


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write to (it keeps the suffix, so a writer that picks the format by it,
    as matplotlib does, still can); renamed over `path` when the block ends, removed when it raises. An OSError
    names `path` where the system named no file (a full disk)."""
    path = Path(path)
    if path.is_dir():  # the rename would name the temporary file, not the folder in the way
        raise IsADirectoryError(errno.EISDIR, "a folder is in the place of this file; move it away", str(path))
    make_folders(path.parent)
    remove_stale_temporaries(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.{writer_host()}-{os.getpid()}-",
                                   suffix=f".tmp{path.suffix}")
    except OSError as err:  # the system names the temporary file, which nobody asked for: the folder is the matter
        raise type(err)(err.errno, f"the folder cannot be written ({err.strerror}), so {path.name} could not be "
                        "written there", f"{path.parent}/") from None
    try:
        with naming(path):
            os.fchmod(fd, file_mode())
            os.close(fd)
            yield Path(tmp)
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv_atomic(path: Path, frame: Any) -> None:
    """A pandas DataFrame as CSV without its index, written whole or not at all."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
