"""A matrix as an MLflow experiment: a parent run named after the matrix holds the report's figures and tables as
artifacts, and each cell is a run nested under it. `out` is a folder (MLflow's file store, written offline) or any
tracking URI MLflow takes (sqlite:///runs.db, http://host:5000). A cell exported before is replaced: its earlier
run is deleted, so an experiment holds one run a cell."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from harness.core.errors import UsageError
from harness.core.file_locks import held
from harness.report.export.runs import FOLDER_LOCK, MatrixRuns

# MLflow 3 keeps its file store in maintenance mode and refuses it unless told (it reads this when a store opens)
FILE_STORE_SWITCH = "MLFLOW_ALLOW_FILE_STORE"
PARAM_VALUE_LIMIT = 6000  # MLflow's limit on a parameter's value
DATABASES = ("sqlite", "postgresql", "mysql", "mssql")  # stores that keep runs only: artifacts go to a folder
# the PyPI distribution of a module a database store may need, where its name is not the module's
DISTRIBUTIONS = {"MySQLdb": "mysqlclient", "psycopg2": "psycopg2-binary", "pymysql": "PyMySQL",
                 "sqlalchemy": "SQLAlchemy"}
# a driver without a C library to build, for the default driver of a scheme: (its distribution, its scheme)
PURE_PYTHON_DRIVERS = {"MySQLdb": ("PyMySQL", "mysql+pymysql"), "psycopg2": ("pg8000", "postgresql+pg8000")}


def tracking_uri(out: str) -> str:
    """A URI as given, a folder as MLflow's file store. A URI that cannot be parsed (an unclosed IPv6 bracket) is
    refused here, where every later reading of it would end in a traceback."""
    if "://" not in out and not out.startswith("file:"):
        return Path(out).resolve().as_uri()
    try:
        urlsplit(out).port  # noqa: B018 - parsing the netloc is what raises
    except ValueError as err:
        raise UsageError(f"--out {out}: not a URI MLflow can use ({err}); give a tracking server as http://host:port, "
                         "a database as sqlite:///runs.db or a folder") from None
    return out


def _in_memory(uri: str) -> bool:
    """A SQLite store with no file (sqlite://, sqlite:///:memory:): a database that ends with the process."""
    parts = urlsplit(uri)
    return parts.scheme.split("+")[0] == "sqlite" and parts.path in ("", "/", "/:memory:")


def _sqlite_file(uri: str) -> Path | None:
    """The database file of a SQLite store (sqlite:///runs.db is runs.db here, sqlite:////tmp/runs.db is absolute),
    or None: another store, or one in memory."""
    parts = urlsplit(uri)
    if parts.scheme.split("+")[0] != "sqlite" or _in_memory(uri):
        return None
    return Path(parts.path[1:])


def artifact_folder(uri: str) -> Path | None:
    """Where a new experiment in a database store keeps its artifacts (the figures): beside a SQLite file, else under
    exports/; MLflow's own default is ./mlruns in whatever folder the command runs in, a checkout's among them."""
    scheme = urlsplit(uri).scheme.split("+")[0]  # postgresql+psycopg2://...
    if scheme not in DATABASES:
        return None  # a folder store keeps them inside it, a tracking server where it is set up to
    database = _sqlite_file(uri)
    if database is not None:
        return database.with_name(f"{database.stem}-artifacts").resolve()
    return Path("exports", "mlflow-artifacts").resolve()


def local_places(out: str) -> list[tuple[str, Path]]:
    """What the store `out` names writes on this machine, each said as what it is: a file store's folder, a SQLite
    database, the folder a database store keeps its artifacts in; none for a tracking server."""
    uri = tracking_uri(out)
    parts = urlsplit(uri)
    places = [("its file store", Path(url2pathname(parts.path)))] if parts.scheme == "file" else []
    places += [(what, path) for what, path in (("its database", _sqlite_file(uri)),
                                               ("its artifacts' folder", artifact_folder(uri))) if path is not None]
    return places


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


SQLITE_HEADER = b"SQLite format 3\x00"  # the first bytes of every SQLite database file
MLFLOW_TABLES = {"experiments", "runs"}  # among the tables of every MLflow database store


def _no_other_programs(uri: str, database: Path) -> None:
    """A SQLite database whose tables are not MLflow's is another program's: MLflow would add its own beside them
    and write runs into it. Read only, so the file is left as it was."""
    try:
        with closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)) as db:
            tables = sorted(name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    except sqlite3.Error as err:
        raise UsageError(f"--out {uri}: {database} cannot be read as a SQLite database ({err}); give a new file for "
                         "MLflow's database or an existing MLflow store") from None
    if tables and not MLFLOW_TABLES.issubset(tables):
        raise UsageError(f"--out {uri}: {database} is another program's SQLite database (its tables: "
                         f"{', '.join(tables[:5])}), no MLflow store; give a new file for MLflow's database or an "
                         "existing MLflow store")


def _not_a_database(uri: str) -> None:
    """A SQLite store's file that is there is a database (an empty file becomes one): else SQLite ends in a traceback
    ("file is not a database"), and the file is no store of runs to add to."""
    database = _sqlite_file(uri)
    if database is None or not database.exists() or (database.is_file() and database.stat().st_size == 0):
        return
    if database.is_file():
        with database.open("rb") as file:
            is_sqlite = file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
        if is_sqlite:
            _no_other_programs(uri, database)
            return
    raise UsageError(f"--out {uri}: {database} exists and is not a SQLite database; give a new file for MLflow's "
                     "database or an existing MLflow store")


def _not_in_memory(uri: str) -> None:
    """Runs exported into a database in memory are gone when the command ends, though it says they were exported."""
    if _in_memory(uri):
        raise UsageError(f"--out {uri}: a SQLite database in memory, gone with this command and the runs with it; give "
                         "it a file (sqlite:///runs.db) or give --out a folder for MLflow's file store")


def _install_advice(module: str, uri: str) -> str:
    """What to pip install for a missing module, by its distribution's name, with a pure-Python driver where one
    serves the same database (the URI given again with its scheme)."""
    advice = f"pip install {DISTRIBUTIONS.get(module, module)}"
    if module in PURE_PYTHON_DRIVERS:
        package, scheme = PURE_PYTHON_DRIVERS[module]
        advice += f" (or pip install {package} and give --out {scheme}://{uri.split('://', 1)[1]})"
    return advice


def _store_lock(uri: str) -> Path | None:
    """The file that makes exports into one store on this machine take turns: beside a SQLite database
    (runs.db.vramlab-export.lock), inside a file store; None for a server or database server, which order their own
    writers."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(url2pathname(parts.path)) / FOLDER_LOCK
    database = _sqlite_file(uri)
    return None if database is None else database.with_name(database.name + FOLDER_LOCK)


@contextlib.contextmanager
def _one_writer(uri: str, out: str) -> Iterator[None]:
    """Exports into one local store, one at a time: two at once into a new SQLite database race through MLflow's
    migrations, and the loser ends in SQLAlchemy's traceback."""
    lock = _store_lock(uri)
    if lock is None:
        yield
        return
    lock.parent.mkdir(parents=True, exist_ok=True)  # MLflow makes the folder all the same
    with held(lock, f"another export is writing into {out}; waiting for it to end"):
        yield


def _experiment(uri: str, matrix: str) -> tuple[Any, str]:
    """The client of the store at `uri` and the id of the matrix's experiment there (made where there is none)."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

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
                         f"installed here; {_install_advice(package, uri)}, or give --out a folder for MLflow's file "
                         "store") from None
    except MlflowException as err:  # a scheme no store takes, a server that is no MLflow's, ...
        raise UsageError(f"--out {uri}: MLflow cannot use it: {err.message}") from None


def write(runs: MatrixRuns, out: str) -> str:
    uri = tracking_uri(out)
    if uri.startswith("file:"):
        os.environ.setdefault(FILE_STORE_SWITCH, "true")
    _server_answers(uri)  # what the store is, judged before a lock file is made beside it
    _not_in_memory(uri)
    _not_a_database(uri)
    with _one_writer(uri, out):
        return _write(runs, uri)


def _write(runs: MatrixRuns, uri: str) -> str:
    import mlflow

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
