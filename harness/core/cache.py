"""The cache folder, $VRAMLAB_CACHE (default ~/.cache/vramlab): models built or converted once, bytecode, warm-start
spares, lm-eval's task index, file digests."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("VRAMLAB_CACHE", Path.home() / ".cache" / "vramlab"))
