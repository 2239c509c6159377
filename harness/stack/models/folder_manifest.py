"""What a model folder built into the cache held when it was completed: every file's size, and the sha256 of every file
but the weights, written beside them as the build finishes and checked whenever the folder is used again, so that a
file damaged since (a config emptied, a tokenizer cut short) is built again instead of loaded."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MANIFEST = "vramlab_manifest.json"
# Weight files are gigabytes: only their sizes are kept (weight_files.py checks them against their headers too);
# hashing them on every use would take longer than loading them.
WEIGHT_SUFFIXES = (".safetensors", ".bin")


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _entry(file: Path) -> dict[str, int | str]:
    entry: dict[str, int | str] = {"bytes": file.stat().st_size}
    if not file.name.endswith(WEIGHT_SUFFIXES):
        entry["sha256"] = _sha256(file)
    return entry


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_manifest(folder: Path) -> None:
    """Record what `folder` holds now, once its build has finished."""
    entries = {p.relative_to(folder).as_posix(): _entry(p) for p in _files(folder)}
    (folder / MANIFEST).write_text(json.dumps({"files": entries}, indent=1, sort_keys=True) + "\n")


def has_manifest(folder: Path) -> bool:
    return (folder / MANIFEST).is_file()


def manifest_problem(folder: Path) -> str | None:
    """The first file of `folder` that is not what its manifest recorded (missing, another size, another sha256), in
    words, or None where all are as they were; an unreadable manifest is a problem too."""
    try:
        files = json.loads((folder / MANIFEST).read_text())["files"]
        recorded = {str(name): (int(e["bytes"]), e.get("sha256")) for name, e in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return f"{MANIFEST} cannot be read as the list of its files"
    for name, (size, sha256) in sorted(recorded.items()):
        file = folder / name
        if file.is_dir():
            return f"{name}: cannot be read (a folder stands where the file was written)"
        if not file.is_file():
            return f"{name}: missing"
        found = file.stat().st_size
        if found != size:
            return f"{name}: {found:,} bytes where {size:,} were written"
        if sha256 is not None and _sha256(file) != sha256:
            return f"{name}: its content is not what was written (another sha256, the same size)"
    return None
