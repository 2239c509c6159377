"""results/<matrix>/freshness.json: what `vramlab check --fresh` found of each cell result of a matrix, against the
fingerprint the current code gives on the machine that checked (harness/results/freshness.py). It sits beside the
results it judges, so that the aggregate (harness/report/aggregate.py) carries it into the tables and the report
leaves stale cells out of every comparison, from result-side files only. Why it is so: docs/freshness.md."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from harness.results.model import GitRecord, Strict
from harness.results.store import FRESHNESS_FILE, ResultFileError, _load_json, write_atomic

FRESHNESS_SCHEMA_VERSION: Literal[1] = 1


class Verdict(StrEnum):
    fresh = "fresh"  # every component the result records is what the current code gives
    stale = "stale"  # at least one component differs: the current code would not reproduce it under its id
    unknown = "unknown"  # none differs, but some were not recorded (an older result) or cannot be told here
    not_judged = "not judged"  # not an ok result: there is no behaviour to reproduce


class Component(StrEnum):
    same = "same"
    differs = "differs"
    not_recorded = "not recorded"
    cannot_tell = "cannot tell here"


class ComponentCheck(Strict):
    component: str = Field(description="model file, tokenizer, kept token set, training data, evaluation data (task)")
    state: Component
    recorded: str | None = None
    now: str | None = None
    detail: str | None = Field(default=None, description="why it cannot be told, or what differs, in words")

    def phrase(self) -> str:
        """The component and its state, with what differs or why it cannot be told."""
        return f"{self.component} {self.state.value}" + (f" ({self.detail})" if self.detail else "")


class CellFreshness(Strict):
    cell_id: str = Field(pattern=r"^[0-9a-f]{12}$")
    name: str
    result_sha256: str = Field(description="of the result file judged: a file written since is not judged here")
    verdict: Verdict
    fingerprint_recorded: bool
    components: list[ComponentCheck] = Field(default_factory=list)

    def stale_components(self) -> list[ComponentCheck]:
        return [c for c in self.components if c.state is Component.differs]

    def said(self) -> str:
        """Each component that differs (stale), or each that could not be told (unknown), in words."""
        shown = self.stale_components() or [c for c in self.components if c.state is not Component.same]
        return "; ".join([*([] if self.fingerprint_recorded or self.verdict is Verdict.not_judged else
                            ["no fingerprint recorded"]), *(c.phrase() for c in shown)])

    def line(self) -> str:
        """One line: the cell, its verdict and why."""
        said = self.said()
        return f"{self.name} ({self.cell_id}): {self.verdict.value}" + (f": {said}" if said else "")


class FreshnessRecord(Strict):
    """results/<matrix>/freshness.json"""

    schema_version: Literal[1] = FRESHNESS_SCHEMA_VERSION
    kind: Literal["freshness"] = "freshness"
    matrix: str
    checked_at: str
    checked_with: GitRecord = Field(description="the code that computed the fingerprints again")
    fingerprint_version: int
    host: str
    cells: list[CellFreshness]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_freshness(folder: Path, record: FreshnessRecord) -> Path:
    path = Path(folder) / FRESHNESS_FILE
    write_atomic(path, record)
    return path


def read_freshness(folder: Path) -> FreshnessRecord | None:
    """The matrix's freshness record, None where no check wrote one; a damaged one is a ResultFileError naming it."""
    path = Path(folder) / FRESHNESS_FILE
    if not path.is_file():
        return None
    try:
        record = FreshnessRecord.model_validate(_load_json(path))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ResultFileError(f"{path}: {where}: {first['msg']}; run `vramlab check --fresh {folder}` to write it "
                              "again") from None
    here = Path(folder).resolve().name  # a matrix's results folder is named after it (check --fresh writes no other)
    if record.matrix != here:  # copied from another matrix's folder: its counts would be told as this matrix's
        raise ResultFileError(f"{path}: a freshness record of the matrix {record.matrix!r}, not of {here!r} whose "
                              f"results are here; run `vramlab check --fresh {folder}` to write {here}'s own, or "
                              "remove it")
    return record


def standing(record: FreshnessRecord | None, folder: Path) -> dict[str, CellFreshness]:
    """The record's verdicts, by cell id, on the result files that are there now: a verdict on a file since
    replaced (the cell measured again) or moved away says nothing of what is there."""
    if record is None:
        return {}
    found = {}
    for cell in record.cells:
        path = Path(folder) / f"{cell.cell_id}.json"
        if path.is_file() and file_sha256(path) == cell.result_sha256:
            found[cell.cell_id] = cell
    return found
