"""The cache folder, $VRAMLAB_CACHE (default ~/.cache/vramlab, checked by harness/core/environment_variables.py):
models built or converted once, bytecode, warm-start spares, lm-eval's task index, file digests."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.core.environment_variables import CACHE, cache_folder
from harness.core.errors import UsageError


def cache_root() -> Path:
    return cache_folder()


def check_cache_usable() -> Path:
    """The cache folder, once it is known that it can be made and written: checked before a cell starts, since a
    cache that cannot be used would fail the cell half-way and record an error that has nothing to do with it.
    Leaves nothing behind: the folder is not made here, only a folder to make it in is tried."""
    folder = cache_root()
    where = next((p for p in [folder, *folder.parents] if p.exists() or p.is_symlink()), Path("/"))
    named = f"{CACHE}={folder}" if CACHE in os.environ else f"the cache folder {folder} (set {CACHE} for another)"
    if not where.is_dir():
        raise UsageError(f"{named}: {where} is {'a file' if where.is_file() else 'not a folder'}, so the cache "
                         "cannot be made there; give a folder that can be")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".vramlab-cache-check-", dir=where))
    except OSError as err:
        raise UsageError(f"{named}: {where} cannot be written ({err.strerror}); give a folder that can be, with "
                         "room for the models it keeps") from None
    return folder
