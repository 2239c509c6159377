"""A setting's declaration: type, allowed levels, default, one-line help and who declares it. The registry of
every setting is harness/spec/settings.py; owners (run settings, data, each technique) declare their own."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Validator = Callable[[Any], "str | None"]


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type
    default: Any
    help: str
    levels: tuple[Any, ...] | None = None  # closed set of values, for techniques
    minimum: float | None = None
    maximum: float | None = None
    validate: Validator | None = None  # extra check beyond type, levels and minimum: why not, or None
    hashed_at_default: bool = True  # False: left out of the cell id while at its default (see harness/spec/settings.py)
    owner: str = "run"  # who declares it: run, data, or a technique's axis
    # one spelling for values that mean the same (so they make the same cell id), applied once checked
    canonical: Callable[[Any], Any] | None = None
    # whether the setting changes anything in a cell of these settings (None: always); a line's label leaves it
    # out where it does not, so that tail is not labelled with exp_decay's ratio
    acts_when: Callable[[dict[str, Any]], bool] | None = None
    acts_where: str = ""  # acts_when in words, as a matrix's cells would have it: "truncation: exp_decay"

    def acts(self, settings: dict[str, Any]) -> bool:
        return self.acts_when is None or self.acts_when(settings)

    def check(self, value: Any) -> str | None:
        """Why `value` is not acceptable, or None when it is."""
        if self.levels is not None:
            if value not in self.levels:
                return f"level {value!r} is not one of {', '.join(map(str, self.levels))}"
            return None
        if self.validate is not None:
            return self.validate(value)
        if self.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{value!r} is not an integer"
        if self.kind is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"{value!r} is not a number"
            if not math.isfinite(value):
                return f"{value!r} is not a finite number"
        if self.kind is str and not isinstance(value, str):
            return f"{value!r} is not a string"
        if self.kind is list and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return f"{value!r} is not a list of strings"
        if self.minimum is not None and value < self.minimum:
            return f"{value!r} is below the minimum {self.minimum}"
        if self.maximum is not None and value > self.maximum:
            return f"{value!r} is above the maximum {self.maximum:,}"
        return None

    def describe(self) -> str:
        allowed = ", ".join(map(str, self.levels)) if self.levels else self.kind.__name__
        return f"{self.name}\t{allowed}\t{self.default!r}\t{self.owner}\t{self.help}"
