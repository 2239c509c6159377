"""A matrix as TensorBoard runs: `out/<matrix>/<cell name>/` holds a cell's event file (its settings and metrics as
hyperparameters, its metrics as scalars, its loss and step time per optimizer step), `out/<matrix>/report/` the
report's figures as images. A cell exported before is replaced (its folder written anew): TensorBoard would show
two event files of one run as one run with every point twice."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from harness.report.export.runs import MatrixRuns

REPORT = "report"


def run_folder(out: Path, matrix: str, name: str) -> Path:
    """A run's folder: the cell's name made a folder name (its id where the name would collide with the report's)."""
    safe = re.sub(r"[^A-Za-z0-9_.,=+-]", "_", name)
    return out / matrix / (safe if safe != REPORT else f"{safe}-cell")


def write(runs: MatrixRuns, out: str) -> str:
    import matplotlib.image
    import numpy as np
    from torch.utils.tensorboard import SummaryWriter
    from torch.utils.tensorboard.summary import hparams

    root = Path(out)
    for cell in runs.cells:
        folder = run_folder(root, runs.matrix, cell.name)
        shutil.rmtree(folder, ignore_errors=True)
        with SummaryWriter(log_dir=str(folder)) as writer:
            for summary in hparams({**cell.params, **{f"tag/{k}": v for k, v in cell.tags.items()}},
                                   {f"hparams/{k}": v for k, v in cell.metrics.items()}):
                writer.file_writer.add_summary(summary)
            for name, value in cell.metrics.items():
                writer.add_scalar(f"hparams/{name}", value, 0)
            for name, points in cell.series.items():
                for step, value in points:
                    writer.add_scalar(f"train/{name}", value, step)
            writer.add_text("cell", f"{cell.name} ({cell.cell_id}): {cell.status}"
                                    + (f", {cell.tags['reason']}" if "reason" in cell.tags else ""), 0)
    report = root / runs.matrix / REPORT
    shutil.rmtree(report, ignore_errors=True)
    with SummaryWriter(log_dir=str(report)) as writer:
        for figure in runs.figures:
            image = matplotlib.image.imread(figure)[..., :3]  # RGBA -> RGB, floats in [0, 1]
            writer.add_image(f"figures/{figure.stem}", np.ascontiguousarray(image), 0, dataformats="HWC")
    return (f"{len(runs.cells)} cells of {runs.matrix} as TensorBoard runs in {root / runs.matrix}/, "
            f"{len(runs.figures)} figures in {report}/ (tensorboard --logdir {root})")
