"""Folders a command makes, remembered, so that a command that fails (a full disk, a refusal half-way) removes
those it made and left empty instead of leaving an empty folder behind (harness/core/console.py does, at its end)."""

from __future__ import annotations

import os
from pathlib import Path

MADE: list[Path] = []  # the folders this process made, the outermost of each call first


def make_folders(path: Path) -> Path:
    """`path` and its missing parents made (as mkdir(parents=True, exist_ok=True)), each one made remembered."""
    path = Path(path)
    missing = [p for p in [path, *path.parents] if not os.path.lexists(p)]
    path.mkdir(parents=True, exist_ok=True)
    MADE.extend(reversed(missing))
    return path


def forget_made() -> None:
    MADE.clear()


def remove_empty_made() -> list[Path]:
    """Every folder this process made that is still empty removed, the deepest first; the ones removed."""
    removed = []
    for folder in sorted(set(MADE), key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()  # only an empty folder goes; one a file landed in (or another process's) stays
            removed.append(folder)
        except OSError:
            pass
    MADE.clear()
    return removed
