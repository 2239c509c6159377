"""What `vramlab export --out` and `--reports-dir` are given: an empty path, a URI for a tracker that writes into a
folder, a database store whose module is missing, a tracking server that does not answer, and a report folder
without the matrix's report. Each is one line, and nothing is written where the person did not say."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from harness import cli
from harness.core.file_locks import held
from harness.report.export import FOLDER_LOCK
from harness.report.export.mlflow_runs import FILE_STORE_SWITCH
from tests.conftest import REPO, copy_repository_files
from tests.refusals import refused


def _free_port() -> int:
    """A port nothing listens on: one the system handed out, closed again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("tracker", ["tensorboard", "mlflow", "wandb"])
def test_an_empty_out_is_refused_not_read_as_the_default(tracker, tmp_path, capsys, monkeypatch):  # t10-051
    monkeypatch.chdir(tmp_path)
    refused(["export", "smoke", "--to", tracker, "--out", "", "--results-dir", str(REPO / "results"),
             "--reports-dir", str(REPO / "reports")], capsys, "--out '': an empty path names no file or folder")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--results-dir", "--reports-dir"])
def test_an_empty_folder_option_is_refused(option, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    refused(["export", "smoke", "--to", "tensorboard", "--out", str(tmp_path / "tb"), option, " "], capsys,
            f"{option} ' ': an empty path names no file or folder; give one, or leave {option} out")


@pytest.mark.parametrize("tracker", ["tensorboard", "wandb"])
def test_a_uri_for_a_tracker_that_writes_a_folder_is_refused(tracker, tmp_path, capsys, monkeypatch):  # t10-055
    monkeypatch.chdir(tmp_path)  # the URI would have been a folder http:/127.0.0.1:9/x here
    refused(["export", "smoke", "--to", tracker, "--out", "http://127.0.0.1:9/x", "--results-dir",
             str(REPO / "results"), "--reports-dir", str(REPO / "reports")], capsys,
            f"a URI is for --to mlflow (a tracking server or database); {tracker} writes its runs into a folder")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_tracking_server_that_does_not_answer_is_said_at_once(tmp_path, capsys, monkeypatch):  # t10-056
    monkeypatch.chdir(REPO)
    port = _free_port()
    start = time.monotonic()
    refused(["export", "smoke", "--to", "mlflow", "--out", f"http://127.0.0.1:{port}"], capsys,
            f"no tracking server answers at 127.0.0.1:{port} (Connection refused); start it")
    assert time.monotonic() - start < 60  # MLflow's own retries took minutes


def test_a_database_store_without_its_module_names_the_module_to_install(tmp_path, capsys, monkeypatch):  # t10-052
    monkeypatch.chdir(REPO)
    monkeypatch.setitem(sys.modules, "alembic", None)  # as where mlflow-skinny is installed without it
    err = refused(["export", "smoke", "--to", "mlflow", "--out", f"sqlite:///{tmp_path}/runs.db"], capsys,
                  "MLflow's store there needs the Python module alembic, which is not installed here; pip install "
                  "alembic")
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_sqlite_store_keeps_its_figures_beside_the_database(tmp_path, capsys, monkeypatch):  # t10-052
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)  # MLflow's default would put the figures in ./mlruns, here
    assert cli.main(["export", "smoke", "--to", "mlflow", "--out", "sqlite:///runs.db", "--results-dir",
                     str(REPO / "results"), "--reports-dir", str(REPO / "reports")]) == 0
    said = capsys.readouterr().out
    assert f"kept in {(tmp_path / 'runs-artifacts').as_uri()}" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs-artifacts", "runs.db", "runs.db" + FOLDER_LOCK]
    client = MlflowClient("sqlite:///runs.db")
    experiment = client.get_experiment_by_name("smoke")
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 9  # 8 cells and the matrix's run
    parent = next(r for r in runs if r.data.tags.get("vramlab.kind") == "report")
    assert {a.path for a in client.list_artifacts(parent.info.run_id, "figures")} >= {"figures/overview.png"}


def test_a_reports_dir_without_the_matrix_report_is_said(tmp_path, capsys, caplog, monkeypatch):  # t10-054
    monkeypatch.chdir(REPO)
    (tmp_path / "rep").mkdir()
    with caplog.at_level("WARNING", logger="vramlab"):  # the vramlab logger's line on stderr, as every warning
        assert cli.main(["export", "smoke", "--to", "tensorboard", "--reports-dir", str(tmp_path / "rep"), "--out",
                         str(tmp_path / "tb")]) == 0
    assert "8 cells of smoke as TensorBoard runs" in capsys.readouterr().out
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and f"no report of smoke in {tmp_path / 'rep' / 'smoke'}/" in warned[0] and \
        "`vramlab report smoke` writes it" in warned[0], warned


def test_a_reports_dir_with_the_report_exports_it_without_a_warning(tmp_path, capsys, caplog, monkeypatch):
    monkeypatch.chdir(REPO)
    with caplog.at_level("WARNING", logger="vramlab"):
        assert cli.main(["export", "smoke", "--to", "tensorboard", "--out", str(tmp_path / "tb")]) == 0
    assert "3 figures in" in capsys.readouterr().out and not caplog.records


# `export --out` with a path that is no UTF-8 (the byte 0xff): wandb and tensorboard ended in a UnicodeEncodeError
# traceback, mlflow made a folder of another name (x%FF); now one line, and nothing is made
@pytest.mark.parametrize("tracker", ["tensorboard", "mlflow", "wandb"])
def test_an_out_path_that_is_no_utf8_is_refused(tracker, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = str(tmp_path) + "/x" + b"\xff".decode("utf-8", "surrogateescape")
    refused(["export", "smoke", "--to", tracker, "--out", out, "--results-dir", str(REPO / "results"),
             "--reports-dir", str(REPO / "reports")], capsys, f"--out {tmp_path}/x\\xff: the path holds bytes that "
            "are no UTF-8 text")
    assert list(tmp_path.iterdir()) == []


# t14-003, t14-026: --out sqlite:///results/smoke/runs.db wrote runs.db and runs-artifacts/ into the published
# results/smoke/ without a word (the guard of --out looked at folders only); a file: URI, a folder outside the
# --results-dir and --reports-dir given, and the artifacts' folder a database store derives went the same way
@pytest.mark.parametrize(("tracker", "out", "here", "said"), [
    pytest.param("mlflow", "sqlite:///results/smoke/runs.db", ".", "its database results/smoke/runs.db lies in "
                 "{c}/results/smoke/, a folder of published results or reports", id="t14-003"),
    pytest.param("mlflow", "file:{c}/reports/smoke/runs", ".", "its file store {c}/reports/smoke/runs lies in "
                 "{c}/reports/smoke/, a folder of published results or reports", id="file-uri"),
    pytest.param("mlflow", "sqlite:///results/runs.db", ".", "its database results/runs.db lies in {c}/results/, "
                 "the checkout's folder of published results", id="results-root"),
    pytest.param("mlflow", "postgresql://localhost/runs", "results/smoke", "its artifacts' folder "
                 "{c}/results/smoke/exports/mlflow-artifacts lies in {c}/results/smoke/, a folder of published "
                 "results or reports", id="artifacts"),
    pytest.param("tensorboard", "{c}/results/smoke/tb", ".", "its folder {c}/results/smoke/tb lies in "
                 "{c}/results/smoke/, a folder of published results or reports", id="folder"),
    # a file: URI without // into the published results/smoke (answered by the guard of file-uri)
    pytest.param("mlflow", "file:{c}/results/smoke/mlruns", ".", "its file store {c}/results/smoke/mlruns lies in "
                 "{c}/results/smoke/, a folder of published results or reports", id="t15-059"),
])
def test_a_trackers_store_among_a_checkouts_published_files_is_refused(tmp_path, capsys, monkeypatch, tracker, out,
                                                                       here, said):
    for folder in ("ablations", "results/smoke", "reports/smoke"):  # a checkout's shape; the results are the repo's
        (tmp_path / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path / here)
    refused(["export", "smoke", "--to", tracker, "--out", out.format(c=tmp_path), "--results-dir",
             str(REPO / "results"), "--reports-dir", str(REPO / "reports")], capsys,
            said.format(c=tmp_path) + "; give the tracker a place outside it")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == \
        ["ablations", "reports", "reports/smoke", "results", "results/smoke"]


# t15-057: --out sqlite:///README.md (a file that is no database) ended in SQLAlchemy's traceback "file is not a
# database"; now one line, the file left as it was
@pytest.mark.parametrize("place", ["README.md", "folder"])
def test_a_sqlite_store_that_is_no_database_is_refused(tmp_path, capsys, monkeypatch, place):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "README.md").write_text("# a checkout's readme\n")
    refused(["export", "smoke", "--to", "mlflow", "--out", f"sqlite:///{place}", "--results-dir",
             str(REPO / "results"), "--reports-dir", str(REPO / "reports")], capsys,
            f"--out sqlite:///{place}: {place} exists and is not a SQLite database; give a new file for MLflow's "
            "database or an existing MLflow store")
    assert (tmp_path / "README.md").read_text() == "# a checkout's readme\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["README.md", "folder"]


# two exports into one TensorBoard folder at once (t16-079): one replaced a run's folder while the other's event writer
# was still filling it, so the store held a mix of the two (9 to 13 files) or a writer thread died on a traceback
@pytest.mark.slow
def test_a_second_export_into_one_folder_waits_for_the_first(tmp_path):
    out = tmp_path / "tb"
    out.mkdir()
    command = [sys.executable, "-m", "harness", "export", "smoke", "--to", "tensorboard", "--out", str(out)]
    with held(out / FOLDER_LOCK):  # the first export, still writing
        second = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert second.stderr is not None
        said = second.stderr.readline()
        assert said.endswith(f"another export is writing into {out}; waiting for it to end\n")
        assert second.poll() is None and not (out / "smoke").exists()
    stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    assert stdout.startswith("8 cells of smoke as TensorBoard runs in")
    runs = [folder for folder in (out / "smoke").iterdir()]
    assert len(runs) == 9 and all(len(list(folder.iterdir())) == 1 for folder in runs)  # 8 cells and the report


# two exports into one new SQLite database at once (t17-079): both ran MLflow's migrations, and the loser ended in an
# 87-line SQLAlchemy traceback; the second now waits for the first, as into a TensorBoard folder
@pytest.mark.slow
@pytest.mark.parametrize(("out", "lock"), [("sqlite:///{d}/runs.db", "runs.db" + FOLDER_LOCK),
                                           ("{d}/mlruns", f"mlruns/{FOLDER_LOCK}")], ids=["sqlite", "file-store"])
def test_a_second_mlflow_export_into_one_store_waits_for_the_first(tmp_path, monkeypatch, out, lock):
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv(FILE_STORE_SWITCH, "true")  # for the client that reads the file store back
    out = out.format(d=tmp_path)
    (tmp_path / lock).parent.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "harness", "export", "smoke", "--to", "mlflow", "--out", out]
    with held(tmp_path / lock):  # the first export, still writing
        second = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert second.stderr is not None
        said = second.stderr.readline()
        assert said.endswith(f"another export is writing into {out}; waiting for it to end\n")
        assert second.poll() is None and not (tmp_path / "runs.db").exists()
        assert sorted(p.name for p in (tmp_path / lock).parent.iterdir()) == [Path(lock).name]
    stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    assert stdout.startswith("8 cells of smoke as MLflow runs")
    client = MlflowClient(out if "://" in out else Path(out).as_uri())
    assert len(client.search_runs([client.get_experiment_by_name("smoke").experiment_id])) == 9


# t16-054: --out sqlite:// (a database in memory) said 8 runs were exported, though they went with the process, and
# put the figures in ./exports/; refused in one line, nothing written
@pytest.mark.parametrize("out", [pytest.param("sqlite://", id="t16-054"), "sqlite:///:memory:"])
def test_a_sqlite_store_in_memory_is_refused(tmp_path, capsys, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    refused(["export", "smoke", "--to", "mlflow", "--out", out, "--results-dir", str(REPO / "results"),
             "--reports-dir", str(REPO / "reports")], capsys,
            f"--out {out}: a SQLite database in memory, gone with this command and the runs with it; give it a file "
            "(sqlite:///runs.db)")
    assert list(tmp_path.iterdir()) == []


# t18-045: an address whose host part cannot be parsed (an IPv6 bracket left open, a port that is no number) ended in
# urllib's traceback; one line before anything is written
@pytest.mark.parametrize("out", [pytest.param("http://[::1", id="t18-045"), "http://host:port", "sqlite://[/runs.db"])
def test_an_unparseable_tracking_uri_is_refused(tmp_path, capsys, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    refused(["export", "smoke", "--to", "mlflow", "--out", out, "--results-dir", str(REPO / "results"),
             "--reports-dir", str(REPO / "reports")], capsys, f"--out {out}: not a URI MLflow can use (")
    assert list(tmp_path.iterdir()) == []


# t19-049: a report figure emptied (0 bytes) ended the tensorboard export in PIL's traceback after the cells' runs
# were written; every figure is read before anything is, and a damaged one is named in one line
@pytest.mark.parametrize("tracker", ["tensorboard", "wandb", "mlflow"])
@pytest.mark.parametrize("damage", [pytest.param(b"", id="t19-049"), b"\x89PNG\r\n\x1a\n" + b"\0" * 40])
def test_an_export_with_a_damaged_figure_is_refused_before_writing(tmp_path, capsys, monkeypatch, tracker, damage):
    monkeypatch.chdir(tmp_path)
    reports = copy_repository_files(REPO / "reports" / "smoke", tmp_path / "reports" / "smoke")
    (reports / "overview.png").write_bytes(damage)
    out = tmp_path / "out"
    refused(["export", "smoke", "--to", tracker, "--out", str(out), "--results-dir", str(REPO / "results"),
             "--reports-dir", str(tmp_path / "reports")], capsys,
            f"{reports / 'overview.png'}: not a readable PNG image (")
    assert not out.exists()


# t21-060: --out a link to nowhere was refused with the OS's bare "File exists"; the link is named as what it is
@pytest.mark.parametrize("tracker", ["tensorboard", "wandb"])
def test_an_out_that_is_a_link_to_nowhere_is_named(tmp_path, capsys, monkeypatch, tracker):
    monkeypatch.chdir(REPO)
    (tmp_path / "o").symlink_to(tmp_path / "nowhere")
    refused(["export", "smoke", "--to", tracker, "--out", str(tmp_path / "o")], capsys,
            f"--out {tmp_path}/o: {tmp_path}/o is a link to {tmp_path}/nowhere, which does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


# t16-057: a mysql:// store without its driver advised `pip install MySQLdb`, a module's name no package has on PyPI;
# each default driver's distribution is named, with a pure-Python driver the URI can name instead
@pytest.mark.parametrize(("out", "module", "said"), [
    pytest.param("mysql://u@127.0.0.1:1/db", "MySQLdb", "pip install mysqlclient (or pip install PyMySQL and give "
                 "--out mysql+pymysql://u@127.0.0.1:1/db), or give --out a folder", id="t16-057"),
    pytest.param("postgresql://u@127.0.0.1:1/db", "psycopg2", "pip install psycopg2-binary (or pip install pg8000 "
                 "and give --out postgresql+pg8000://u@127.0.0.1:1/db), or give --out a folder", id="postgresql"),
    pytest.param("mysql+pymysql://u@127.0.0.1:1/db", "pymysql", "pip install PyMySQL, or give --out a folder",
                 id="pymysql"),
    pytest.param("mssql://u@127.0.0.1:1/db", "pyodbc", "pip install pyodbc, or give --out a folder", id="mssql"),
])
def test_a_database_store_without_its_driver_names_the_package_to_install(tmp_path, capsys, monkeypatch, out, module,
                                                                          said):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, module, None)  # missing, wherever it is installed
    refused(["export", "smoke", "--to", "mlflow", "--out", out, "--results-dir", str(REPO / "results"),
             "--reports-dir", str(REPO / "reports")], capsys,
            f"--out {out}: MLflow's store there needs the Python module {module}, which is not installed here; {said}")
    assert list(tmp_path.iterdir()) == []


# (noticed with round 16, no case id) --out sqlite:///notes.db, another program's database, got MLflow's tables and 8
# runs written into it; refused in one line, the file left byte for byte
def test_another_programs_sqlite_database_is_refused_and_left_as_it_was(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with closing(sqlite3.connect("notes.db")) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
        db.commit()
    before = (tmp_path / "notes.db").read_bytes()
    refused(["export", "smoke", "--to", "mlflow", "--out", "sqlite:///notes.db", "--results-dir",
             str(REPO / "results"), "--reports-dir", str(REPO / "reports")], capsys,
            "--out sqlite:///notes.db: notes.db is another program's SQLite database (its tables: notes), no MLflow "
            "store; give a new file for MLflow's database or an existing MLflow store")
    assert (tmp_path / "notes.db").read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["notes.db"]


# the MLflow store an earlier export made takes the next: its cells' runs are replaced, not refused as another's
@pytest.mark.slow
def test_a_sqlite_store_of_an_earlier_export_takes_the_next(tmp_path, capsys, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert cli.main(["export", "smoke", "--to", "mlflow", "--out", "sqlite:///runs.db", "--results-dir",
                         str(REPO / "results"), "--reports-dir", str(REPO / "reports")]) == 0
    assert "8 cells of smoke as MLflow runs" in capsys.readouterr().out
    client = MlflowClient("sqlite:///runs.db")
    assert len(client.search_runs([client.get_experiment_by_name("smoke").experiment_id])) == 9
