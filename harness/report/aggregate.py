"""Result files -> tidy tables under reports/<matrix>/: cells.csv, steps.csv, quality.csv, items.csv, comparisons.csv,
estimate.csv, environment.csv, design.json and, where `vramlab check --fresh` judged the results, freshness.csv.
Why it is so: docs/matrix-files.md."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pandas as pd

from harness import results
from harness.core.atomic_files import write_csv_atomic
from harness.core.made_folders import make_folders
from harness.core.path_problems import not_a_regular_file
from harness.estimate import calibration
from harness.report.comparisons import comparisons_table
from harness.report.freshness import freshness_rows, stale_ids, without
from harness.report.kept import keep_measured
from harness.results import STEP_COLUMNS, CellResult, EvaluationResult
from harness.results.store import FRESHNESS_FILE
from harness.spec.cells import Cell
from harness.spec.design import resolve
from harness.spec.matrix import comparison_plan, evaluation_plan, expand, load_matrix, matrix_path
from harness.spec.owners import check_reports_folder, check_results_folder
from harness.spec.settings import SETTINGS

ESTIMATE_COLUMNS = ["order", "cell_id", "name", "status", "measured_bytes", "predicted_bytes", "error",
                    "measured_allocated_bytes", "predicted_allocated_bytes", "allocated_error", "peak_moment",
                    "unpredicted"]
QUALITY_COLUMNS = ["order", "cell_id", "name", "task", "status", "reason", "metric", "value", "stderr",
                   "stderr_method", "n", "higher_is_better", "baseline", "baseline_stderr", "delta", "limit",
                   "partial", "outside_share", "seconds", "lm_eval_version", "eval_device",
                   "eval_peak_allocated_bytes", "eval_peak_device_bytes", "eval_budget_bytes"]


def pending_row(cell: Cell, order: int) -> dict[str, Any]:
    """Stands in a partial table for a cell that has not run yet; never written as a result file."""
    row: dict[str, Any] = {"order": order, "cell_id": cell.cell_id, "name": cell.name, "status": "pending",
                           "reason": "not run yet: no result file"}
    for name in SETTINGS:
        value = cell.settings.get(name)
        row[name] = ",".join(value) if isinstance(value, list) else value
    return row


def load_results(matrix: str, results_dir: Path, partial: bool = False) -> list[tuple[Cell, CellResult | None]]:
    """The matrix's cells in matrix order with their results. With `partial`, a cell without a result file
    yet (a matrix completed over several GPU sessions) comes with None."""
    found: list[tuple[Cell, CellResult | None]] = []
    for cell in expand(matrix, check_model=False):  # reading results needs no model here
        path = results.result_path(results_dir, cell.matrix, cell.cell_id)
        if path.is_file():
            found.append((cell, _named(checked_result(path, cell.cell_id), cell.name)))
        elif (kind := not_a_regular_file(path)) is not None:
            raise results.ResultFileError(f"{path} is {kind}, not the result file of cell {cell.cell_id} "
                                          f"({cell.name}) of {matrix}; move it away (the cell is then measured again)")
        elif partial:
            found.append((cell, None))
        else:
            raise results.ResultFileError(f"cell {cell.cell_id} ({cell.name}) of {matrix} has no result file {path}; "
                                          "run its cells first, or aggregate with --partial to list it as pending")
    return found


def _named(result: Any, name: str) -> Any:
    """The result under the matrix's name for its cell: the id is the cell, the name only how the matrix calls it,
    so a cell renamed in the matrix after it ran is shown under its new name in every table and in design.json."""
    return result if result.name == name else result.model_copy(update={"name": name})


def checked_result(path: Path, cell_id: str) -> CellResult:
    """The cell's result, as `vramlab check` accepts it: valid, and the result of the cell its file is named by."""
    result = results.check(path)
    if not isinstance(result, CellResult) or result.cell_id != cell_id:
        raise results.ResultFileError(f"{path}: holds another result, not the one of cell {cell_id}")
    return result


def _device(evaluation: EvaluationResult) -> str | None:
    """Where the evaluation ran, as its file records it: the GPU's name, or the CPU (none: the file says nothing)."""
    env = evaluation.environment
    if env is None:
        return None
    return env.gpu or ("CPU" if not env.cuda_available else None)


def _quality_rows(order: int, evaluation: EvaluationResult) -> list[dict[str, Any]]:
    common = {"order": order, "cell_id": evaluation.cell_id, "name": evaluation.name, "task": evaluation.task,
              "status": evaluation.status.value, "reason": evaluation.reason, "limit": evaluation.limit,
              "partial": evaluation.partial, "seconds": evaluation.seconds,
              "outside_share": evaluation.task_config.get("vocabulary_outside_share"),
              "lm_eval_version": evaluation.lm_eval_version, "eval_device": _device(evaluation),
              # the evaluation's own device peak and the budget it was held to (none recorded: not held, or a CPU)
              "eval_peak_allocated_bytes": (evaluation.memory or {}).get("peak_allocated_bytes"),
              "eval_peak_device_bytes": (evaluation.memory or {}).get("peak_device_bytes"),
              "eval_budget_bytes": (evaluation.memory or {}).get("budget_bytes")}
    if not evaluation.scores:
        return [common]
    baseline = {s.metric: s for s in evaluation.baseline or []}
    rows = []
    for score in evaluation.scores:
        base = baseline.get(score.metric)
        delta = score.value - base.value if base and base.value is not None and score.value is not None else None
        rows.append({**common, "metric": score.metric, "value": score.value, "stderr": score.stderr,
                     "stderr_method": score.stderr_method, "n": score.n, "higher_is_better": score.higher_is_better,
                     "baseline": base.value if base else None, "baseline_stderr": base.stderr if base else None,
                     "delta": delta})
    return rows


ITEM_COLUMNS = ["order", "cell_id", "name", "seed", "task", "model", "item"]


def _item_rows(order: int, seed: Any, evaluation: EvaluationResult) -> list[dict[str, Any]]:
    common = {"order": order, "cell_id": evaluation.cell_id, "name": evaluation.name, "seed": seed,
              "task": evaluation.task}
    return [{**common, "model": model, **item}
            for model, items in (("trained", evaluation.items), ("untrained", evaluation.baseline_items))
            for item in items or ()]


def load_evaluations(found: list[tuple[Cell, CellResult | None]], results_dir: Path,
                     tasks: list[str]) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """The quality rows (one a cell, task and metric) and each recorded item's outcome, trained and untrained
    (one row an evaluation, model and item), from one read of every evaluation file."""
    rows: list[dict[str, Any]] = []
    item_rows: list[dict[str, Any]] = []
    for order, (cell, _) in enumerate(found):
        folder = results.evaluation_path(results_dir, cell.matrix, cell.cell_id, "-").parent
        if folder.exists() and not folder.is_dir():  # else the cell's scores are left out, unsaid
            raise results.ResultFileError(f"{folder}: a file where the folder of cell {cell.cell_id}'s evaluations "
                                          "belongs; move it away (evaluations/<cell id>/<task>.json)")
        for task in tasks:
            path = results.evaluation_path(results_dir, cell.matrix, cell.cell_id, task)
            if path.is_file():
                evaluation = results.check(path)
                if not isinstance(evaluation, EvaluationResult):
                    raise results.ResultFileError(f"{path}: a cell result where an evaluation result was expected")
                evaluation = _named(evaluation, cell.name)
                rows.extend(_quality_rows(order, evaluation))
                if evaluation.status.value == "ok":
                    item_rows.extend(_item_rows(order, cell.settings["seed"], evaluation))
    items = pd.DataFrame(item_rows)
    return rows, items.reindex(columns=[*ITEM_COLUMNS, *(c for c in items.columns if c not in ITEM_COLUMNS)])


def estimate_rows(found: list[tuple[Cell, CellResult | None]]) -> pd.DataFrame:
    """The estimate beside the measured device peak of each cell measured on a CUDA GPU, in matrix order."""
    from dataclasses import asdict

    rows = []
    for order, (_, result) in enumerate(found):
        measured = calibration.row(result.model_dump(mode="json"), calibration.MEASURED) if result else None
        if measured is not None:
            rows.append({"order": order, **asdict(measured), "error": measured.error,
                         "allocated_error": measured.allocated_error})
    return pd.DataFrame(rows, columns=ESTIMATE_COLUMNS).astype(
        {c: "Int64" for c in ESTIMATE_COLUMNS if c.endswith("_bytes")})


ENVIRONMENT = ("gpu", "gpu_memory_bytes", "gpu_capability", "cuda", "driver", "cpu", "cpu_count", "python",
               "device_memory_source")


def environment_rows(found: list[tuple[Cell, CellResult | None]]) -> pd.DataFrame:
    """Each distinct environment of the cells with a result, in first-seen order, with its number of cells."""
    rows: dict[str, dict[str, Any]] = {}
    for _, result in found:
        if result is None:
            continue
        env = result.environment.model_dump(mode="json") if result.environment else {}
        budget = result.budget.model_dump(mode="json") if result.budget else {}
        row = {**{k: env.get(k) for k in ENVIRONMENT}, "budget_judged_on": budget.get("judged_on"),
               "allocator_capped": budget.get("allocator_cap_bytes") is not None,
               **{f"version:{k}": v for k, v in sorted((env.get("versions") or {}).items())}}
        key = json.dumps(row, sort_keys=True, default=str)
        rows.setdefault(key, {"cells": 0, **row})["cells"] += 1
    return pd.DataFrame(list(rows.values()))


def tables(found: list[tuple[Cell, CellResult | None]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = pd.DataFrame([r.row(i) if r else pending_row(c, i) for i, (c, r) in enumerate(found)])
    steps = pd.DataFrame([s for _, r in found if r for s in r.steps()], columns=STEP_COLUMNS)
    return cells, steps


CELL_FILE = re.compile(r"[0-9a-f]{12}\.json")


def _unread_json(folder: Path) -> list[Path]:
    """JSON files of a matrix's results folder that no table reads: a result copied under another name (x.json)
    would otherwise be left out without a word."""
    return sorted(p for p in folder.glob("*.json") if not CELL_FILE.fullmatch(p.name) and p.name != FRESHNESS_FILE)


def aggregate(matrix: str, results_dir: Path, reports_dir: Path, partial: bool = False) -> Path:
    # the results and reports folders are this matrix file's (harness/spec/owners.py), as Snakemake and run-cell hold
    # them; never another's: said before any file is looked for, since a missing one would be the other's doing
    name = load_matrix(matrix)[0]
    check_results_folder(results_dir, name, matrix_path(matrix), writes=False)  # only read here
    check_reports_folder(reports_dir, name, matrix_path(matrix))
    found = load_results(matrix, results_dir, partial)
    for stray in _unread_json(results_dir / name):
        logging.getLogger("vramlab").warning(
            "%s is named after no cell (a result is <cell id>.json), so no table reads it; move it out of the folder "
            "(`vramlab check` names what it holds)", stray)
    cells, steps = tables(found)
    plan = evaluation_plan(matrix)
    # every file is read before any table is written: a bad one leaves the tables as they were
    quality_rows, items = load_evaluations(found, results_dir, plan.task_names()) if plan.tasks else (None, None)
    quality = pd.DataFrame(quality_rows, columns=QUALITY_COLUMNS) if quality_rows is not None else None
    # a stale cell's scores are in no comparison: cells.csv keeps its row, the report names it
    freshness = freshness_rows([(cell.cell_id, cell.name) for cell, _ in found], results_dir / name)
    quality, items = without(quality, stale_ids(freshness)), without(items, stale_ids(freshness))
    estimate = estimate_rows(found)
    design = resolve(load_matrix(matrix)[1], [cell for cell, _ in found])
    comparisons = comparisons_table(comparison_plan(matrix), cells, quality, items, design.baseline) \
        if quality is not None else None
    out = reports_dir / name
    keep_measured(out / "cells.csv", cells, ["cell_id"], "status", "pending", results_dir / name, "cells")
    make_folders(out)
    write_csv_atomic(out / "cells.csv", cells)
    write_csv_atomic(out / "steps.csv", steps)
    write_csv_atomic(out / "estimate.csv", estimate)
    write_csv_atomic(out / "environment.csv", environment_rows(found))
    design.write(out / "design.json")
    if freshness is not None:
        write_csv_atomic(out / "freshness.csv", freshness)
    else:  # a record since removed (its results measured again): no verdict of it stands
        (out / "freshness.csv").unlink(missing_ok=True)
    if quality is not None:
        write_csv_atomic(out / "quality.csv", quality)
        if items is not None and len(items):
            write_csv_atomic(out / "items.csv", items)
        write_csv_atomic(out / "comparisons.csv", comparisons)
    return out / "cells.csv"
