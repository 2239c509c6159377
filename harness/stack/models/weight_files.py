"""Whether a model folder's safetensors weight files are whole (harness/core/safetensors_header.py): a file cut
short would otherwise pass for a built model until a cell fails loading it."""

from __future__ import annotations

import json
from pathlib import Path

from harness.core.safetensors_header import safetensors_problem

INDEX = "model.safetensors.index.json"  # a model saved in shards names them here


def damaged_weights(folder: Path) -> str | None:
    """What is wrong with the safetensors weights of `folder` (one missing, a header that cannot be read, a file
    whose size is not the one its header gives), in words, or None where they are whole."""
    index = folder / INDEX
    if index.is_file():
        try:
            names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return f"{INDEX} cannot be read as the index of its weight files"
    else:
        names = sorted(p.name for p in folder.glob("*.safetensors"))
        if not names:
            return "it holds no .safetensors weight file"
    for name in names:
        problem = safetensors_problem(folder / name)
        if problem is not None:
            return f"{name}: {problem}"
    return None
