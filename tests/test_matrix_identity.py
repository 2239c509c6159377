"""A published matrix is the file it is, not its name: a `smoke.yaml` from another ablations/ folder (named by path,
through VRAMLAB_ABLATIONS, with its results elsewhere) never writes into the checkout's results/smoke/ or
reports/smoke/, nor a `claims-context.yaml` into the published folders that have no .matrix file. Each runs the
commands of issue 35 on a copy of the checkout and asks git what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.spec.matrix import expand
from tests.checkout_copy import copy_checkout, last_line, snakemake, status, vramlab

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("identity") / "clone")


def other_matrix(clone: Path, tmp_path: Path, name: str) -> Path:
    """The checkout's matrix of that name, changed (one more warm-up step), in an ablations/ folder of its own."""
    folder = tmp_path / "elsewhere" / "ablations"
    folder.mkdir(parents=True)
    text = (clone / "ablations" / f"{name}.yaml").read_text()
    path = folder / f"{name}.yaml"
    path.write_text(text.replace("warmup_steps: 1", "warmup_steps: 2") if "warmup_steps: 1" in text
                    else text.replace("steps: 1", "steps: 2", 1))
    assert path.read_text() != text
    return path


@pytest.mark.parametrize("how", ["path", "VRAMLAB_ABLATIONS", "path, results elsewhere", "VRAMLAB_ABLATIONS, -n"])
def test_a_smoke_yaml_of_another_folder_cannot_touch_the_published_smoke(clone, tmp_path, how):
    other = other_matrix(clone, tmp_path, "smoke")
    config = ["matrix=smoke"] if how.startswith("VRAMLAB") else [f"matrix={other}"]
    if "elsewhere" in how:
        config.append(f"results_dir={tmp_path / 'results'}")
    env = {"VRAMLAB_ABLATIONS": str(other.parent)} if how.startswith("VRAMLAB") else {}
    done = snakemake(clone, *(["-n"] if "-n" in how else []), "--config", *config, **env)
    assert done.returncode == 2, done.stderr[-3000:]
    said = last_line(done)
    assert said.startswith(f"vramlab: {other}: ") and ("results/smoke/ holds the results of another matrix file"
                                                        in said or "reports/smoke/ holds the reports of" in said), said
    assert status(clone) == "" and not (tmp_path / "results").exists()


def test_aggregate_and_run_cell_of_another_smoke_yaml_are_refused(clone, tmp_path):
    other = other_matrix(clone, tmp_path, "smoke")
    done = vramlab(clone, "aggregate", str(other))
    assert done.returncode == 2 and "results/smoke/ holds the results of another matrix file" in last_line(done)
    # results beside the published ones, tables into the published reports/smoke/: refused as well
    done = vramlab(clone, "aggregate", str(other), "--results-dir", str(tmp_path / "results"))
    assert done.returncode == 2 and "reports/smoke/ holds the reports of" in last_line(done), done.stderr
    done = vramlab(clone, "run-cell", "--matrix", str(other), "--cell", expand(str(other))[0].cell_id,
                   "--time-limit", "1")
    assert done.returncode == 2 and "holds the results of another matrix file" in last_line(done), done.stderr
    assert status(clone) == ""


@pytest.mark.parametrize(("name", "command"), [("claims-context", ["ceiling"]), ("smoke", ["compare"]),
                                               ("smoke", ["evaluate", "--task", "text_en", "--matrix"])])
def test_ceiling_compare_and_evaluate_of_another_matrix_file_are_refused(clone, tmp_path, name, command):
    other = other_matrix(clone, tmp_path, name)
    cell = ["--cell", expand(str(other))[0].cell_id] if command[0] == "evaluate" else []
    done = vramlab(clone, *command, str(other), *cell)
    assert done.returncode == 2 and f"results/{name}/ holds the results of" in last_line(done), done.stderr[-2000:]
    assert status(clone) == ""


def test_a_published_folder_without_a_matrix_file_is_the_checkouts_matrix(clone, tmp_path):
    """results/claims-context/ has no .matrix: it is still the checkout's claims-context.yaml's, and no other file
    of that name writes a .matrix there to claim it."""
    assert not (clone / "results" / "claims-context" / ".matrix").exists()
    other = other_matrix(clone, tmp_path, "claims-context")
    done = snakemake(clone, "--config", f"matrix={other}")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "results/claims-context/ holds the results of" in last_line(done) and "the checkout's matrix of that " \
        "name" in last_line(done), last_line(done)
    assert status(clone) == ""


def test_the_checkouts_own_matrix_still_runs(clone):
    done = snakemake(clone, "-n", "--config", "matrix=smoke")
    assert done.returncode == 0, done.stderr[-3000:]
    done = snakemake(clone, "-n", "--config", f"matrix={clone / 'ablations' / 'smoke.yaml'}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert status(clone) == ""
