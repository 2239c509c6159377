"""What a cell is to an experiment tracker, whichever tracker: its settings as parameters, its peaks, throughput,
MFU and evaluation scores as metrics, its loss (and step time) per optimizer step as series; and the matrix's report
figures as artifacts of one run beside the cells'."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.report.aggregate import load_evaluations, load_results
from harness.results import CellResult, Metrics
from harness.spec.cells import Cell
from harness.spec.matrix import evaluation_plan, load_matrix

Param = str | int | float | bool
# in a TensorBoard or W&B folder (or an MLflow file store), the file that keeps two exports into it from writing at
# once: one replaces a run's folder while the other's event writer is still filling it, and the store holds a mix
FOLDER_LOCK = ".vramlab-export.lock"
# a metric's name as every tracker takes it (MLflow: letters, digits, _ - . / and spaces)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-/]")


@dataclass(frozen=True)
class CellRun:
    cell_id: str
    name: str
    status: str
    params: dict[str, Param]  # the cell's settings, lists joined with commas
    metrics: dict[str, float]  # the scalar metrics measured, and the evaluation's scores
    series: dict[str, list[tuple[int, float]]]  # per optimizer step: (step, value)
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MatrixRuns:
    matrix: str
    cells: list[CellRun]
    figures: list[Path]  # the report's charts (PNG), artifacts of the matrix's own run
    documents: list[Path]  # the report itself and its tables, artifacts where a tracker keeps files


def metric_name(*parts: str) -> str:
    return "/".join(_UNSAFE.sub("_", part) for part in parts)


def _param(value: Any) -> Param:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return value if isinstance(value, str | int | float | bool) else str(value)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def cell_run(result: CellResult, scores: list[dict[str, Any]]) -> CellRun:
    """One cell's run: everything a tracker shows of it, from its result and its evaluations' rows."""
    metrics = {name: float(getattr(result.metrics, name)) for name in Metrics.columns()
               if _finite(getattr(result.metrics, name))}
    losses = [(step + 1, loss) for step, loss in enumerate(result.metrics.loss) if loss is not None and _finite(loss)]
    if losses:
        metrics["first_loss"], metrics["final_loss"] = losses[0][1], losses[-1][1]
    for row in scores:
        for kind in ("value", "baseline", "delta"):
            if _finite(row.get(kind)):
                metrics[metric_name("score" if kind == "value" else kind, row["task"], row["metric"])] = \
                    float(row[kind])
    series = {"loss": losses,
              "step_seconds": [(step + 1, float(s)) for step, s in enumerate(result.metrics.step_seconds)]}
    model = result.model
    tags = {"matrix": result.matrix, "cell_id": result.cell_id, "status": result.status.value,
            "reason": (result.reason or "")[:500], "model": result.config.get("model", ""),
            "model_commit": (model.commit or "") if model else "",
            "code_commit": (result.environment.git.commit or "") if result.environment else "",
            "device": result.environment.machine if result.environment else ""}
    return CellRun(result.cell_id, result.name, result.status.value,
                   {k: _param(v) for k, v in sorted(result.config.items())}, metrics,
                   {k: v for k, v in series.items() if v}, {k: v for k, v in tags.items() if v})


def matrix_runs(matrix: str, results_dir: Path, reports_dir: Path) -> MatrixRuns:
    """The matrix's cells that have a result (a cell not run yet has nothing to show), in matrix order, and its
    report's files where `vramlab report` has written them."""
    found: list[tuple[Cell, CellResult | None]] = [(cell, result) for cell, result
                                                   in load_results(matrix, results_dir, partial=True) if result]
    plan = evaluation_plan(matrix)
    rows = load_evaluations(found, results_dir, plan.task_names())[0] if plan.tasks else []
    cells = [cell_run(result, [r for r in rows if r["cell_id"] == result.cell_id and r["status"] == "ok"])
             for _, result in found if result]
    folder = reports_dir / load_matrix(matrix)[0]
    figures = sorted(folder.glob("*.png"))
    documents = [p for p in (folder / "report.md", folder / "cells.csv", folder / "steps.csv") if p.is_file()]
    return MatrixRuns(load_matrix(matrix)[0], cells, figures, documents)
