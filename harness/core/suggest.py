"""The one did-you-mean: the known name nearest to a word a person wrote, for a message that names it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def closest(word: Any, choices: Iterable[Any]) -> str | None:
    """The choice nearest to `word` as text (difflib's ratio at least 0.6), or None: the one did-you-mean."""
    close = difflib.get_close_matches(str(word), [str(choice) for choice in choices], n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: Any, choices: Iterable[Any], prefix: str = "") -> str:
    """"; did you mean 'adapter'?" where a choice is near `word` (named with `prefix`), else ""."""
    close = closest(word, choices)
    return f"; did you mean {prefix + close!r}?" if close else ""
