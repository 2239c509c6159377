"""Errors a person can fix: what a command was given that it cannot use. `vramlab` prints each as one bounded
line and exits 2 (harness/cli.py); the other modules' own kinds (MatrixError, ResultFileError, DataError) are
shown the same way."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

MAX_MESSAGE = 1000  # characters of an error message shown: a value it quotes may be any size


class UsageError(ValueError):
    """A command given something it cannot use; the message says what and how to fix it."""


def one_line(err: BaseException | str, limit: int = MAX_MESSAGE) -> str:
    """The message on one line, at most `limit` characters (a value a message quotes may be a megabyte)."""
    text = " ".join(str(err).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def closest(word: Any, choices: Iterable[Any]) -> str | None:
    """The choice nearest to `word` as text (difflib's ratio at least 0.6), or None: the one did-you-mean."""
    close = difflib.get_close_matches(str(word), [str(choice) for choice in choices], n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: Any, choices: Iterable[Any], prefix: str = "") -> str:
    """"; did you mean 'adapter'?" where a choice is near `word` (named with `prefix`), else ""."""
    close = closest(word, choices)
    return f"; did you mean {prefix + close!r}?" if close else ""
