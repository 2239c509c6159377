"""Files written whole or not at all: each is written to a temporary file in its own folder and renamed over its
final name, so an interrupted command (Ctrl-C, a kill, a full disk) leaves the previous file, never a cut one.
Result files, report tables, charts and designs all go through here."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.core.made_folders import make_folders
from harness.core.path_problems import naming


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


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write to (it keeps the suffix, so a writer that picks the format by it,
    as matplotlib does, still can); renamed over `path` when the block ends, removed when it raises. An OSError
    names `path` where the system named no file (a full disk)."""
    path = Path(path)
    make_folders(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}")
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
