"""What becomes of a result file that is already there: one decision, taken the same way by every command that
could replace it (the Snakefile's plan, `vramlab run-cell`, the evaluate stage).
Why it is so: docs/measurement.md."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.cache import cache_root, folder_fingerprint
from harness.results.model import CellResult, EvaluationResult, Status
from harness.results.store import NewerSchemaError, ResultFileError, check, set_aside, supersede, superseded_path
from harness.spec.cell_input import recorded_input

# what an error result records of its cause (records.error.cause): the cell's own, which stands until its input
# changes, or the machine's or a kill's, which says nothing of the cell, so that the next run measures it again
OF_THE_CELL, OF_THE_MACHINE, KILLED = "cell", "environment", "signal"
# for results written before records.error: their reason starts with the exception's name
_MACHINE_ERRORS = {name for name, kind in vars(builtins).items()
                   if isinstance(kind, type) and issubclass(kind, OSError)}


@dataclass(frozen=True)
class Redo:
    """An existing result file that is to be measured again, why, and where it is set aside first."""

    path: Path
    reason: str
    folder: str = "damaged"
    matrix: str | None = None  # a result that stands, replaced on purpose: kept in results/superseded/<matrix>/

    def set_aside(self) -> Path:
        return supersede(self.path, self.matrix) if self.matrix else set_aside(self.path, self.folder)

    def describe(self) -> str:
        where = superseded_path(self.path, self.matrix).parent if self.matrix else self.path.parent / self.folder
        return f"{self.reason}; it is set aside in {where}/ and measured again"


def replaced(path: Path, matrix: str) -> Redo:
    """A result that stands and is measured again all the same (run-cell --out naming it, or --force): it is
    moved to results/superseded/<matrix>/, never written over."""
    return Redo(path, f"{path}: replaced by a new measurement of its cell", "superseded", matrix)


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
    return _not_the_cells(path, result) or _cache_changed(path, result) or \
        _input_changed(path, result, settings if settings is not None else result.config)


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


def record_input(result: CellResult) -> None:
    """The digest of the user's data the cell read, so that an error it caused is redone once the data is fixed
    (harness/results/existing.py)."""
    found = recorded_input(result.config)
    if found:
        result.records.setdefault("input", found)


def error_record(error: BaseException, model_folder: Path | None = None) -> dict[str, str]:
    """records.error of a cell that raised `error`: an OSError is the machine's (a full disk, a folder that cannot
    be written, the network), anything else the cell's. Where its model came from the cache, the cache folder (by
    its place in the cache, never a local path) and what it held then: an error of a damaged cache file is measured
    again once that folder is mended (_cache_changed)."""
    record = {"type": type(error).__name__, "cause": OF_THE_MACHINE if isinstance(error, OSError) else OF_THE_CELL}
    root = cache_root().resolve()
    if model_folder is not None and Path(model_folder).resolve().is_relative_to(root):
        fingerprint = folder_fingerprint(Path(model_folder))
        if fingerprint:
            record.update(cache_folder=Path(model_folder).resolve().relative_to(root).as_posix(),
                          cache_fingerprint=fingerprint)
    return record


def _not_the_cells(path: Path, result: CellResult) -> Redo | None:
    """An error that came from a kill (a signal, the kernel's out-of-memory killer) or from the machine, not from
    the cell's settings, is measured again rather than kept as the cell's outcome."""
    if result.status is not Status.error:
        return None
    cause = (result.records.get("error") or {}).get("cause")
    ended = str((result.records.get("supervisor") or {}).get("exit") or "")
    if cause == KILLED or ended.startswith("was killed by"):
        why = f"its measuring process {ended or 'was killed'}"
    elif cause == OF_THE_MACHINE or (cause is None and (result.reason or "").split(":")[0] in _MACHINE_ERRORS):
        why = f"its error came from the machine, not from the cell ({(result.reason or '')[:120]})"
    else:
        return None
    return Redo(path, f"{path}: {why}", folder="superseded")


def _cache_changed(path: Path, result: CellResult) -> Redo | None:
    """An error of a cell whose model came from a cache folder that holds other files now (mended, rebuilt, or
    deleted to be built again): a damaged cache file may have caused it."""
    error = result.records.get("error") or {}
    folder, then = error.get("cache_folder"), error.get("cache_fingerprint")
    if result.status is not Status.error or not folder or not then:
        return None
    if folder_fingerprint(cache_root() / folder) == then:
        return None
    return Redo(path, f"{path}: its error came from the model cache folder {folder} as it was then, and it has "
                      "changed since (mended, or built again)", folder="superseded")


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
