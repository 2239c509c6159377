"""Result files -> tidy tables: reports/<matrix>/cells.csv (one row a cell) and steps.csv (one row a
step of a cell). Only the matrix's current cells are read, in matrix order; a cell with no result file
is an error here, because Snakemake only aggregates once every cell has one (unless asked for a
partial table, where it is a `pending` row)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from harness import results
from harness.matrix import expand
from harness.settings import SETTINGS

SCALAR_METRICS = ("peak_allocated_bytes", "peak_reserved_bytes", "peak_device_bytes", "peak_host_bytes",
                  "peak_host_unmapped_bytes", "peak_host_pinned_bytes", "tokens_per_second",
                  "tokens_per_second_mean", "median_step_seconds", "step_seconds_iqr", "measured_steps",
                  "tokens_per_step", "load_seconds", "train_seconds", "flops_per_token", "mfu")


def _row(result: dict[str, Any], order: int) -> dict[str, Any]:
    config = result["config"]
    metrics = result["metrics"]
    env = result.get("environment") or {}
    records = result.get("records") or {}
    row: dict[str, Any] = {"order": order, "cell_id": result["cell_id"], "name": result["name"],
                           "status": result["status"], "reason": result["reason"]}
    for name in SETTINGS:
        value = config.get(name)
        row[name] = ",".join(value) if isinstance(value, list) else value
    for name in SCALAR_METRICS:
        row[name] = metrics.get(name)
    losses = [x for x in metrics.get("loss") or [] if x is not None]
    row["first_loss"] = losses[0] if losses else None
    row["final_loss"] = losses[-1] if losses else None
    # phases are recorded in the order they ran; a failed cell failed in its last one
    phases = list(metrics.get("phases") or {})
    row["failed_phase"] = phases[-1] if phases and result["status"] in ("oom", "error") else None
    row["budget_bytes"] = (result.get("budget") or {}).get("limit_bytes")
    row["attention_kernel"] = (records.get("attention") or {}).get("kernel")
    row["attention_fallback"] = (records.get("attention") or {}).get("fallback")
    row["vocabulary_size"] = (records.get("vocabulary") or {}).get("size")
    row["vocabulary_outside_share"] = (records.get("vocabulary") or {}).get("outside_share")
    row["trainable_parameters"] = (records.get("adapter") or {}).get("trainable_parameters")
    row["random_weights"] = (result.get("model") or {}).get("random_weights")
    row["device"] = env.get("gpu") or env.get("cpu")
    row["torch"] = (env.get("versions") or {}).get("torch")
    row["code_commit"] = _short_commit(env.get("git") or {})
    row["quality"] = result.get("quality")
    return row


def _short_commit(git: dict[str, Any]) -> str | None:
    """The commit a cell ran at, as a matrix completed over several sessions may mix them."""
    if not git.get("commit"):
        return None
    return git["commit"][:7] + ("+dirty" if git.get("dirty") else "")


def _steps(result: dict[str, Any]) -> list[dict[str, Any]]:
    metrics = result["metrics"]
    warmup = result["config"]["warmup_steps"]
    seconds = metrics.get("step_seconds") or []
    losses = metrics.get("loss") or []
    return [{"cell_id": result["cell_id"], "name": result["name"], "step": i + 1,
             "seconds": seconds[i] if i < len(seconds) else None,
             "loss": losses[i] if i < len(losses) else None, "warmup": i < warmup}
            for i in range(max(len(seconds), len(losses)))]


def load_results(matrix: str, results_dir: Path, partial: bool = False) -> list[dict[str, Any]]:
    """The matrix's results in matrix order. With `partial`, a cell without a result file yet (a matrix
    completed over several GPU sessions) gets a placeholder row with status `pending`."""
    found = []
    for cell in expand(matrix):
        path = results.result_path(results_dir, cell.matrix, cell.cell_id)
        if path.is_file():
            found.append(results.read(path))
        elif partial:
            found.append(results.pending_result(cell))
        else:
            raise FileNotFoundError(f"cell {cell.cell_id} ({cell.name}) of {matrix} has no result file {path}")
    return found


def tables(found: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = pd.DataFrame([_row(r, i) for i, r in enumerate(found)])
    steps = pd.DataFrame([s for r in found for s in _steps(r)],
                         columns=["cell_id", "name", "step", "seconds", "loss", "warmup"])
    return cells, steps


def aggregate(matrix: str, results_dir: Path, reports_dir: Path, partial: bool = False) -> Path:
    found = load_results(matrix, results_dir, partial)
    name = found[0]["matrix"]
    cells, steps = tables(found)
    out = reports_dir / name
    out.mkdir(parents=True, exist_ok=True)
    cells.to_csv(out / "cells.csv", index=False)
    steps.to_csv(out / "steps.csv", index=False)
    return out / "cells.csv"
