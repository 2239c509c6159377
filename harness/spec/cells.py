"""A cell: one complete set of settings, with an id that depends on nothing else."""

from __future__ import annotations

import hashlib
import json
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
