"""Warm start (harness/process/warm_start.py): a cell hands itself to the spare the previous cell left, runs in a
process forked from it with the imports done, records that it did; a spare never imports what Unsloth patches
nor touches CUDA, serves only a client with its environment, ends by itself, and a warm cell is supervised
as a fresh one is (limit, SIGTERM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.process import warm_start
from tests.conftest import REPO, TINY, run_vramlab, write_matrix
from tests.test_supervise import HELPER, gone, reached_fault, terminated

IDLE = "4"  # seconds a spare waits once the cell that started it has ended


def _cells(tmp_path: Path, cache: Path, *contexts: int) -> tuple[Path, list[str]]:
    cells = "\n".join(f"  - {{name: c{n}, context: {n}}}" for n in contexts)
    matrix = write_matrix(tmp_path, TINY.format(cells=cells))
    listed = run_vramlab("cells", str(matrix), "--json", cwd=tmp_path, cache=cache)
    assert listed.returncode == 0, listed.stderr
    return matrix, [json.loads(line)["cell_id"] for line in listed.stdout.splitlines()]


def _env(cache: Path, **extra: str) -> dict[str, str]:
    # the tiny cells run on the CPU, which is never warm-started outside the tests (harness/process/warm_start.py)
    return {**os.environ, "VRAMLAB_CACHE": str(cache), "PYTHONPATH": str(REPO), "VRAMLAB_SPARE_IDLE": IDLE,
            "VRAMLAB_WARM_START_CPU": "1", **extra}


def _run_cell(tmp_path: Path, matrix: Path, cell_id: str, env: dict[str, str], *extra: str):
    return subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell_id,
                           "--warm-start", *extra], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def _result(tmp_path: Path, cell_id: str) -> dict:
    return json.loads((tmp_path / "results" / "m" / f"{cell_id}.json").read_text())


def _spares(cache: Path, state: str = "ready") -> list[int]:
    found = []
    for path in (cache / "spares").glob("*.spare"):
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if state in (info["state"], "any"):
            found.append(info["pid"])
    return found


def _wait_for_spare(cache: Path, seconds: float = 120) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready = [pid for pid in _spares(cache) if not gone(pid)]
        if ready:
            return ready[0]
        time.sleep(0.2)
    pytest.fail("no spare became ready")


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(warm_start.AHEAD))
def test_what_a_spare_imports_ahead_starts_no_cuda_and_only_a_hugging_face_spare_what_unsloth_patches(kind):
    code = ("import importlib, sys, torch\n"
            "from harness.process import warm_start as w\n"
            f"for m in w.AHEAD[{kind!r}]:\n"
            "    try: importlib.import_module(m)\n"
            "    except ImportError: pass\n"
            f"print(w.cuda_untouched({kind!r}), torch.cuda.is_initialized(),"
            " sorted(m for m in w.PATCHED_BY_UNSLOTH if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    patched = "[]" if kind == "any" else "['accelerate', 'transformers']"
    assert done.stdout.strip() == f"None False {patched}"


@pytest.mark.slow
def test_a_cpu_cell_starts_fresh_whatever_is_asked(tmp_path, spare_cache):
    matrix, (first, second) = _cells(tmp_path, spare_cache, 36, 52)
    env = {k: v for k, v in _env(spare_cache).items() if k != "VRAMLAB_WARM_START_CPU"}
    for cell in (first, second):
        done = _run_cell(tmp_path, matrix, cell, env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert _result(tmp_path, cell)["records"]["process"]["start"] == "fresh"
    assert all(gone(pid) for pid in _spares(spare_cache, "any"))


@pytest.mark.slow
def test_a_gpu_cell_on_a_machine_without_one_is_skipped_without_a_spare(tmp_path, spare_cache):
    from harness.core.environment import cuda_present

    if cuda_present():
        pytest.skip("this machine has a GPU")
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: gpu, context: 32, device: cuda}"))
    listed = run_vramlab("cells", str(matrix), "--json", cwd=tmp_path, cache=spare_cache)
    cell = json.loads(listed.stdout.splitlines()[0])["cell_id"]
    env = {k: v for k, v in _env(spare_cache).items() if k != "VRAMLAB_WARM_START_CPU"}
    launches = spare_cache / "spares" / "spares.log"  # a line for every spare started
    size = launches.stat().st_size if launches.exists() else None
    done = _run_cell(tmp_path, matrix, cell, env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _result(tmp_path, cell)["status"] == "skipped"
    assert (launches.stat().st_size if launches.exists() else None) == size


def test_a_process_that_imported_what_unsloth_patches_is_no_spare_for_an_unsloth_cell():
    import transformers  # noqa: F401  (already imported by other tests in this session, or now)

    assert "transformers" in warm_start.cuda_untouched("any")
    assert warm_start.TAKES["unsloth"] == ("any",)


@pytest.mark.slow
def test_the_next_cell_runs_in_the_spare_the_previous_one_left(tmp_path, spare_cache):
    matrix, (first, second) = _cells(tmp_path, spare_cache, 32, 48)
    env = _env(spare_cache)
    done = _run_cell(tmp_path, matrix, first, env)
    assert done.returncode == 0, done.stderr[-3000:]
    spare = _wait_for_spare(spare_cache)
    done = _run_cell(tmp_path, matrix, second, env, "--log", str(tmp_path / "second.log"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cell c48: ok" in done.stderr  # the console line, written by the spare to this client's stream
    cold, warm = _result(tmp_path, first), _result(tmp_path, second)
    assert cold["status"] == warm["status"] == "ok", warm.get("traceback")
    assert cold["records"]["process"]["start"] == "fresh"
    assert cold["records"]["process"]["gc_frozen_objects"] == 0  # a CPU cell freezes nothing of its own
    process = warm["records"]["process"]
    assert process["gc_frozen_objects"] > 0  # what the spare imported, frozen before the fork
    assert process["start"] == "warm" and process["imports_ahead_seconds"] > 0
    # a matrix of Hugging Face cells keeps spares that import transformers, trl and peft ahead too
    assert process["kind"] == "huggingface" and {"torch", "transformers"} <= set(process["imported_ahead"])
    assert warm["metrics"]["time_by_phase"]["start_and_imports"] < cold["metrics"]["time_by_phase"]["start_and_imports"]
    assert gone(spare)  # it served one cell and ended
    assert "(c48): ok" in (tmp_path / "second.log").read_text()
    # the spare this cell left ends by itself once nobody claims it
    deadline = time.monotonic() + 60 + float(IDLE)
    while any(not gone(pid) for pid in _spares(spare_cache, "any")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert all(gone(pid) for pid in _spares(spare_cache, "any"))


@pytest.mark.slow
def test_a_spare_serves_only_a_client_with_its_environment(tmp_path, spare_cache):
    matrix, (first, second) = _cells(tmp_path, spare_cache, 40, 56)
    # a spare that waits long enough to be there when the other client comes
    done = _run_cell(tmp_path, matrix, first, _env(spare_cache, SOMETHING_ELSE="a", VRAMLAB_SPARE_IDLE="120"))
    assert done.returncode == 0, done.stderr[-3000:]
    spare = _wait_for_spare(spare_cache)
    done = _run_cell(tmp_path, matrix, second, _env(spare_cache, SOMETHING_ELSE="b", VRAMLAB_SPARE_IDLE="120"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert _result(tmp_path, second)["records"]["process"]["start"] == "fresh"
    assert not gone(spare)  # still waiting for a client of its own kind
    for pid in _spares(spare_cache, "any"):
        os.kill(pid, signal.SIGTERM)


@pytest.mark.slow
def test_a_warm_cell_is_supervised_as_a_fresh_one(tmp_path, spare_cache):
    matrix, (first, second, third) = _cells(tmp_path, spare_cache, 24, 72, 80)
    env = _env(spare_cache, VRAMLAB_TEST_FAULT="hang:start")
    # the first cell starts fresh and leaves a spare; it hangs as it starts and ends at its limit
    done = _run_cell(tmp_path, matrix, first, env, "--time-limit", "3")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _result(tmp_path, first)["status"] == "timeout"
    _wait_for_spare(spare_cache)
    # the second runs in that spare, hangs the same way and is ended at its limit the same way
    done = _run_cell(tmp_path, matrix, second, env, "--time-limit", "3")
    assert done.returncode == 0, done.stderr[-3000:]
    timed_out = _result(tmp_path, second)
    assert timed_out["status"] == "timeout" and timed_out["phase"] == "start"
    assert timed_out["records"]["supervisor"]["ended_by"] == "SIGTERM"
    assert gone(int(HELPER.search(done.stderr).group(2)))
    # the third, in the spare the second left: SIGTERM to its client ends it and leaves no result
    _wait_for_spare(spare_cache)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", third,
                             "--warm-start"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        helper = int(reached_fault(proc).group(2))
        worker = psutil.Process(helper).ppid()
    except BaseException:
        proc.kill()
        raise
    code, rest = terminated(proc, 60)
    assert code == -signal.SIGTERM, rest
    assert not (tmp_path / "results" / "m" / f"{third}.json").exists()
    deadline = time.monotonic() + 30
    while not (gone(worker) and gone(helper)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert gone(worker) and gone(helper)


def test_the_spares_log_is_rotated_once_it_is_large(tmp_path, monkeypatch):
    monkeypatch.setattr(warm_start, "SPARES_LOG_BYTES", 100)
    log, older = tmp_path / "spares.log", tmp_path / "spares.log.1"
    with warm_start.open_spares_log(tmp_path) as out:  # none yet: made
        out.write(b"x" * 80)
    with warm_start.open_spares_log(tmp_path) as out:  # under the limit: appended to
        out.write(b"y" * 80)
    assert log.read_bytes() == b"x" * 80 + b"y" * 80 and not older.exists()
    with warm_start.open_spares_log(tmp_path) as out:  # over it: kept as spares.log.1, a new one begun
        out.write(b"z")
    assert older.read_bytes() == b"x" * 80 + b"y" * 80 and log.read_bytes() == b"z"
