"""Errors a person can fix: what a command was given that it cannot use. `vramlab` prints each as one bounded
line and exits 2 (harness/core/console.py); the other modules' own kinds (MatrixError, ResultFileError,
DataError) are UsageErrors, shown the same way."""

from __future__ import annotations

MAX_MESSAGE = 1000  # characters of an error message shown: a value it quotes may be any size


class UsageError(ValueError):
    """A command given something it cannot use; the message says what and how to fix it."""


def one_line(err: BaseException | str, limit: int = MAX_MESSAGE) -> str:
    """The message on one line, at most `limit` characters (a value a message quotes may be a megabyte). A long one
    loses its middle: what is wrong and what to do come last, after the path or value they are about."""
    text = " ".join(str(err).split())
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "…" + text[len(text) - (limit - head - 1):]
