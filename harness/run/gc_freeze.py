"""Imports are for life: once a GPU cell's libraries are imported, the objects they made are moved out of the
garbage collector's sight (`gc.freeze`), so that every later collection walks only what the cell itself makes.

Unsloth calls `gc.collect()` about twenty times while it loads a model and attaches the adapter, and each of
those walks every object the imports made (torch, transformers, TRL, Unsloth: about 0.7 million). Under
cProfile on the H200 machine, one Unsloth cell spent 7.0 s in 20 such calls.

What the measurement keeps: garbage is collected once just before freezing, so nothing unreachable is kept
alive; the model does not exist yet at that point (it is loaded after), so no frozen object holds device
memory. A CPU cell is left alone, as with warm starts: its device memory is its process's resident set.
The result records how many objects were frozen (`records.process.gc_frozen_objects`);
VRAMLAB_GC_FREEZE=0 turns it off.
"""

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
