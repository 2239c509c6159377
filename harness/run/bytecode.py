"""Compiled bytecode kept in the cache folder where Python is told not to write it beside the sources.
Why it is so: docs/measurement.md."""

from __future__ import annotations

import os
import sys

from harness.core.cache import cache_root
from harness.core.errors import UsageError

OFF_ENV = "VRAMLAB_BYTECODE_CACHE"
_chosen: str | None = None  # the folder enable() chose for this process (a forked process inherits it)


def enable() -> str | None:
    """Point this process's bytecode at the cache folder where Python would write none; return the folder.
    Modules imported afterwards use it, and so does every process started with this environment."""
    global _chosen
    if not sys.dont_write_bytecode or sys.pycache_prefix is not None or os.environ.get(OFF_ENV) == "0":
        return None
    try:
        folder = cache_root() / "bytecode"
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, UsageError):
        # a read-only cache compiles as before; a VRAMLAB_CACHE that cannot be used is the command's one-line
        # error (harness/core/environment_variables.py), never this process's first traceback
        return None
    sys.pycache_prefix = str(folder)
    sys.dont_write_bytecode = False
    _chosen = sys.pycache_prefix
    return _chosen


def in_use() -> str | None:
    """Where this process reads and writes its bytecode, when the harness chose it: under the cache folder,
    named so that a result does not carry this machine's paths."""
    return None if _chosen is None else "$VRAMLAB_CACHE/bytecode"
