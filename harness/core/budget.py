"""A memory budget that behaves like a real card of that size, and its one canonical spelling; while the allocator
is capped, torch.cuda answers as the emulated card (harness/core/card_emulation.py). Why it is so:
docs/measurement.md."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from harness.core.card_emulation import CardEmulation, not_emulated, switched_off
from harness.core.gpu_cards import CARDS, Card
from harness.core.paged_optimizer_state import paged_bytes, unpaged_bytes
from harness.core.suggest import did_you_mean

_SIZE_UNITS = {"": 1, "B": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
               "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def parse_bytes(text: str | int) -> int:
    """'16GiB' -> 17179869184. Binary and decimal units both, since papers mix them."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).upper() not in _SIZE_UNITS:
        raise ValueError(f"not a memory size: {text!r} (write it like '16GiB' or '16000MB')")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).upper()])

GIB = 2**30
_BINARY = {"", "B", "KIB", "MIB", "GIB", "TIB"}  # "": a bare number of bytes
_UNIT_SPELLING = {"": "", "B": "B", "KIB": "KiB", "MIB": "MiB", "GIB": "GiB", "TIB": "TiB"}
BUDGET_KEYS = ("card", "display_reserve")
# the canonical spelling's units, largest first: a size is written in the largest one that holds it whole
_CANONICAL_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
# the largest single accelerators hold 288 GB (B300, MI355X); a budget past 1 TiB caps nothing on any device and
# would only make cells of their own ids
MAX_BUDGET = 2**40


def shown_size(size: int) -> str:
    """A size in words: GiB to two places, or MiB where that would read 0.00 GiB (a budget of a few MiB)."""
    return f"{size / GIB:.2f} GiB" if size >= GIB // 10 else f"{size / 2**20:.1f} MiB"


def _size_problem(value: Any, minimum: int = 2**20, maximum: int | None = None) -> str | None:
    """A size names its unit, and the binary one a card's size is given in: '16 GB' cards hold 16 GiB. A bare
    number is bytes: 0, or at least 1 MiB (a '16' meant as GiB is refused, not read as 16 bytes)."""
    other_digits = [c for c in str(value) if c.isdigit() and not c.isascii()]
    if other_digits and not isinstance(value, bool):  # '１６GiB' (fullwidth): Python reads them, no reader of a table
        ascii_digits = "".join(str(unicodedata.digit(c, "?")) if c in other_digits else c for c in str(value))
        return f"{value!r} is written with digits other than 0-9 ({''.join(other_digits)}); write {ascii_digits}"
    match = None if isinstance(value, bool) else re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(value))
    if match is None:
        return f"{value!r} is not a memory size; write it like '16GiB'"
    unit = match.group(2).upper()
    if not unit and (0 < parse_bytes(value) < 2**20 or "." in match.group(1)):
        return f"{value!r} has no unit; write it like '16GiB' (a bare number is read as bytes)"
    if unit in ("KB", "MB", "GB", "TB"):
        return (f"{value!r} is in decimal units ({parse_bytes(value) / 2**30:.2f} GiB); a '16 GB' card holds 16 GiB: "
                f"write {match.group(1)}{unit[0]}iB")
    if unit not in _BINARY:
        return f"{value!r}: unknown unit {match.group(2)!r}; use KiB, MiB, GiB or TiB"
    if match.group(2) not in _UNIT_SPELLING.values():  # 'gib', 'GIB': a lower-case b is a bit in other writing
        return (f"{value!r}: units are written B, KiB, MiB, GiB and TiB, with that case; write "
                f"{match.group(1)}{_UNIT_SPELLING[unit]}")
    if parse_bytes(value) < minimum:
        return f"{value!r} is less than 1 MiB: no model trains in that"
    if maximum is not None and parse_bytes(value) > maximum:
        return (f"{value!r} is more than {canonical_size(maximum)}, the most a budget may be: no device holds that "
                "much memory (the largest hold 288 GB), so it would cap nothing")
    return None


def _card_problem(name: Any) -> str | None:
    if isinstance(name, str) and name in CARDS:
        return None
    return f"no card {name!r}{did_you_mean(name, CARDS)} (known: {', '.join(CARDS)}; or give a size like '16GiB')"


def budget_problem(value: Any) -> str | None:
    """Why `value` is not a budget, or None."""
    if isinstance(value, dict):
        unknown = [k for k in value if k not in BUDGET_KEYS]
        if unknown:
            return f"unknown key {unknown[0]!r} in a card budget; it takes {' and '.join(BUDGET_KEYS)}"
        if "card" not in value:
            return "a budget written as a mapping names its card: {card: rtx4080, display_reserve: 0.5GiB}"
        # no reserve at all (0GiB) is a reserve: the card as a headless machine has it
        problem = _card_problem(value["card"]) or (_size_problem(value["display_reserve"], minimum=0)
                                                   if "display_reserve" in value else None)
        if problem:
            return problem
        if budget_bytes(value) < 2**20:
            return f"display_reserve {value['display_reserve']!r} leaves nothing of the card's memory"
        return None
    if isinstance(value, str) and value.strip() and value.strip()[0].isalpha():
        return _card_problem(value)
    return _size_problem(value, maximum=MAX_BUDGET)


# a host budget past this limits nothing: the largest machines hold a few TiB of memory
MAX_HOST_BUDGET = 64 * 2**40


def host_budget_problem(value: Any) -> str | None:
    if value == "none":
        return None
    problem = _size_problem(value)
    if problem is None and parse_bytes(value) > MAX_HOST_BUDGET:
        return (f"{value!r} is more than {canonical_size(MAX_HOST_BUDGET)}, the most a host budget may be: no machine "
                "holds that much memory, so it would limit nothing")
    return problem


def budget_card(value: Any) -> Card | None:
    """The card a budget names, or None for a plain size."""
    name = value.get("card") if isinstance(value, dict) else value
    return CARDS.get(name) if isinstance(name, str) else None


def canonical_size(value: Any) -> str:
    """One spelling per number of bytes: the largest binary unit that holds it whole ('16384MiB', '16 GiB' and
    17179869184 are all '16GiB'; '0.5GiB' is '512MiB'), else bytes ('1000001B'). The spelling every committed
    matrix uses ('16GiB') is its own canonical form, so no cell measured before this changes its id."""
    size = parse_bytes(value)
    for unit, factor in _CANONICAL_UNITS:
        if size and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def canonical_budget(value: Any) -> Any:
    """A budget in its one spelling: a size as `canonical_size` writes it, a card by its name, and a card without a
    display reserve is the card ({card: rtx4080} and {card: rtx4080, display_reserve: 0GiB} are the cell
    `budget: rtx4080` is, with its id)."""
    if isinstance(value, dict):
        if parse_bytes(value.get("display_reserve", 0)) == 0:
            return value["card"]
        return {"card": value["card"], "display_reserve": canonical_size(value["display_reserve"])}
    if budget_card(value) is not None:
        return value
    return canonical_size(value)


def canonical_host_budget(value: Any) -> Any:
    return value if value == "none" else canonical_size(value)


def budget_bytes(value: Any) -> int:
    """The device memory a budget allows: a size as written; a card's memory less what its driver reserves,
    less the display's reserve."""
    card = budget_card(value)
    if card is None:
        return parse_bytes(value)
    reserve = parse_bytes(value.get("display_reserve", 0)) if isinstance(value, dict) else 0
    return card.usable_bytes - reserve


@dataclass
class Budget:
    limit_bytes: int
    cuda: bool
    # host memory no file backs (resident anonymous and shared memory): what a desktop must hold in RAM,
    # while the pages of a memory-mapped checkpoint can be dropped and read again
    host_limit_bytes: int | None = None
    outside_allocator_bytes: int = 0
    paged_optimizer_bytes: int = 0
    unpaged_optimizer_bytes: int = 0  # the paged optimizer's state that bitsandbytes does not page
    allocator_cap_bytes: int | None = None
    device_total_bytes: int | None = None
    notes: list[str] = field(default_factory=list)
    recaps: int = 0
    card_total_bytes: int | None = None  # what the emulated card reports as its total memory
    emulation: Any = None  # the CardEmulation installed while the allocator is capped
    emulation_off: str | None = None  # why no emulation was installed, where the budget was applied
    RECAP_STEP = 16 * 2**20

    @classmethod
    def from_settings(cls, settings: dict[str, Any], cuda: bool) -> Budget:
        host = settings.get("host_budget", "none")
        card = budget_card(settings["budget"])
        return cls(limit_bytes=budget_bytes(settings["budget"]), cuda=cuda,
                   host_limit_bytes=None if host == "none" else parse_bytes(host),
                   card_total_bytes=card.total_mib * 2**20 if card else budget_bytes(settings["budget"]))

    def apply(self, outside_bytes: int) -> None:
        """Cap the allocator; `outside_bytes` is the device memory outside it right after CUDA init."""
        if not self.cuda:
            return
        import torch

        self.device_total_bytes = torch.cuda.get_device_properties(0).total_memory
        self.outside_allocator_bytes = outside_bytes
        self._set_cap()

    def observe(self, device_bytes: int, reserved_bytes: int) -> None:
        """Called with every memory sample: memory outside the allocator grows after start (CUDA loads
        kernel modules lazily, cuBLAS and cuDNN make workspaces, Triton kernels load); lower the cap
        as it does, so that allocator plus outside stays within the budget as on a real card."""
        outside = device_bytes - reserved_bytes
        if outside > self.outside_allocator_bytes + self.RECAP_STEP:
            self.outside_allocator_bytes = outside
            self.recaps += 1
            self._set_cap()

    def _set_cap(self) -> None:
        import torch

        cap = self.limit_bytes - self.outside_allocator_bytes - self.paged_optimizer_bytes
        if cap <= 0:
            raise ValueError(f"budget {self.limit_bytes} bytes leaves nothing for the allocator")
        if cap >= self.device_total_bytes:
            self.notes.append("budget exceeds the device: the allocator is not capped")
            self.allocator_cap_bytes = None
            self.emulation_off = "the budget exceeds the device, so the device answers as itself"
            return
        self.allocator_cap_bytes = cap
        torch.cuda.set_per_process_memory_fraction(cap / self.device_total_bytes)
        self._emulate_card()

    def _emulate_card(self) -> None:
        """Make torch.cuda answer as the emulated card once the allocator is capped (harness/core/card_emulation.py);
        it reads this budget's figures at every call, so later recaps reach it."""
        self.emulation_off = switched_off()
        if self.emulation is not None or self.emulation_off:
            return
        self.emulation = CardEmulation(
            total_bytes=self.card_total_bytes or self.limit_bytes, limit_bytes=self.limit_bytes,
            held_outside=lambda: self.outside_allocator_bytes + self.paged_optimizer_bytes,
            cap=lambda: self.allocator_cap_bytes)
        self.emulation.install()

    def release(self) -> None:
        """The cell has run: torch.cuda answers as the device again."""
        if self.emulation is not None:
            self.emulation.uninstall()

    def account_for_paged_optimizer(self, plan: Any, model: Any) -> None:
        """8-bit paged AdamW keeps the two 1-byte states of each trainable parameter of 100,000 elements or more
        in unified memory, outside the allocator: lower the cap by that much. The states of smaller parameters
        and every block absmax are allocated as any tensor (harness/core/paged_optimizer_state.py), so they stay
        inside the cap, as on a real card."""
        if not self.cuda or not plan.records.get("optimizer", {}).get("paged"):
            return
        sizes = [p.numel() for p in model.parameters() if p.requires_grad]
        self.paged_optimizer_bytes = paged_bytes(sizes)
        self.unpaged_optimizer_bytes = unpaged_bytes(sizes)
        self._set_cap()

    def judge(self, peak_device_bytes: int) -> str | None:
        """Why the cell did not fit, or None."""
        if peak_device_bytes > self.limit_bytes:
            where = "device memory of the whole process" if self.cuda else "resident set of the process"
            return (f"the {where} peaked at {shown_size(peak_device_bytes)}, over the "
                    f"{shown_size(self.limit_bytes)} budget")
        return None

    def judge_host(self, peak_unmapped_bytes: int | None) -> str | None:
        """Why the cell did not fit the host budget, or None (also where no budget is set, or /proc did not
        tell the figure)."""
        if self.host_limit_bytes is None or peak_unmapped_bytes is None or peak_unmapped_bytes <= self.host_limit_bytes:
            return None
        return (f"the host memory no file backs peaked at {peak_unmapped_bytes / GIB:.2f} GiB, over the "
                f"{self.host_limit_bytes / GIB:.2f} GiB host budget")

    def as_dict(self) -> dict[str, Any]:
        return {"limit_bytes": self.limit_bytes, "allocator_cap_bytes": self.allocator_cap_bytes,
                "outside_allocator_bytes": self.outside_allocator_bytes,
                "paged_optimizer_bytes": self.paged_optimizer_bytes,
                "unpaged_optimizer_bytes": self.unpaged_optimizer_bytes, "recaps": self.recaps,
                "device_total_bytes": self.device_total_bytes,
                "judged_on": "nvml process device memory" if self.cuda else "peak resident set",
                "host_limit_bytes": self.host_limit_bytes,
                "card_emulation": self._emulation_record(),
                "notes": self.notes}

    def _emulation_record(self) -> dict[str, Any] | None:
        if self.emulation is not None:
            return self.emulation.record()
        return not_emulated(self.emulation_off) if self.emulation_off else None
