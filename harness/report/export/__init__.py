"""`vramlab export`: a matrix's results into the experiment tracker a lab compares runs in (MLflow, TensorBoard,
W&B), after the fact and offline. Training logs to no tracker (report_to=[]): a tracker inside a measured run would
perturb what it measures. Why it is so: docs/export.md."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from harness.core.errors import UsageError
from harness.core.trackers import TRACKERS
from harness.report.export import mlflow_runs, tensorboard_events, wandb_runs
from harness.report.export.runs import MatrixRuns, matrix_runs

Writer = Callable[[MatrixRuns, str], str]
# each tracker's writer, in the order harness/core/trackers.py names them
WRITERS: dict[str, Writer] = dict(zip(TRACKERS, (mlflow_runs.write, tensorboard_events.write, wandb_runs.write),
                                      strict=True))


def export(matrix: str, tracker: str, out: str, results_dir: Path, reports_dir: Path) -> str:
    """Every cell of `matrix` with a result as a run of `tracker` under `out`, the report's figures beside them;
    what was written, in a line."""
    runs = matrix_runs(matrix, results_dir, reports_dir)
    if not runs.cells:  # an empty experiment would read as a matrix that measured nothing
        raise UsageError(f"no cell of {runs.matrix} has a result in {results_dir}/{runs.matrix}/, so there is "
                         "nothing to export; run its cells first (snakemake), or give --results-dir")
    if not runs.figures and not runs.documents:  # the cells alone would pass for the matrix's whole export
        logging.getLogger("vramlab").warning(
            "no report of %s in %s/ (no report.md, tables or charts), so its cells go without them; `vramlab report "
            "%s` writes it there, or give --reports-dir where it is", runs.matrix, reports_dir / runs.matrix,
            runs.matrix)
    return WRITERS[tracker](runs, out)
