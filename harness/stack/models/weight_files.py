"""Whether a model folder's safetensors weight files are whole, told from their headers alone (a few kilobytes of
files that may be gigabytes): a file cut short (a full disk, a copy interrupted, a truncate) would otherwise pass
for a built model until a cell fails loading it."""

from __future__ import annotations

import json
import struct
from pathlib import Path

INDEX = "model.safetensors.index.json"  # a model saved in shards names them here
HEADER_LENGTH_BYTES = 8  # a little-endian unsigned 64-bit length, then that many bytes of JSON
MOST_HEADER_BYTES = 100_000_000  # safetensors' own limit: a larger length is no header


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
        problem = _file_problem(folder / name)
        if problem is not None:
            return f"{name}: {problem}"
    return None


def _file_problem(file: Path) -> str | None:
    """Why one safetensors file is not whole, or None: its header's tensors must end where the file ends."""
    try:
        size = file.stat().st_size
        with open(file, "rb") as handle:
            head = handle.read(HEADER_LENGTH_BYTES)
            if len(head) < HEADER_LENGTH_BYTES:
                return f"{size} bytes, too short for a safetensors header"
            length = struct.unpack("<Q", head)[0]
            if length > MOST_HEADER_BYTES or HEADER_LENGTH_BYTES + length > size:
                return f"{size:,} bytes, shorter than the header it begins with says ({length:,} bytes of header)"
            header = json.loads(handle.read(length))
    except FileNotFoundError:
        return "missing"
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    except ValueError:
        return "its header is not the JSON a safetensors file begins with"
    if not isinstance(header, dict):
        return "its header is not the JSON a safetensors file begins with"
    try:
        end = max((int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"), default=0)
    except (KeyError, IndexError, TypeError, ValueError):
        return "its header gives no tensor's place"
    expected = HEADER_LENGTH_BYTES + length + end
    if size != expected:
        return f"{size:,} bytes where its header gives {expected:,}: cut short or changed since it was written"
    return None
