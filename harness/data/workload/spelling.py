"""Token ids in a sliced model's own tokens, each with a mark of what it came from, so that text spelled before it is
cut still tells how many of its tokens fell outside the kept set. Why it is so: docs/stack.md (the vocabulary)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

# the mark beside each model token: the (only) token of a kept tokenizer token, the first model token of one
# spelled with its bytes (or replaced by the fallback token), or a later byte of a spelled one
KEPT, SPELLED, LATER = 1, 2, 0

# tokenizer ids -> (model ids, one mark a model id); a sliced vocabulary's map provides it (harness/stack/token_map.py)
Spell = Callable[[Sequence[int]], tuple[list[int], bytes]]


def counted(marks: bytes) -> tuple[int, int]:
    """(tokenizer tokens, of them outside the kept set) in a run of model tokens: a token counts where its first
    model token is, so one cut in the middle of its bytes counts on the side that keeps its start."""
    return len(marks) - marks.count(LATER), marks.count(SPELLED)


def spread(values: Sequence[int], marks: bytes) -> list[int]:
    """One value a tokenizer token -> one a model token: the bytes of a spelled token all take its value."""
    out: list[int] = []
    given = iter(values)
    current = 0
    for mark in marks:
        if mark != LATER:
            current = next(given)
        out.append(current)
    return out
