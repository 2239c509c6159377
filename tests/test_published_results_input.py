"""A published result this checkout has lost: a committed result or evaluation file deleted (or a folder put in its
place), or the committed results/<matrix>/.matrix deleted or edited. The Snakemake workflow (dry run or not),
`vramlab run-cell` and `vramlab evaluate` refuse in one line naming the file and `git checkout HEAD -- <path>`,
rather than measure the cell again as if it were new and replace the published reference; nothing else changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.results.published_results import lost_published, lost_published_problem
from tests.checkout_copy import copy_checkout, git, last_line, snakemake, status, vramlab

SMOKE_RESULT = "results/smoke/4c55591d5771.json"
QUALITY_EVALUATION = "results/quality-smollm2/evaluations/00ee07c5a5e0/text_de.json"


def _committed_folder(tmp_path: Path) -> Path:
    """results/m/ of a checkout: its .matrix and one result, committed."""
    folder = tmp_path / "results" / "m"
    folder.mkdir(parents=True)
    (folder / ".matrix").write_text("ablations/m.yaml\n")
    (folder / "abc.json").write_text("{}\n")
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "published", cwd=tmp_path)
    return folder


# a deleted result, a folder in its place, a .matrix deleted or edited: each found, with what happened to it
@pytest.mark.parametrize(("change", "name", "said"), [
    (lambda f: (f / "abc.json").unlink(), "abc.json", "deleted"),
    (lambda f: ((f / "abc.json").unlink(), (f / "abc.json").mkdir(), (f / "abc.json" / "x").write_text("")),
     "abc.json", "deleted"),
    (lambda f: (f / ".matrix").unlink(), ".matrix", "deleted"),
    (lambda f: (f / ".matrix").write_text("elsewhere/m.yaml\n"), ".matrix", "edited"),
], ids=["deleted", "folder-in-place", "matrix-marker-deleted", "matrix-marker-edited"])
def test_a_lost_published_file_is_found(tmp_path, monkeypatch, change, name, said):
    folder = _committed_folder(tmp_path)
    assert lost_published(folder, ["abc.json"]) is None
    change(folder)
    lost = lost_published(folder, ["abc.json"])
    assert lost is not None and lost.path == f"results/m/{name}" and lost.change == said
    # the restoring command as typed where one stands: in the checkout, or anywhere else
    assert f"`git -C {tmp_path} checkout HEAD -- results/m/{name}`" in lost_published_problem(folder, ["abc.json"])
    monkeypatch.chdir(tmp_path)
    assert f"`git checkout HEAD -- results/m/{name}`" in lost_published_problem(Path("results/m"), ["abc.json"])


# an edited result (the result's own check names it), a new file, a result of another cell, a folder out of git: kept
def test_what_is_no_lost_published_result_is_left_alone(tmp_path):
    folder = _committed_folder(tmp_path)
    (folder / "abc.json").write_text("{\"edited\": true}\n")
    (folder / "new.json").write_text("{}\n")
    assert lost_published(folder, ["abc.json", "new.json"]) is None
    (folder / "abc.json").unlink()
    assert lost_published(folder, ["other.json"]) is None
    plain = tmp_path / "plain" / "results" / "m"
    plain.mkdir(parents=True)
    shutil.rmtree(tmp_path / ".git")
    assert lost_published(folder, ["abc.json"]) is None and lost_published(plain, ["abc.json"]) is None


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("lost") / "clone")


def _refused(done, said: str, path: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and said in last_line(done), done.stderr[-2000:]
    assert f"`git checkout HEAD -- {path}`" in last_line(done), done.stderr[-2000:]


# the workflow, dry run and real run: a deleted published result (or a folder in its place) is not measured as new
@pytest.mark.slow
@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "run"])
@pytest.mark.parametrize("folder", [False, True], ids=["deleted", "folder-in-place"])
def test_snakemake_refuses_a_deleted_published_result(clone, dry, folder):
    (clone / SMOKE_RESULT).unlink()
    if folder:
        (clone / SMOKE_RESULT).mkdir()
    try:
        done = snakemake(clone, "--config", "matrix=smoke", *(["-n"] if dry else []), timeout=300)
        _refused(done, f"{SMOKE_RESULT} is a published result (committed) and is deleted here", SMOKE_RESULT)
        assert status(clone) == f" D {SMOKE_RESULT}\n"
    finally:
        if folder:
            (clone / SMOKE_RESULT).rmdir()
        git("checkout", "HEAD", "--", SMOKE_RESULT, cwd=clone)


# the workflow: the committed results/smoke/.matrix deleted or edited, named (an edited one is no foreign owner)
@pytest.mark.slow
@pytest.mark.parametrize("edit", [False, True], ids=["deleted", "edited"])
def test_snakemake_refuses_a_lost_matrix_marker(clone, edit):
    marker = clone / "results" / "smoke" / ".matrix"
    marker.write_text("x\n") if edit else marker.unlink()
    try:
        done = snakemake(clone, "--config", "matrix=smoke", "-n", timeout=300)
        _refused(done, f"results/smoke/.matrix (which names the matrix file whose results results/smoke/ holds) is "
                 f"{'edited' if edit else 'deleted'} here", "results/smoke/.matrix")
    finally:
        git("checkout", "HEAD", "--", "results/smoke/.matrix", cwd=clone)
    assert status(clone) == ""


# run-cell of a cell whose published result is deleted
@pytest.mark.slow
def test_run_cell_refuses_a_deleted_published_result(clone):
    (clone / SMOKE_RESULT).unlink()
    try:
        done = vramlab(clone, "run-cell", "--matrix", "smoke", "--cell", Path(SMOKE_RESULT).stem, timeout=300)
        _refused(done, f"{SMOKE_RESULT} is a published result (committed) and is deleted here", SMOKE_RESULT)
        assert status(clone) == f" D {SMOKE_RESULT}\n"
    finally:
        git("checkout", "HEAD", "--", SMOKE_RESULT, cwd=clone)


# the evaluate stage, of a cell whose published evaluation is deleted
@pytest.mark.slow
def test_evaluate_refuses_a_deleted_published_evaluation(clone):
    (clone / QUALITY_EVALUATION).unlink()
    try:
        done = vramlab(clone, "evaluate", "--matrix", "quality-smollm2", "--cell", QUALITY_EVALUATION.split("/")[3],
                       timeout=300)
        _refused(done, f"{QUALITY_EVALUATION} is a published result (committed) and is deleted here",
                 QUALITY_EVALUATION)
        assert status(clone) == f" D {QUALITY_EVALUATION}\n"
    finally:
        git("checkout", "HEAD", "--", QUALITY_EVALUATION, cwd=clone)
