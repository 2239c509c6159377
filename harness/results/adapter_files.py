"""A kept adapter's fingerprint (the sha256 its cell's result records) and, where the files no longer give it, which
file is damaged: the evaluation says so in one line before it loads anything."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.core.safetensors_header import safetensors_problem


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*") if p.is_file())


def adapter_digest(folder: Path) -> str:
    """The sha256 of every file of the folder, by name and content, in name order."""
    digest = hashlib.sha256()
    for path in _files(folder):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _file_problem(path: Path) -> str | None:
    """Why a JSON or safetensors file of an adapter cannot be read, or None."""
    if path.suffix == ".json":
        try:
            json.loads(path.read_bytes())
        except ValueError as err:
            return f"not valid JSON ({str(err)[:80]})"
    elif path.suffix == ".safetensors":
        return safetensors_problem(path)
    return None


def adapter_problem(folder: Path, sha256: str) -> str | None:
    """Why the kept adapter is not the one its cell trained (damaged, cut short, replaced), or None."""
    if adapter_digest(folder) == sha256:
        return None
    for path in _files(folder):
        problem = _file_problem(path)
        if problem:
            return f"{path}: {problem}"
    return (f"{folder}: its files are not those the cell trained (their sha256 differs from the {sha256[:12]}... its "
            "result records): replaced or changed since")
