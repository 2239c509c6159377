"""The `ceiling:` section of a matrix file, and the probes it asks for: a cell at another context, a cell of its
own, and the bisection over the section's grid that a search follows. The search that runs probes is
harness/process/ceiling.py; the answer its kept probes give, harness/results/ceiling.py.

    ceiling:
      low: 8192          # the search's range of contexts, in tokens
      high: 131072
      resolution: 1024   # probes stay on multiples of this; the answer is exact to within it
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.spec.cells import Cell

MAX_HIGH = 2**20  # a million tokens: past the context of any model this harness trains


class CeilingSpecError(ValueError):
    """A `ceiling:` section that cannot be used; the message says which key and why."""


@dataclass(frozen=True)
class CeilingSpec:
    low: int
    high: int
    resolution: int = 1024

    @classmethod
    def parse(cls, section: Any) -> CeilingSpec | None:
        if section is None:
            return None
        if not isinstance(section, dict):
            raise CeilingSpecError(f"expected a mapping with low, high and resolution, got {section!r}")
        unknown = set(section) - {"low", "high", "resolution"}
        if unknown:
            raise CeilingSpecError(f"unknown key {sorted(unknown)[0]!r}; the keys are low, high and resolution")
        missing = [key for key in ("low", "high") if key not in section]
        if missing:  # else the first would be judged as a value None the user never wrote
            raise CeilingSpecError(f"{' and '.join(missing)} missing; a ceiling section names the contexts it searches "
                                   f"between, low and high (resolution is optional: {cls.resolution})")
        values = {}
        for key in ("low", "high", "resolution"):
            value = section.get(key, cls.resolution if key == "resolution" else None)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CeilingSpecError(f"{key}: {value!r} is not a positive number of tokens")
            values[key] = value
        if values["high"] > MAX_HIGH:
            raise CeilingSpecError(f"high ({values['high']}) is more than {MAX_HIGH:,} tokens, past any model's "
                                   "context; a probe there would only fill the machine's memory")
        if values["low"] >= values["high"]:
            raise CeilingSpecError(f"low ({values['low']}) must be below high ({values['high']})")
        if values["low"] % values["resolution"] or values["high"] % values["resolution"]:
            raise CeilingSpecError(f"low and high must be multiples of resolution ({values['resolution']})")
        return cls(**values)


def probe_cell(cell: Cell, context: int) -> Cell:
    """The configuration at another context: a cell of its own, with its own id and result file."""
    return Cell(matrix=cell.matrix, name=f"{cell.name}@context={context}", settings={**cell.settings,
                                                                                      "context": context},
                varied={**cell.varied, "context": context})


def probe_folder(results_dir: Path, matrix: str, cell: Cell) -> Path:
    return results_dir / matrix / "ceiling" / cell.cell_id


GUESS_MARGIN = 0.10  # the first bracket around the estimate's answer: the estimate is calibrated to within 10%


def bisect(fits: Callable[[int], bool], spec: CeilingSpec, guess: int | None = None) -> int | None:
    """The largest multiple of `resolution` in [low, high] at which `fits` holds, or None where even `low`
    does not fit. Without a guess it probes low, then high, then halves the bracket: about
    log2((high - low) / resolution) + 2 probes. With a guess (the memory estimate's answer) it first probes
    GUESS_MARGIN either side of it, and falls back to the range's ends only where the guess was wrong."""
    res = spec.resolution

    def on_grid(context: float, up: bool) -> int:
        steps = -(-context // res) if up else context // res
        return int(min(max(steps * res, spec.low), spec.high))

    first_low, first_high = spec.low, spec.high
    if guess is not None:
        first_low, first_high = on_grid(guess * (1 - GUESS_MARGIN), False), on_grid(guess * (1 + GUESS_MARGIN), True)
    if not fits(first_low):
        if first_low == spec.low or not fits(spec.low):
            return None
        good, bad = spec.low, first_low  # the guess was too high: the answer is below the bracket
    elif first_high == first_low:
        return first_low if first_low == spec.high else _upward(fits, spec, first_low)
    elif fits(first_high):
        if first_high == spec.high or fits(spec.high):
            return spec.high
        good, bad = first_high, spec.high  # the guess was too low: the answer is above the bracket
    else:
        good, bad = first_low, first_high
    return _halve(fits, res, good, bad)


def _upward(fits: Callable[[int], bool], spec: CeilingSpec, good: int) -> int:
    """From a context that fits, with nothing known above it: the top, else the bracket up to it."""
    if fits(spec.high):
        return spec.high
    return _halve(fits, spec.resolution, good, spec.high)


def _halve(fits: Callable[[int], bool], res: int, good: int, bad: int) -> int:
    while bad - good > res:
        middle = good + (bad - good) // 2 // res * res
        middle = max(middle, good + res)
        if fits(middle):
            good = middle
        else:
            bad = middle
    return good
