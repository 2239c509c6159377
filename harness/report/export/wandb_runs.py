"""A matrix as W&B runs, offline: one run a cell in the project named after the matrix (grouped by it), its settings
as the run's config, its metrics in the run's summary, its loss and step time per optimizer step as history; one
more run holds the report's figures as images and its tables as files. Written under `out/wandb/` as offline runs
(`wandb sync out/wandb/offline-run-*` uploads them; `wandb leet out/wandb` shows them here). The run of a cell has
the cell's id in its run id, so a cell exported again syncs into the same run."""

from __future__ import annotations

from pathlib import Path

from harness.report.export.runs import MatrixRuns


def _settings():
    import wandb

    # no console capture, no system metrics: the run is a record of a measurement made before
    return wandb.Settings(silent=True, console="off", x_disable_stats=True, x_disable_meta=True, save_code=False)


def write(runs: MatrixRuns, out: str) -> str:
    import wandb

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for cell in runs.cells:
        run = wandb.init(mode="offline", dir=str(folder), project=runs.matrix, group=runs.matrix, job_type="cell",
                         name=cell.name, id=f"{runs.matrix}-{cell.cell_id}"[-64:], config=cell.params,
                         tags=[cell.status], notes=cell.tags.get("reason"), settings=_settings(), reinit="create_new")
        steps = sorted({step for points in cell.series.values() for step, _ in points})
        for step in steps:
            run.log({f"train/{name}": value for name, points in cell.series.items()
                     for at, value in points if at == step}, step=step)
        run.summary.update({**cell.metrics, **{f"vramlab/{k}": v for k, v in cell.tags.items()}})
        run.finish(exit_code=0 if cell.status == "ok" else 1)
    run = wandb.init(mode="offline", dir=str(folder), project=runs.matrix, group=runs.matrix, job_type="report",
                     name=f"{runs.matrix} report", id=f"{runs.matrix}-report"[-64:], settings=_settings(),
                     reinit="create_new")
    if runs.figures:
        run.log({f"figures/{path.stem}": wandb.Image(str(path)) for path in runs.figures}, step=0)
    for path in runs.documents:
        run.save(str(path), base_path=str(path.parent), policy="now")
    run.finish()
    return (f"{len(runs.cells)} cells of {runs.matrix} as offline W&B runs in {folder / 'wandb'}/, "
            f"{len(runs.figures)} figures in the run '{runs.matrix} report' (wandb sync {folder / 'wandb'})")
