"""Imports are for life: once a GPU cell's libraries are imported, the objects they made are moved out of the
garbage collector's sight (`gc.freeze`), so that every later collection walks only what the cell itself makes.
Why it is so: docs/measurement.md."""

from __future__ import annotations

import gc
import os

OFF_ENV = "VRAMLAB_GC_FREEZE"


def enabled() -> bool:
    return os.environ.get(OFF_ENV) != "0"


def freeze_imports() -> int:
    """Collect, then freeze what is left; how many objects are now frozen (0 where turned off)."""
    if not enabled():
        return 0
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def frozen() -> int | None:
    """For the result: how many objects this process froze, None where turned off."""
    return gc.get_freeze_count() if enabled() else None
