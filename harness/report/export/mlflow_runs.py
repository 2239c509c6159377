"""A matrix as an MLflow experiment: a parent run named after the matrix holds the report's figures and tables as
artifacts, and each cell is a run nested under it. `out` is a folder (MLflow's file store, written offline) or any
tracking URI MLflow takes (sqlite:///runs.db, http://host:5000). A cell exported before is replaced: its earlier
run is deleted, so an experiment holds one run a cell."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.core.errors import UsageError
from harness.report.export.runs import MatrixRuns

# MLflow 3 keeps its file store in maintenance mode and refuses it unless told (it reads this when a store opens)
FILE_STORE_SWITCH = "MLFLOW_ALLOW_FILE_STORE"
PARAM_VALUE_LIMIT = 6000  # MLflow's limit on a parameter's value
DATABASES = ("sqlite", "postgresql", "mysql", "mssql")  # stores that keep runs only: artifacts go to a folder


def tracking_uri(out: str) -> str:
    """A URI as given, a folder as MLflow's file store."""
    return out if "://" in out or out.startswith("file:") else Path(out).resolve().as_uri()


def artifact_folder(uri: str) -> Path | None:
    """Where a new experiment in a database store keeps its artifacts (the figures): beside a SQLite file, else under
    exports/; MLflow's own default is ./mlruns in whatever folder the command runs in, a checkout's among them."""
    parts = urlsplit(uri)
    scheme = parts.scheme.split("+")[0]  # postgresql+psycopg2://...
    if scheme not in DATABASES:
        return None  # a folder store keeps them inside it, a tracking server where it is set up to
    if scheme == "sqlite" and parts.path not in ("", "/", "/:memory:"):
        database = Path(parts.path[1:])  # sqlite:///runs.db is runs.db here, sqlite:////tmp/runs.db is absolute
        return database.with_name(f"{database.stem}-artifacts").resolve()
    return Path("exports", "mlflow-artifacts").resolve()


def _server_answers(uri: str) -> None:
    """A tracking server is asked whether it is there before anything else: MLflow itself retries a server that does
    not answer for minutes, each retry a warning, and ends on a traceback."""
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https"):
        return
    try:
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as err:  # a port that is no number
        raise UsageError(f"--out {uri}: {err}; give a tracking server as http://host:port") from None
    if not host:
        raise UsageError(f"--out {uri}: names no host; give a tracking server as http://host:port")
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as err:
        raise UsageError(f"--out {uri}: no tracking server answers at {host}:{port} ({err.strerror or err}); start it "
                         f"(mlflow server --port {port}) or give --out a folder for MLflow's file store") from None


def _experiment(uri: str, matrix: str) -> tuple[Any, str]:
    """The client of the store at `uri` and the id of the matrix's experiment there (made where there is none)."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    _server_answers(uri)
    try:
        client = MlflowClient(uri)
        experiment = client.get_experiment_by_name(matrix)
        if experiment is not None:
            return client, experiment.experiment_id
        folder = artifact_folder(uri)
        return client, client.create_experiment(matrix, artifact_location=folder.as_uri() if folder else None)
    except ModuleNotFoundError as err:  # mlflow-skinny opens a database store only with alembic and sqlalchemy
        package = (err.name or "?").split(".")[0]
        raise UsageError(f"--out {uri}: MLflow's store there needs the Python module {package}, which is not "
                         f"installed here; pip install {package}, or give --out a folder for MLflow's file store"
                         ) from None
    except MlflowException as err:  # a scheme no store takes, a server that is no MLflow's, ...
        raise UsageError(f"--out {uri}: MLflow cannot use it: {err.message}") from None


def write(runs: MatrixRuns, out: str) -> str:
    import mlflow

    uri = tracking_uri(out)
    if uri.startswith("file:"):
        os.environ.setdefault(FILE_STORE_SWITCH, "true")
    client, experiment_id = _experiment(uri, runs.matrix)
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
    kept = f", kept in {client.get_experiment(experiment_id).artifact_location}" if artifact_folder(uri) else ""
    return (f"{len(runs.cells)} cells of {runs.matrix} as MLflow runs under the experiment {runs.matrix!r} at {uri}, "
            f"{len(runs.figures)} figures with the matrix's run{kept} (mlflow ui --backend-store-uri {uri})")
