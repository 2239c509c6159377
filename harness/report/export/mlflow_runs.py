"""A matrix as an MLflow experiment: a parent run named after the matrix holds the report's figures and tables as
artifacts, and each cell is a run nested under it. `out` is a folder (MLflow's file store, written offline) or any
tracking URI MLflow takes (sqlite:///runs.db, http://host:5000). A cell exported before is replaced: its earlier
run is deleted, so an experiment holds one run a cell."""

from __future__ import annotations

import os
from pathlib import Path

from harness.report.export.runs import MatrixRuns

# MLflow 3 keeps its file store in maintenance mode and refuses it unless told (it reads this when a store opens)
FILE_STORE_SWITCH = "MLFLOW_ALLOW_FILE_STORE"
PARAM_VALUE_LIMIT = 6000  # MLflow's limit on a parameter's value


def tracking_uri(out: str) -> str:
    """A URI as given, a folder as MLflow's file store."""
    return out if "://" in out or out.startswith("file:") else Path(out).resolve().as_uri()


def write(runs: MatrixRuns, out: str) -> str:
    import mlflow
    from mlflow.tracking import MlflowClient

    uri = tracking_uri(out)
    if uri.startswith("file:"):
        os.environ.setdefault(FILE_STORE_SWITCH, "true")
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(runs.matrix)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(runs.matrix)
    ours = {cell.cell_id for cell in runs.cells} | {""}
    for old in client.search_runs([experiment_id], max_results=50_000):
        if old.data.tags.get("vramlab.cell_id", "") in ours:  # the matrix's run (no cell id) and the cells'
            client.delete_run(old.info.run_id)
    parent = client.create_run(experiment_id, run_name=runs.matrix,
                               tags={"vramlab.matrix": runs.matrix, "vramlab.kind": "report"})
    for path in [*runs.figures, *runs.documents]:
        client.log_artifact(parent.info.run_id, str(path), "figures" if path.suffix == ".png" else "report")
    client.set_terminated(parent.info.run_id)
    for cell in runs.cells:
        tags = {f"vramlab.{k}": v for k, v in cell.tags.items()}
        run = client.create_run(experiment_id, run_name=cell.name,
                                tags={**tags, "mlflow.parentRunId": parent.info.run_id, "vramlab.kind": "cell"})
        params = [mlflow.entities.Param(k, str(v)[:PARAM_VALUE_LIMIT]) for k, v in cell.params.items()]
        metrics = [mlflow.entities.Metric(k, v, 0, 0) for k, v in cell.metrics.items()]
        metrics += [mlflow.entities.Metric(name, value, 0, step) for name, points in cell.series.items()
                    for step, value in points]
        client.log_batch(run.info.run_id, metrics=metrics[:1000], params=params)
        for start in range(1000, len(metrics), 1000):  # MLflow takes at most 1,000 metrics a batch
            client.log_batch(run.info.run_id, metrics=metrics[start:start + 1000])
        client.set_terminated(run.info.run_id, "FINISHED" if cell.status == "ok" else "FAILED")
    return (f"{len(runs.cells)} cells of {runs.matrix} as MLflow runs under the experiment {runs.matrix!r} at {uri}, "
            f"{len(runs.figures)} figures with the matrix's run (mlflow ui --backend-store-uri {uri})")
