"""benchmarks/cell_time_run.py on two tiny CPU cells: each cell before (another tree, fresh) and after (this
checkout, warm, a spare made ready for it), interleaved, then compared; no spare is left running."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from harness.spec.matrix import expand
from tests.conftest import REPO, TINY, write_matrix
from tests.test_warm_start import _spares, gone


def run_benchmark(tmp_path, spare_cache, *options: str) -> tuple:
    """cell_time_run.py on cells a, b and primer p of a tiny CPU matrix, its before tree a copy of this harness:
    (its output folder, the matrix file)."""
    before = tmp_path / "before"
    shutil.copytree(REPO / "harness", before / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: a, context: 32}\n  - {name: b, context: 40}\n"
                                                      "  - {name: p, context: 24}"))
    out = tmp_path / "out"
    env = {**os.environ, "VRAMLAB_CACHE": str(spare_cache), "PYTHONPATH": str(REPO), "VRAMLAB_WARM_START_CPU": "1",
           "VRAMLAB_SPARE_IDLE": "4"}
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cell_time_run.py"), str(matrix),
                           "--before-tree", str(before), "--out", str(out), "--primer", "p", "--cell", "a",
                           "--cell", "b", *options],
                          env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, matrix


@pytest.mark.slow
def test_cells_run_before_and_after_interleaved_and_are_compared(tmp_path, spare_cache):
    out, _ = run_benchmark(tmp_path, spare_cache, "--before-commit", "0123456")
    walls = (out / "walls.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in walls] == ["variant", "before", "after", "before", "after"]
    for cell_id in {line.split("\t")[1] for line in walls[1:]}:
        old, new = (json.loads((out / side / f"{cell_id}.json").read_text()) for side in ("before", "after"))
        assert old["status"] == new["status"] == "ok"
        assert old["records"]["process"]["start"] == "fresh" and old["environment"]["git"]["commit"] == "0123456"
        assert new["records"]["process"]["start"] == "warm"
    # the primer ran once on each side, fresh, and is not compared
    for side in ("before", "after"):
        (primed,) = (out / "primer" / side).glob("*.json")
        assert json.loads(primed.read_text())["records"]["process"]["start"] == "fresh"
    assert "# Cell time before and after: 2 cells" in (out / "comparison.md").read_text()
    assert all(gone(pid) for pid in _spares(spare_cache, "any"))


@pytest.mark.slow
def test_cells_dealt_to_two_streams_on_one_gpu_are_gathered_and_compared(tmp_path, spare_cache):
    out, matrix = run_benchmark(tmp_path, spare_cache, "--gpus", "1", "--per-gpu", "2")
    # one cell per stream, each stream's before and after runs in its own folder, gathered into one; the two
    # streams share a device, and each after cell still found its own stream's spare (neither took or stopped
    # the other's)
    streams = {folder.name: (folder / "walls.tsv").read_text().splitlines()[1:] for folder in out.glob("stream-*")}
    assert sorted(streams) == ["stream-0", "stream-1"]
    assert all([line.split("\t")[0] for line in lines] == ["before", "after"] for lines in streams.values())
    walls = (out / "walls.tsv").read_text().splitlines()
    assert sorted(walls[1:]) == sorted(streams["stream-0"] + streams["stream-1"])
    for cell_id in {line.split("\t")[1] for line in walls[1:]}:
        new = json.loads((out / "after" / f"{cell_id}.json").read_text())
        assert json.loads((out / "before" / f"{cell_id}.json").read_text())["status"] == new["status"] == "ok"
        assert new["records"]["process"]["start"] == "warm"
    # the one primer ran once per side, before the streams, in the first, and is not compared
    cells = {cell.name: cell.cell_id for cell in expand(str(matrix))}
    primed = [sorted(p.name for p in (out / "stream-0" / "primer" / s).glob("*.json")) for s in ("before", "after")]
    assert primed == [[f"{cells['p']}.json"]] * 2
    assert not (out / "stream-1" / "primer").exists()
    assert "# Cell time before and after: 2 cells" in (out / "comparison.md").read_text()
    assert all(gone(pid) for pid in _spares(spare_cache, "any"))
