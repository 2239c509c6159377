"""What becomes of a result file that is already there: one decision, taken the same way by every command that
could replace it (the Snakefile's plan, `vramlab run-cell`, the evaluate stage).
Why it is so: docs/measurement.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.data.training import input_digest
from harness.results.model import CellResult, EvaluationResult, Status
from harness.results.store import NewerSchemaError, ResultFileError, check, set_aside
from harness.stack.models.facts import folder_digest


@dataclass(frozen=True)
class Redo:
    """An existing result file that is to be measured again, why, and where it is set aside first."""

    path: Path
    reason: str
    folder: str = "damaged"

    def set_aside(self) -> Path:
        return set_aside(self.path, self.folder)

    def describe(self) -> str:
        return f"{self.reason}; it is set aside in {self.path.parent / self.folder}/ and measured again"


def review_cell(path: Path, cell_id: str, settings: dict[str, Any] | None = None) -> Redo | None:
    """None where the file at `path` is a result of cell `cell_id` that stands (or there is no file)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        result = check(path)
    except NewerSchemaError:
        raise  # a newer vramlab's result stands: refused here, never set aside
    except ResultFileError as err:
        return Redo(path, str(err))
    if not isinstance(result, CellResult) or result.cell_id != cell_id:
        return Redo(path, f"{path}: holds the result of another cell ({result.cell_id}), not of {cell_id}")
    return _input_changed(path, result, settings if settings is not None else result.config)


def review_evaluation(path: Path, cell_id: str, task: str) -> Redo | None:
    """None where the file at `path` is an evaluation of `cell_id` on `task` (or there is no file)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        result = check(path)
    except NewerSchemaError:
        raise  # a newer vramlab's result stands: refused here, never set aside
    except ResultFileError as err:
        return Redo(path, str(err))
    if not isinstance(result, EvaluationResult) or result.cell_id != cell_id or result.task != task:
        return Redo(path, f"{path}: holds another result, not the evaluation of cell {cell_id} on {task}")
    return None


def recorded_input(settings: dict[str, Any]) -> dict[str, str]:
    """What a result records of the input it was measured on: the digest of the user's data and of a local model
    folder, where it has them."""
    found = {"data_sha256": input_digest(settings), "model_sha256": folder_digest(str(settings.get("model", "")))}
    return {key: digest for key, digest in found.items() if digest}


def record_input(result: CellResult) -> None:
    """The digest of the user's data the cell read, so that an error it caused is redone once the data is fixed
    (harness/results/existing.py)."""
    found = recorded_input(result.config)
    if found:
        result.records.setdefault("input", found)


def _input_changed(path: Path, result: CellResult, settings: dict[str, Any]) -> Redo | None:
    """A result whose recorded input (the user's data, a local model folder) is not what is there now: an error may
    have come from it, and any other result measured other input than the cell now names."""
    recorded = result.records.get("input") or {}
    now = recorded_input(settings)
    changed = [key for key in ("data_sha256", "model_sha256") if recorded.get(key) and now.get(key) not in
               (None, recorded[key])]
    if not changed:
        return None
    what = (f"data {settings.get('data')!r}" if changed[0] == "data_sha256" else
            f"the model folder {settings.get('model')!r} (its config.json or files)")
    came = ("its error came from" if result.status is Status.error else
            f"its {result.status.value} result was measured on")
    return Redo(path, f"{path}: {came} {what} as it was then, and it has changed since", folder="superseded")
