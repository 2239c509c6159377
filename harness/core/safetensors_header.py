"""Whether a safetensors file is whole, told from its header alone (a few kilobytes of a file that may be
gigabytes): its tensors must end where the file ends. A file cut short (a full disk, a copy interrupted) would
otherwise pass until something loads it."""

from __future__ import annotations

import json
import struct
from pathlib import Path

HEADER_LENGTH_BYTES = 8  # a little-endian unsigned 64-bit length, then that many bytes of JSON
MOST_HEADER_BYTES = 100_000_000  # safetensors' own limit: a larger length is no header


def safetensors_problem(file: Path) -> str | None:
    """Why a safetensors file is not whole (missing, too short, a header that is no JSON, a size other than its
    header gives), in words, or None."""
    try:
        size = file.stat().st_size
        with open(file, "rb") as handle:
            head = handle.read(HEADER_LENGTH_BYTES)
            if len(head) < HEADER_LENGTH_BYTES:
                return f"{size} bytes, too short for a safetensors header"
            length = struct.unpack("<Q", head)[0]
            if length > MOST_HEADER_BYTES or HEADER_LENGTH_BYTES + length > size:
                return (f"{size:,} bytes, shorter than the header it begins with says ({length:,} bytes of header): "
                        "cut short")
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
