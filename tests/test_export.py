"""`vramlab export`: a matrix's committed results as runs of MLflow (its file store), TensorBoard (event files) and
W&B (offline runs), each read back with the tracker's own reader: the settings as parameters, the peaks, speed,
MFU and scores as metrics, the loss per step as a series, the report's figures as artifacts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.report.export.runs import cell_run, matrix_runs
from harness.results import read
from tests.conftest import REPO


def _export(matrix: str, tracker: str, out: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "harness", "export", matrix, "--to", tracker, "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_SILENT": "true"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _result(matrix: str, name: str):
    return next(r for r in map(read, (REPO / "results" / matrix).glob("*.json")) if r.name == name)


def test_a_cell_run_holds_its_settings_metrics_scores_and_loss_per_step():
    runs = matrix_runs("quality-smollm2", REPO / "results", REPO / "reports")
    assert len(runs.cells) == len(list((REPO / "results" / "quality-smollm2").glob("*.json")))
    run = next(c for c in runs.cells if c.status == "ok")
    result = read(REPO / "results" / "quality-smollm2" / f"{run.cell_id}.json")
    assert run.params["context"] == result.config["context"]
    assert run.params["lora_targets"] == ",".join(result.config["lora_targets"])
    assert run.metrics["peak_device_bytes"] == result.metrics.peak_device_bytes
    assert run.series["loss"] == [(i + 1, loss) for i, loss in enumerate(result.metrics.loss)]
    assert "score/text_en/bits_per_byte" in run.metrics and "delta/text_en/bits_per_byte" in run.metrics
    assert {p.name for p in runs.figures} == {p.name for p in (REPO / "reports" / "quality-smollm2").glob("*.png")}


def test_a_cell_that_did_not_train_has_no_throughput_but_its_peak():
    result = _result("seed-16gb", "no-nf4")  # oom at load
    run = cell_run(result, [])
    assert run.status == "oom" and "tokens_per_second" not in run.metrics and "loss" not in run.series
    assert run.metrics["peak_device_bytes"] == result.metrics.peak_device_bytes and run.tags["reason"]


@pytest.mark.slow
def test_mlflow_reads_back_the_runs_written_to_its_file_store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 opens its file store only when told
    from mlflow.tracking import MlflowClient

    said = _export("quality-smollm2", "mlflow", tmp_path / "mlruns")
    _export("quality-smollm2", "mlflow", tmp_path / "mlruns")  # again: each cell's earlier run is replaced
    assert "43 cells of quality-smollm2 as MLflow runs" in said
    client = MlflowClient((tmp_path / "mlruns").as_uri())
    experiment = client.get_experiment_by_name("quality-smollm2")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    cells = [r for r in runs if r.data.tags.get("vramlab.kind") == "cell"]
    (parent,) = [r for r in runs if r.data.tags.get("vramlab.kind") == "report"]
    assert len(cells) == 43 and all(r.data.tags["mlflow.parentRunId"] == parent.info.run_id for r in cells)
    run = next(r for r in cells if r.data.tags["vramlab.status"] == "ok")
    result = read(REPO / "results" / "quality-smollm2" / f"{run.data.tags['vramlab.cell_id']}.json")
    assert run.info.run_name == result.name and run.data.params["context"] == str(result.config["context"])
    assert run.data.metrics["peak_device_bytes"] == result.metrics.peak_device_bytes
    assert run.data.metrics["mfu"] == pytest.approx(result.metrics.mfu)
    history = sorted(client.get_metric_history(run.info.run_id, "loss"), key=lambda m: m.step)
    assert [m.value for m in history] == pytest.approx(result.metrics.loss)
    assert any(k.startswith("score/") for k in run.data.metrics)
    figures = {Path(a.path).name for a in client.list_artifacts(parent.info.run_id, "figures")}
    assert figures == {p.name for p in (REPO / "reports" / "quality-smollm2").glob("*.png")}


@pytest.mark.slow
def test_tensorboard_reads_back_the_event_files(tmp_path):
    from tensorboard.backend.event_processing import event_accumulator as ea

    _export("smoke", "tensorboard", tmp_path / "runs")
    result = next(r for r in map(read, (REPO / "results" / "smoke").glob("*.json")) if r.status.value == "ok")
    cell = ea.EventAccumulator(str(tmp_path / "runs" / "smoke" / result.name), size_guidance={ea.SCALARS: 0})
    cell.Reload()
    assert [s.value for s in cell.Scalars("train/loss")] == pytest.approx(result.metrics.loss)
    assert [s.step for s in cell.Scalars("train/loss")] == list(range(1, len(result.metrics.loss) + 1))
    assert cell.Scalars("hparams/peak_device_bytes")[0].value == pytest.approx(result.metrics.peak_device_bytes)
    assert "_hparams_/experiment" in cell.PluginTagToContent("hparams")
    report = ea.EventAccumulator(str(tmp_path / "runs" / "smoke" / "report"), size_guidance={ea.IMAGES: 0})
    report.Reload()
    pngs = sorted((REPO / "reports" / "smoke").glob("*.png"))
    assert report.Tags()["images"] == [f"figures/{p.stem}" for p in pngs]
    import matplotlib.image

    image = report.Images(f"figures/{pngs[0].stem}")[0]
    assert (image.height, image.width) == matplotlib.image.imread(pngs[0]).shape[:2]


@pytest.mark.slow
def test_wandb_reads_back_the_offline_runs(tmp_path):
    _export("smoke", "wandb", tmp_path)
    result = next(r for r in map(read, (REPO / "results" / "smoke").glob("*.json")) if r.status.value == "ok")
    (folder,) = (tmp_path / "wandb").glob(f"offline-run-*-smoke-{result.cell_id}")

    def inspect(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "wandb", "leet", "inspect", *args, str(folder)],
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        return done.stdout

    summary = json.loads(inspect("--summary", "--json"))
    assert summary["name"] == result.name and summary["project"] == "smoke" and summary["state"] == "finished"
    assert summary["config"]["context"] == result.config["context"]
    assert summary["summary"]["peak_device_bytes"] == result.metrics.peak_device_bytes
    history = [json.loads(line)["history"]["item"] for line in inspect("--json").splitlines()
               if json.loads(line).get("type") == "history"]
    assert [h["train/loss"] for h in history] == pytest.approx(result.metrics.loss)
    (report,) = (tmp_path / "wandb").glob("offline-run-*-smoke-report")
    images = sorted(p.name.split("_")[0] for p in (report / "files" / "media" / "images" / "figures").glob("*.png"))
    assert images == sorted(p.stem for p in (REPO / "reports" / "smoke").glob("*.png"))


def test_export_without_results_or_into_the_results_is_one_line(tmp_path, capsys):
    assert main(["export", "smoke", "--to", "mlflow", "--results-dir", str(tmp_path / "none"),
                 "--out", str(tmp_path / "mlruns")]) == 2
    assert "no cell of smoke has a result" in capsys.readouterr().err
    assert main(["export", "smoke", "--to", "tensorboard", "--out", str(REPO / "results" / "x")]) == 2
    assert "is inside results or reports" in capsys.readouterr().err
    assert not (tmp_path / "mlruns").exists() and not (REPO / "results" / "x").exists()
