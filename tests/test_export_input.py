"""What `vramlab export --out` and `--reports-dir` are given: an empty path, a URI for a tracker that writes into a
folder, a database store whose module is missing, a tracking server that does not answer, and a report folder
without the matrix's report. Each is one line, and nothing is written where the person did not say."""

from __future__ import annotations

import socket
import sys
import time

import pytest

from harness import cli
from tests.conftest import REPO
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
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs-artifacts", "runs.db"]
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
