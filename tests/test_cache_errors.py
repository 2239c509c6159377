"""An error a damaged file of the model cache caused is no outcome of the cell: the error result records the cache
folder (by its place in the cache) and what it held, stands while the folder is as it was, and is measured again once
the folder is mended or built again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, TINY

pytestmark = pytest.mark.slow  # a model built and a cell run three times


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "VRAMLAB_CACHE": str(cache)}


def _run(argv: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=_env(cache), capture_output=True, text=True,
                          timeout=600)


def test_an_error_of_a_damaged_cache_is_measured_again_once_the_cache_is_mended(tmp_path):
    from harness.spec.matrix import expand

    cache = tmp_path / "cache"  # a cache of its own: the session's is shared with the other tests
    built = _run(["-m", "harness", "prepare-model", "arch:tiny-llama"], tmp_path, cache)
    assert built.returncode == 0, built.stderr[-2000:]
    weights = Path(built.stdout.strip().splitlines()[-1]) / "model.safetensors"
    good = weights.read_bytes()
    # damaged where the sizes still agree (a tensor's dtype garbled): a file cut short is built again before a cell
    # loads it (t13-074), so only a damage that check cannot see reaches the cell
    damaged = good.replace(b'"dtype":"BF16"', b'"dtype":"QQ16"', 1)
    assert damaged != good and len(damaged) == len(good)
    weights.write_bytes(damaged)

    matrix = tmp_path / "m.yaml"
    matrix.write_text(TINY.format(cells="  - {name: a, context: 32}"))
    cell = expand(str(matrix))[0]
    result = tmp_path / "results" / "m" / f"{cell.cell_id}.json"
    done = _run(["-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell.cell_id], tmp_path, cache)
    recorded = json.loads(result.read_text())
    assert recorded["status"] == "error" and "SafetensorError" in recorded["reason"], done.stderr[-2000:]
    assert recorded["records"]["error"]["cache_folder"] == weights.parent.relative_to(cache).as_posix()
    assert str(cache) not in result.read_text()  # the cache's place on this machine is never recorded

    snakemake = ["-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "--cores", "1",
                 "--config", f"matrix={matrix}"]
    planned = _run([*snakemake[:-2], "-n", *snakemake[-2:]], tmp_path, cache)
    assert planned.returncode == 0, planned.stderr[-3000:]
    # while the cache is as it was, the error stands: the cell is not planned again
    assert "rule cell:" not in planned.stdout and "model cache folder" not in planned.stderr, planned.stdout[-3000:]

    weights.write_bytes(good)  # mended
    done = _run(snakemake, tmp_path, cache)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"its error came from the model cache folder {recorded['records']['error']['cache_folder']} as it was " \
           "then, and it has changed since" in done.stderr
    assert json.loads(result.read_text())["status"] == "ok"
    kept = list((result.parent / "superseded").iterdir())
    assert len(kept) == 1 and json.loads(kept[0].read_text())["status"] == "error"
