"""`vramlab export`: a matrix's results into the experiment tracker a lab compares runs in (MLflow, TensorBoard,
W&B), after the fact and offline. Training logs to no tracker (report_to=[]): a tracker inside a measured run would
perturb what it measures. Why it is so: docs/export.md."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from harness.core.errors import UsageError
from harness.core.file_locks import held
from harness.core.path_problems import published_place
from harness.core.trackers import TRACKERS
from harness.report.export import mlflow_runs, tensorboard_events, wandb_runs
from harness.report.export.runs import FOLDER_LOCK, MatrixRuns, matrix_runs

Writer = Callable[[MatrixRuns, str], str]
# each tracker's writer, in the order harness/core/trackers.py names them
WRITERS: dict[str, Writer] = dict(zip(TRACKERS, (mlflow_runs.write, tensorboard_events.write, wandb_runs.write),
                                      strict=True))


def export(matrix: str, tracker: str, out: str, results_dir: Path, reports_dir: Path) -> str:
    """Every cell of `matrix` with a result as a run of `tracker` under `out`, the report's figures beside them;
    what was written, in a line."""
    _outside_published(tracker, out)
    runs = matrix_runs(matrix, results_dir, reports_dir)
    if not runs.cells:  # an empty experiment would read as a matrix that measured nothing
        raise UsageError(f"no cell of {runs.matrix} has a result in {results_dir}/{runs.matrix}/, so there is "
                         "nothing to export; run its cells first (snakemake), or give --results-dir")
    if not runs.figures and not runs.documents:  # the cells alone would pass for the matrix's whole export
        logging.getLogger("vramlab").warning(
            "no report of %s in %s/ (no report.md, tables or charts), so its cells go without them; `vramlab report "
            "%s` writes it there, or give --reports-dir where it is", runs.matrix, reports_dir / runs.matrix,
            runs.matrix)
    _figures_readable(runs)
    if tracker == "mlflow":  # a local MLflow store is locked by its writer, which knows where the store lies
        return WRITERS[tracker](runs, out)
    Path(out).mkdir(parents=True, exist_ok=True)
    with held(Path(out) / FOLDER_LOCK, f"another export is writing into {out}; waiting for it to end"):
        return WRITERS[tracker](runs, out)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _figures_readable(runs: MatrixRuns) -> None:
    """Every figure is a whole PNG before any run is written: one that cannot be read (emptied, cut short) would end
    the export half-way, with the cells' runs written and no word of which figure it was."""
    from PIL import Image  # heavy: only where an export reads its figures

    for figure in runs.figures:
        try:
            with figure.open("rb") as file:
                if file.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
                    raise ValueError("no PNG signature" if figure.stat().st_size else "an empty file")
            with Image.open(figure) as image:
                image.load()
        except (OSError, ValueError, SyntaxError) as err:  # PIL says a damaged PNG with SyntaxError
            raise UsageError(f"{figure}: not a readable PNG image ({' '.join(str(err).split())[:120]}); draw the "
                             f"report's charts again (`vramlab report {runs.matrix}`) or give --reports-dir where "
                             "they are whole") from None


def _outside_published(tracker: str, out: str) -> None:
    """A tracker's store is no part of a checkout's published files, whichever address names it (a folder, a file:
    URI, a SQLite database and the artifacts beside it): its files there would pass for the published ones, and git
    would show them among them."""
    places = mlflow_runs.local_places(out) if tracker == "mlflow" else [("its folder", Path(out))]
    for what, path in places:
        place = published_place(path)
        if place is not None:
            raise UsageError(f"--out {out}: {what} {path} lies in {place}; give the tracker a place outside it (by "
                             f"default exports/{tracker})")
