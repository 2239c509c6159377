"""A Hugging Face hub id as a cell's model, pinned with `revision:`: the revision is resolved to its commit, which is
in the cell's id and in its result, and the shapes for the estimate come from the cache through AutoConfig; offline,
against a cache that huggingface_hub itself wrote (tests/hub_cache.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.spec.cells import cell_id_of
from harness.spec.matrix import MatrixError, expand
from tests.conftest import REPO
from tests.hub_cache import Repository, commit_of, download, hub_env, loopback_hub, tiny_model_files

REPO_ID = "acme/tiny"
CELL = ('fixed: {{model: "acme/tiny", {revision}device: cpu, data: zipf, steps: 1, warmup_steps: 0, lora_rank: 4, '
        "lora_alpha: 8, context: 32}}\n")


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Repository:
    """acme/tiny: `main` at one commit, the tag `v2` at another (another learning of the same shapes)."""
    files = tiny_model_files(tmp_path_factory.mktemp("acme-tiny"))
    repository = Repository(REPO_ID)
    repository.commit("first", files, "main")
    config = json.loads(files["config.json"])
    repository.commit("second", {**files, "config.json": json.dumps({**config, "rope_theta": 20000.0}).encode()}, "v2")
    return repository


def _matrix(folder: Path, revision: str | None, axes: str = "axes: {adapter: [lora]}\n") -> Path:
    path = folder / "m.yaml"
    path.write_text(CELL.format(revision=f"revision: {revision}, " if revision else "") + axes)
    return path


def _vramlab(hf_home: Path, *args: str, endpoint: str | None = None, cwd: Path | None = None,
             cache: Path | None = None) -> subprocess.CompletedProcess:
    env = hub_env(hf_home, endpoint)
    if cache is not None:
        env["VRAMLAB_CACHE"] = str(cache)
    return subprocess.run([sys.executable, "-m", "harness", *args], env=env, capture_output=True, text=True,
                          timeout=600, cwd=cwd or REPO)


def _cells(hf_home: Path, matrix: Path, endpoint: str | None = None) -> list[dict]:
    done = _vramlab(hf_home, "cells", str(matrix), "--json", endpoint=endpoint)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def cached(tmp_path, repository) -> Path:
    """An HF_HOME whose hub cache holds main and v2 of acme/tiny, downloaded by huggingface_hub."""
    with loopback_hub(repository) as endpoint:
        for revision in ("main", "v2"):
            download(tmp_path / "hf", endpoint, repository, revision)
    return tmp_path / "hf"


@pytest.mark.slow
def test_a_hub_model_pinned_at_a_branch_validates_estimates_and_names_its_commit_offline(tmp_path, cached):
    matrix = _matrix(tmp_path, "main")
    (cell,) = _cells(cached, matrix)  # the matrix read and checked against the model's config, as validate does
    assert cell["settings"]["revision"] == commit_of("first")  # main, as the cache's refs/main names it
    assert cell["cell_id"] == cell_id_of(cell["settings"])
    done = _vramlab(cached, "estimate", str(matrix))
    assert done.returncode == 0, done.stderr
    assert "acme/tiny" in done.stdout and "total" in done.stdout and "not known" not in done.stdout
    assert "2 layers of linear weights" in done.stdout  # the shapes of the cached config.json (tiny-llama's)


@pytest.mark.slow
def test_an_unpinned_hub_model_in_the_cache_is_estimated_from_its_config(tmp_path, cached):
    done = _vramlab(cached, "estimate", str(_matrix(tmp_path, None)))
    assert done.returncode == 0 and "total" in done.stdout and "not known" not in done.stdout, done.stdout


@pytest.mark.slow
def test_a_branch_a_tag_and_a_commit_are_the_cells_of_their_commits(tmp_path, cached):
    axes = f"axes: {{revision: [main, v2, {commit_of('first')}]}}\n"
    done = _vramlab(cached, "cells", str(_matrix(tmp_path, None, axes)), "--json")
    assert done.returncode == 2 and "have the same settings, so they are one cell" in done.stderr  # main is that commit
    cells = _cells(cached, _matrix(tmp_path, None, "axes: {revision: [main, v2]}\n"))
    assert [c["settings"]["revision"] for c in cells] == [commit_of("first"), commit_of("second")]
    assert len({c["cell_id"] for c in cells}) == 2


@pytest.mark.slow
def test_a_cell_of_a_hub_model_records_the_commit_it_loaded(tmp_path, cached, cache_dir):
    matrix = _matrix(tmp_path, "v2")
    done = _vramlab(cached, "run-cell", "--matrix", str(matrix), "--cell", "adapter=lora", "--results-dir",
                    str(tmp_path / "results"), cwd=tmp_path, cache=cache_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = (tmp_path / "results" / "m").glob("*.json")
    result = json.loads(path.read_text())
    assert result["status"] == "ok", result.get("reason")
    assert result["model"]["kind"] == "hub id" and result["model"]["commit"] == commit_of("second")
    assert result["config"]["revision"] == commit_of("second") and path.stem == cell_id_of(result["config"])
    assert _vramlab(cached, "check", str(path)).returncode == 0


@pytest.mark.slow
def test_a_revision_the_cache_lacks_is_refused_offline_in_one_line(tmp_path, cached):
    done = _vramlab(cached, "validate", str(_matrix(tmp_path, "v3")))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert ("adapter=lora.revision: revision 'v3' of acme/tiny: the local cache" in done.stderr
            and "the hub cannot be reached (HF_HUB_OFFLINE is set)" in done.stderr
            and "hf download acme/tiny --revision v3" in done.stderr), done.stderr


@pytest.mark.slow
def test_online_the_hub_names_the_commit_and_the_cache_keeps_its_answer(tmp_path, repository):
    hf_home, matrix = tmp_path / "hf", _matrix(tmp_path, "v2")
    with loopback_hub(repository) as endpoint:
        (online,) = _cells(hf_home, matrix, endpoint=endpoint)
    assert online["settings"]["revision"] == commit_of("second")
    assert (hf_home / "hub" / "models--acme--tiny" / "refs" / "v2").read_text() == commit_of("second")
    (offline,) = _cells(hf_home, matrix)  # the hub gone: the cache says the same
    assert offline["cell_id"] == online["cell_id"]


def test_a_revision_of_a_model_that_is_no_hub_id_is_refused(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text('fixed: {model: "arch:tiny-llama", revision: main}\naxes: {adapter: [lora]}\n')
    with pytest.raises(MatrixError, match="revision has no effect: it acts only in cells with a Hugging Face hub id"):
        expand(str(path))


@pytest.mark.parametrize("revision", ["'bad name'", "'a..b'", "'-x'", "3"])
def test_a_revision_that_no_branch_tag_or_commit_could_be_is_refused(tmp_path, revision):
    path = tmp_path / "m.yaml"
    path.write_text(f'fixed: {{model: "acme/tiny", revision: {revision}}}\naxes: {{adapter: [lora]}}\n')
    with pytest.raises(MatrixError, match="revision"):
        expand(str(path), check_model=False)
