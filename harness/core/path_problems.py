"""What stands in the way of writing a path, said in words: the operating system's "File exists" or "Not a
directory" names no culprit when a file sits where a folder of the path should be."""

from __future__ import annotations

import errno
from pathlib import Path


def file_in_the_way(path: Path) -> Path | None:
    """The first of `path`'s folders that is a file (so nothing can be created under it), or None."""
    for parent in reversed(Path(path).parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def explain_os_error(err: OSError) -> str:
    """One line for an OSError a command met on a path it was given."""
    if err.filename and err.errno in (errno.EEXIST, errno.ENOTDIR):
        blocker = file_in_the_way(Path(err.filename) / "x")
        if blocker is not None:
            return (f"{err.filename}: cannot be written: {blocker} is a file, not a folder, so nothing can be "
                    "created under it; give a path whose folders are folders")
    if err.filename:
        return f"{err.filename}: {err.strerror or err}"
    return err.strerror or str(err)
