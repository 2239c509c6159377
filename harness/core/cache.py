"""The cache folder, $VRAMLAB_CACHE (default ~/.cache/vramlab, checked by harness/core/environment_variables.py):
models built or converted once, bytecode, warm-start spares, lm-eval's task index, file digests, GGUF headers' facts."""

from __future__ import annotations

import hashlib
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


def folder_fingerprint(folder: Path) -> str | None:
    """What a folder of the cache holds, cheaply: the names, sizes and times of its files (weights are gigabytes);
    None where it is not there. A folder built again, or mended, has another."""
    digest, found = hashlib.sha256(), False
    try:
        for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            stat = path.stat()
            digest.update(f"{path.relative_to(folder)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
            found = True
    except OSError:
        return None
    return digest.hexdigest() if found else None
