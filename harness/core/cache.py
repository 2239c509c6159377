"""The cache folder, $VRAMLAB_CACHE (default ~/.cache/vramlab, checked by harness/core/environment_variables.py):
models built or converted once, bytecode, warm-start spares, lm-eval's task index, file digests."""

from __future__ import annotations

from pathlib import Path

from harness.core.environment_variables import cache_folder


def cache_root() -> Path:
    return cache_folder()
