'''How much of the text before a target section goes into its context.

The seed describes the workload as: "grant reports of more than 140,000 tokens, split into sections,
each section trained with at most 20,000 tokens of preceding context chosen by an exponential-decay
truncation algorithm ... prioritising recent information". It gives no formula. The policies below are
exact, and `exp_decay` is our reading of that sentence.

The prefix is the list of sections before the target, in document order, each a list of token ids;
`budget` is the number of tokens the context may hold. Whatever the policy, a prefix of at most
`budget` tokens is returned whole. Otherwise:

  none       The whole prefix or nothing: raises DoesNotFit (the caller skips the cell with its reason).
  tail       The last `budget` tokens of the concatenated prefix: only the most recent text, the oldest
             kept section usually entering mid-way.
  exp_decay  Sections are counted back from the target, j = 1 being the one just before it, with weights
             w_j = rho**(j-1), rho = `decay` in (0, 1). The budget is shared by water-filling: give
             every remaining section its share B * w_j / W of the remaining budget B, W the sum of the
             remaining weights; every section with L_j <= its share is kept whole, its tokens are taken
             from B and it leaves the pool; repeat until no remaining section fits whole. Each remaining
             section then gets q_j = floor(B * w_j / W), and the B - sum(q_j) tokens left by rounding
             (fewer than the number of remaining sections) go one each to the most recent ones. A section
             keeps its first q_j tokens (its numbered heading and opening, which later text refers to);
             a quota of 0 drops it. The result is in document order and exactly `budget` tokens long.

All arithmetic is on integers: rho is read as the decimal it prints as (0.5 -> 1/2, 0.7 -> 7/10) and
the weights scaled to integers, so the allocation is the same on every machine.
'''

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

POLICIES = ("none", "tail", "exp_decay")
Span = tuple[int, int]  # [start, end) of the tokens kept from one section


class DoesNotFit(Exception):
    """The text must be kept whole (policy `none`) or cannot be cut usefully, and is longer than allowed."""

    def __init__(self, needed: int, budget: int, detail: str) -> None:
        self.needed, self.budget, self.detail = needed, budget, detail
        super().__init__(f"{needed:,} tokens needed but only {budget:,} available: {detail}")

    def __reduce__(self) -> tuple[type, tuple[int, int, str]]:
        return type(self), (self.needed, self.budget, self.detail)  # survives a trip between processes


def _validate(budget: int, policy: str, decay: float) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown truncation policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if budget < 0:
        raise ValueError(f"budget must be >= 0 tokens, got {budget}")
    if not 0 < decay < 1:
        raise ValueError(f"decay must lie strictly between 0 and 1, got {decay}")


def _exp_decay_quotas(recent_first: list[int], budget: int, decay: float) -> list[int]:
    """Quotas for sections listed most recent first (the water-filling of the module docstring)."""
    rho = Fraction(repr(float(decay)))
    a, b = rho.numerator, rho.denominator
    count = len(recent_first)
    # w_j = rho**(j-1) scaled by b**(count-1): integers a**(j-1) * b**(count-j), same ratios
    weights = [a ** j * b ** (count - 1 - j) for j in range(count)]
    quotas = [0] * count
    remaining = list(range(count))
    left = budget
    while remaining:
        total = sum(weights[j] for j in remaining)
        fits = [j for j in remaining if recent_first[j] * total <= left * weights[j]]
        if not fits:
            break
        for j in fits:
            quotas[j] = recent_first[j]
            left -= recent_first[j]
        kept_whole = set(fits)
        remaining = [j for j in remaining if j not in kept_whole]
    if remaining:
        total = sum(weights[j] for j in remaining)
        for j in remaining:
            quotas[j] = left * weights[j] // total
        spare = left - sum(quotas[j] for j in remaining)
        for j in remaining[:spare]:  # remaining is ordered most recent first
            quotas[j] += 1
    return quotas


def allocate(lengths: Sequence[int], budget: int, policy: str, decay: float = 0.5) -> list[Span]:
    """The span kept from each section (document order) under `policy`; an empty span drops a section."""
    _validate(budget, policy, decay)
    total = sum(lengths)
    if total <= budget:
        return [(0, length) for length in lengths]
    if policy == "none":
        raise DoesNotFit(total, budget, "policy 'none' never truncates the preceding context")
    if policy == "tail":
        spans, left = [], budget
        for length in reversed(lengths):
            take = min(length, left)
            spans.append((length - take, length))
            left -= take
        return spans[::-1]
    quotas = _exp_decay_quotas(list(reversed(lengths)), budget, decay)[::-1]
    return [(0, quota) for quota in quotas]


def truncate(prefix_sections: Sequence[Sequence[int]], budget: int, policy: str, decay: float = 0.5) -> list[int]:
    """The context tokens for a target, from the token ids of the sections before it (see module doc)."""
    spans = allocate([len(section) for section in prefix_sections], budget, policy, decay)
    kept: list[int] = []
    for section, (start, end) in zip(prefix_sections, spans, strict=True):
        kept.extend(section[start:end])
    return kept


def kept_pieces(section_tokens: Sequence[Sequence[int]], decode: Callable[[list[int]], str], budget: int,
                policy: str, decay: float = 0.5) -> list[str | None]:
    """Per section (document order), the decoded text it keeps, or None where it is dropped: for callers
    that tokenized the sections once and need to know which section kept what."""
    spans = allocate([len(t) for t in section_tokens], budget, policy, decay)
    return [decode(list(t[start:end])) if end > start else None
            for t, (start, end) in zip(section_tokens, spans, strict=True)]


def truncate_text(prefix_sections: Sequence[str], encode: Callable[[str], list[int]],
                  decode: Callable[[list[int]], str], budget: int, policy: str, decay: float = 0.5) -> str:
    """As truncate, on text: each section is tokenized alone, cut to its span, decoded, and the kept
    pieces joined by a blank line. The separators are not counted and re-tokenizing the joined text can
    differ by a token at a seam, so a caller with a hard limit re-encodes the result (examples.py does)."""
    pieces = kept_pieces([encode(section) for section in prefix_sections], decode, budget, policy, decay)
    return "\n\n".join(piece for piece in pieces if piece is not None)


def describe(policy: str, decay: float = 0.5) -> str:
    """One paragraph a report can print to say what the context of a target section was."""
    _validate(0, policy, decay)
    common = ("The context of a target section is the text of the sections before it; when it fits in the "
              "budget (the context length minus the target's tokens) it is kept whole. ")
    if policy == "none":
        return common + ("Policy 'none': nothing is ever truncated; a target whose preceding text does not fit "
                         "is not trained on, and the cell is skipped with that reason.")
    if policy == "tail":
        return common + ("Policy 'tail': otherwise only the most recent tokens are kept, exactly as many as the "
                         "budget allows, so older sections are dropped and the oldest kept one starts mid-way.")
    return common + (
        f"Policy 'exp_decay' (rho = {decay}): otherwise the section j places before the target is given a share "
        f"of the budget proportional to {decay}^(j-1), by water-filling: sections shorter than their share are "
        "kept whole and the shares they do not use are redistributed to the others, repeatedly; each remaining "
        "section keeps its first tokens (heading and opening) up to the floor of its share, the rounding "
        "remainder going to the most recent sections, so that the context is exactly the budget. This is our "
        "reading of the seed's 'exponential-decay truncation algorithm ... prioritising recent information'.")
