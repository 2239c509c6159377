"""Opening a GGUF file that may not be one: a file of another kind, or a download cut short, makes the gguf
library raise a bare ValueError (bad magic, a tensor past the end of the file); here it becomes one line naming
the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class GGUFFileError(ValueError):
    """A file given as GGUF that cannot be read as one."""


def open_gguf(file: Path | str) -> Any:
    """A gguf.GGUFReader of `file`, or GGUFFileError."""
    from gguf import GGUFReader  # heavy (numpy memory maps): only where a GGUF file is read

    try:
        return GGUFReader(file, "r")
    except (ValueError, KeyError, IndexError, OSError, EOFError) as err:
        raise GGUFFileError(f"{file}: not a readable GGUF file ({' '.join(str(err).split())[:200]}); is it a GGUF "
                            "model, and complete (a download cut short leaves a truncated file)?") from None
