"""The facts of a GGUF file (harness/stack/models/facts.py), kept in the cache folder once read. gguf's reader
builds every field of the header to give a dozen numbers, the tokenizer's 50k-150k strings among them: seconds
of every command that reads a matrix of a GGUF model, for a header that has not changed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from harness.core.atomic_files import write_text_atomic
from harness.core.cache import cache_root
from harness.core.errors import UsageError

FOLDER = "gguf-facts"
VERSION = 1  # of what a kept entry holds: another makes every entry one to read again


def _entry(file: str) -> Path | None:
    """Where the facts of `file` as it is now are kept: a file changed, replaced or moved has another entry."""
    try:
        stat = os.stat(file)
        place = cache_root() / FOLDER
    except (OSError, UsageError):  # no cache to keep them in: they are read from the file each time
        return None
    key = f"{VERSION}\0{Path(file).resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}\0{stat.st_dev}"
    return place / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def remembered(file: str) -> dict[str, Any] | None:
    """The facts kept for `file`, or None: none kept, or an entry that cannot be read (it is read again)."""
    entry = _entry(file)
    try:
        found = json.loads(entry.read_text(encoding="utf-8")) if entry is not None else None
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def remember(file: str, facts: dict[str, Any]) -> None:
    """Keeps the facts of `file`; a cache that cannot be written only means they are read again next time."""
    entry = _entry(file)
    if entry is None:
        return
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(entry, json.dumps(facts, sort_keys=True))
    except OSError:
        pass
