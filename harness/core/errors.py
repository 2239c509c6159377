"""Errors a person can fix: what a command was given that it cannot use. Every command prints each as one bounded
line and exits 2 (`run_command`); the other layers' own kinds (MatrixError, ResultFileError, DataError) are
UsageErrors too."""

from __future__ import annotations

import sys
from collections.abc import Callable

MAX_MESSAGE = 1000  # characters of an error message shown: a value it quotes may be any size


class UsageError(ValueError):
    """A command given something it cannot use; the message says what and how to fix it."""


def run_command(command: Callable[[], int]) -> int:
    """A command's exit status: its own, or 2 with one line on stderr for a UsageError or an unusable path."""
    try:
        return command()
    except UsageError as err:
        print(f"vramlab: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:  # a path given to a command that cannot be read or written (a file for a folder, ...)
        where = f"{err.filename}: " if err.filename else ""
        print(f"vramlab: {one_line(where + (err.strerror or str(err)))}", file=sys.stderr)
        return 2


def one_line(err: BaseException | str, limit: int = MAX_MESSAGE) -> str:
    """The message on one line, at most `limit` characters (a value a message quotes may be a megabyte)."""
    text = " ".join(str(err).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
