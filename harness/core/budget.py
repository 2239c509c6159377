"""A memory budget that behaves like a real card of that size. Why it is so: docs/measurement.md."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harness.core.gpu_cards import CARDS, Card
from harness.core.suggest import did_you_mean

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

GIB = 2**30
_BINARY = {"KIB", "MIB", "GIB", "TIB"}
BUDGET_KEYS = ("card", "display_reserve")


def _size_problem(value: Any) -> str | None:
    """A size names its unit, and the binary one a card's size is given in: '16 GB' cards hold 16 GiB."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(value)) if not isinstance(value, bool) else None
    if match is None:
        return f"{value!r} is not a memory size; write it like '16GiB'"
    unit = match.group(2).upper()
    if not unit:
        return f"{value!r} has no unit; write it like '16GiB' (a bare number would be read as bytes)"
    if unit in ("KB", "MB", "GB", "TB"):
        return (f"{value!r} is in decimal units ({parse_bytes(value) / 2**30:.2f} GiB); a '16 GB' card holds 16 GiB: "
                f"write {match.group(1)}{unit[0]}iB")
    if unit not in _BINARY:
        return f"{value!r}: unknown unit {match.group(2)!r}; use KiB, MiB, GiB or TiB"
    if parse_bytes(value) < 2**20:
        return f"{value!r} is less than 1 MiB: no model trains in that"
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
        problem = _card_problem(value["card"]) or (_size_problem(value["display_reserve"])
                                                   if "display_reserve" in value else None)
        if problem:
            return problem
        if budget_bytes(value) < 2**20:
            return f"display_reserve {value['display_reserve']!r} leaves nothing of the card's memory"
        return None
    if isinstance(value, str) and value.strip() and value.strip()[0].isalpha():
        return _card_problem(value)
    return _size_problem(value)


def host_budget_problem(value: Any) -> str | None:
    return None if value == "none" else _size_problem(value)


def budget_card(value: Any) -> Card | None:
    """The card a budget names, or None for a plain size."""
    name = value.get("card") if isinstance(value, dict) else value
    return CARDS.get(name) if isinstance(name, str) else None


def canonical_budget(value: Any) -> Any:
    """A card without a display reserve is the card: {card: rtx4080} and {card: rtx4080, display_reserve: 0}
    are the cell `budget: rtx4080` is, with its id."""
    if isinstance(value, dict) and parse_bytes(value.get("display_reserve", 0)) == 0:
        return value["card"]
    return value


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
    allocator_cap_bytes: int | None = None
    device_total_bytes: int | None = None
    notes: list[str] = field(default_factory=list)
    recaps: int = 0
    RECAP_STEP = 16 * 2**20

    @classmethod
    def from_settings(cls, settings: dict[str, Any], cuda: bool) -> Budget:
        host = settings.get("host_budget", "none")
        return cls(limit_bytes=budget_bytes(settings["budget"]), cuda=cuda,
                   host_limit_bytes=None if host == "none" else parse_bytes(host))

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
            return
        self.allocator_cap_bytes = cap
        torch.cuda.set_per_process_memory_fraction(cap / self.device_total_bytes)

    def account_for_paged_optimizer(self, plan: Any, model: Any) -> None:
        """8-bit paged AdamW keeps two 1-byte states per trainable parameter in unified memory,
        outside the allocator; lower the cap by that much."""
        if not self.cuda or not plan.records.get("optimizer", {}).get("paged"):
            return
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        self.paged_optimizer_bytes = 2 * trainable
        self._set_cap()

    def judge(self, peak_device_bytes: int) -> str | None:
        """Why the cell did not fit, or None."""
        if peak_device_bytes > self.limit_bytes:
            where = "device memory of the whole process" if self.cuda else "resident set of the process"
            return (f"the {where} peaked at {peak_device_bytes / GIB:.2f} GiB, over the "
                    f"{self.limit_bytes / GIB:.2f} GiB budget")
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
                "paged_optimizer_bytes": self.paged_optimizer_bytes, "recaps": self.recaps,
                "device_total_bytes": self.device_total_bytes,
                "judged_on": "nvml process device memory" if self.cuda else "peak resident set",
                "host_limit_bytes": self.host_limit_bytes,
                "notes": self.notes}
