"""A cell: one complete set of settings, with an id that depends on nothing else; cells repeated over seeds form
a group (named like the cell without `/seed=N`); what differs between two sets of settings, said the same way
everywhere ("quantization nf4, context 8192")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.spec.conflicts import Conflict, first_conflict
from harness.spec.settings import hashed


def canonical_json(settings: dict[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def cell_id_of(settings: dict[str, Any]) -> str:
    """Stable across runs, machines and matrix files: the same settings always give the same id, so
    a cell shared by two matrices (or kept while a matrix grows) is recognised as done. Settings added
    after results were committed count only where a cell moves them off their default
    (harness/spec/settings.py), so adding a setting never renames the cells measured before it."""
    return hashlib.sha256(canonical_json(hashed(settings)).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Cell:
    matrix: str
    name: str
    settings: dict[str, Any]
    varied: dict[str, Any] = field(default_factory=dict)  # the axis levels that define this cell

    @property
    def cell_id(self) -> str:
        return cell_id_of(self.settings)

    @property
    def conflict(self) -> Conflict | None:
        return first_conflict(self.settings)

    def as_dict(self) -> dict[str, Any]:
        return {"matrix": self.matrix, "name": self.name, "cell_id": self.cell_id,
                "varied": self.varied, "settings": self.settings}


NOT_A_DIFFERENCE = ("seed", "name")


def group_name(name: str) -> str:
    return name.split("/seed=")[0]


def _same(a: Any, b: Any) -> bool:
    # cells.csv holds every value as text (lists joined with commas), a Cell holds the YAML value
    return str(a) == str(b)


def differences(settings: Mapping[str, Any], reference: Mapping[str, Any],
                ignore: Iterable[str] = ()) -> dict[str, Any]:
    """The settings (in `settings`' order) whose value differs from the reference's; the seed never counts."""
    skip = {*NOT_A_DIFFERENCE, *ignore}
    return {k: v for k, v in settings.items() if k not in skip and k in reference and not _same(v, reference[k])}


def describe(change: Mapping[str, Any]) -> str:
    """{'quantization': 'none', 'lora_targets': ['q_proj', 'v_proj']}
    -> 'quantization none, lora_targets q_proj,v_proj'"""
    return ", ".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in change.items())
