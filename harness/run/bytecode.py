"""Compiled bytecode kept in the cache folder where Python is told not to write it beside the sources.

Container images often set PYTHONDONTWRITEBYTECODE=1 and install packages with `pip --no-compile`; the GPU
machine this harness is measured on does both. Then every process compiles every module it imports from
source: 5-7 s of torch, sympy and Unsloth per process there, before any of the cell's work, and again in the
next cell. Python can write and read its bytecode in a separate tree instead (`sys.pycache_prefix`), which
leaves the installed packages untouched. The harness's processes do so, under the cache folder, only where
writing bytecode is off; each result records it (`records.process.bytecode_cache`). The bytecode is what
Python itself would have cached beside each source, checked against the source's time and size on every
import, so a cell runs the same code either way.

VRAMLAB_BYTECODE_CACHE=0 turns it off.
"""

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
