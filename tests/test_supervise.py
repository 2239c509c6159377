"""The supervisor of a cell: a hang ends at the wall-clock limit as `timeout` with its phase, a hard death
becomes an `error` result naming how, an interruption leaves nothing, and a normal cell is as before.

Workers are made to hang or die through VRAMLAB_TEST_FAULT (harness/process/supervisor.py), at a phase boundary of
the real measuring process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.cli import parser
from harness.process.supervisor import TIME_LIMIT_ENV, SupervisorError, end_group, time_limit
from harness.spec.settings import defaults
from tests.conftest import REPO, TINY, run_vramlab, write_matrix

PLAIN = "{name: plain, context: 32}"
HELPER = re.compile(r"test fault: hanging in phase (\w+) with helper process (\d+)")


def cell_of(tmp_path: Path, cache_dir: Path, cell: str = PLAIN) -> tuple[Path, str]:
    matrix = write_matrix(tmp_path, TINY.format(cells=f"  - {cell}"))
    listed = run_vramlab("cells", str(matrix), "--json", cwd=tmp_path, cache=cache_dir)
    assert listed.returncode == 0, listed.stderr
    return matrix, json.loads(listed.stdout.splitlines()[0])["cell_id"]


def supervised(tmp_path: Path, cache_dir: Path, fault: str | None, limit: float | None = None, cell: str = PLAIN,
               stale: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    """`vramlab run-cell` on one tiny cell; `stale` leaves a file from an earlier run where its result goes."""
    matrix, cell_id = cell_of(tmp_path, cache_dir, cell)
    out = tmp_path / "results" / "m" / f"{cell_id}.json"
    if stale:
        out.parent.mkdir(parents=True)
        out.write_text("a result from an earlier run, which must not count as this run's\n")
    env = {"VRAMLAB_TEST_FAULT": fault or "", TIME_LIMIT_ENV: str(limit) if limit else ""}
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell_id],
                          cwd=tmp_path, env=_env(cache_dir, **env), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads(out.read_text())


def _env(cache_dir: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO), **extra}


def gone(pid: int) -> bool:
    """Ended: a zombie left for an init that does not reap counts as ended."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def reached_fault(proc: subprocess.Popen) -> re.Match:
    """The worker's line saying it hangs at its fault, read from the stderr of the run-cell process `proc`."""
    for line in proc.stderr:
        found = HELPER.search(line)
        if found:
            return found
    pytest.fail("the worker never reached its fault")


def terminated(proc: subprocess.Popen, timeout: float) -> tuple[int | None, str]:
    """SIGTERM to the run-cell process `proc`: its exit status once it has ended (killed if it does not), and
    what it wrote to stderr since."""
    try:
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
    return proc.returncode, rest


@pytest.mark.slow
def test_a_hanging_worker_is_ended_at_the_limit_with_its_whole_group(tmp_path, cache_dir):
    started = time.monotonic()
    done, result = supervised(tmp_path, cache_dir, "hang:start", limit=2)
    assert time.monotonic() - started < 30
    assert result["status"] == "timeout"
    assert result["phase"] == "start"
    assert "limit of 2 s" in result["reason"] and "'start'" in result["reason"]
    assert result["records"]["supervisor"] == {"time_limit_seconds": 2.0, "phase": "start", "ended_by": "SIGTERM"}
    assert result["environment"]["python"] and result["environment"]["cuda_available"] is False
    phase, helper = HELPER.search(done.stderr).groups()
    assert phase == "start"
    assert gone(int(helper))  # the worker's own child, a stuck data loader's stand-in, went with it


@pytest.mark.slow
def test_a_worker_killed_by_sigkill_leaves_an_error_naming_the_signal(tmp_path, cache_dir):
    _, result = supervised(tmp_path, cache_dir, "sigkill:load", stale=True)
    assert result["status"] == "error"
    assert "SIGKILL" in result["reason"] and "out-of-memory killer" in result["reason"]
    assert result["phase"] == "load"  # reported by the worker's trackers as the phase opened
    assert result["environment"]["versions"]["torch"]
    assert result["records"]["supervisor"]["time_limit_seconds"] == 1800 + 30 * (1 + 2) * 2


@pytest.mark.slow
def test_an_error_inside_the_error_handling_leaves_an_error_result(tmp_path, cache_dir):
    _, result = supervised(tmp_path, cache_dir, "raise-in-handler:load")
    assert result["status"] == "error"
    assert "exited with code 1" in result["reason"] and result["phase"] == "load"
    assert "fails when it is described" in result["reason"]
    assert "During handling of the above exception" in result["traceback"]


@pytest.mark.slow
def test_sigterm_to_the_supervisor_ends_the_worker_and_leaves_no_result(tmp_path, cache_dir):
    matrix, cell_id = cell_of(tmp_path, cache_dir)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell_id],
                            cwd=tmp_path, env=_env(cache_dir, VRAMLAB_TEST_FAULT="hang:start"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        found = reached_fault(proc)
        (worker,) = psutil.Process(proc.pid).children()
    except BaseException:
        proc.kill()
        raise
    code, rest = terminated(proc, 30)
    assert code == -signal.SIGTERM, rest
    assert not (tmp_path / "results" / "m" / f"{cell_id}.json").exists()
    assert gone(worker.pid) and gone(int(found.group(2)))


@pytest.mark.slow
def test_a_result_the_worker_wrote_stands(tmp_path, cache_dir):
    # a declared conflict: the worker writes `skipped` without loading a model
    _, result = supervised(tmp_path, cache_dir, None, limit=120, cell="{name: both, kernels: liger+unsloth}")
    assert result["status"] == "skipped" and "unsloth-with-liger" in result["reason"]
    assert result["records"]["supervisor"] == {"time_limit_seconds": 120.0}
    assert result["phase"] is None


@pytest.mark.slow
def test_a_worker_hanging_in_training_is_recorded_in_that_phase(tmp_path, cache_dir):
    _, result = supervised(tmp_path, cache_dir, "hang:train", limit=30)
    assert result["status"] == "timeout"
    assert result["phase"] == "train"
    assert result["environment"]["versions"]["torch"]


@pytest.mark.slow
def test_a_normal_cell_still_trains_under_its_supervisor(tmp_path, cache_dir):
    _, result = supervised(tmp_path, cache_dir, None)
    assert result["status"] == "ok", result.get("traceback") or result["reason"]
    assert len(result["metrics"]["loss"]) == 3
    assert result["records"]["supervisor"] == {"time_limit_seconds": 1980.0}


def test_the_time_limit_scales_with_the_work_and_can_be_set(monkeypatch):
    settings = {**defaults(), "steps": 10, "warmup_steps": 2, "grad_accum": 4, "batch_size": 2}
    monkeypatch.delenv(TIME_LIMIT_ENV, raising=False)
    assert time_limit(settings) == 1800 + 30 * 12 * 4 * 2
    monkeypatch.setenv(TIME_LIMIT_ENV, "90")
    assert time_limit(settings) == 90
    assert time_limit(settings, 5.5) == 5.5  # the command line wins over the environment
    monkeypatch.setenv(TIME_LIMIT_ENV, "soon")
    with pytest.raises(SupervisorError, match=TIME_LIMIT_ENV):
        time_limit(settings)
    with pytest.raises(SupervisorError, match="--time-limit"):
        time_limit(settings, 0)


def test_a_group_that_ignores_sigterm_gets_sigkill_after_the_grace():
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                                 "signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"],
                                start_new_session=True, stdout=subprocess.PIPE, text=True)
    try:
        assert stubborn.stdout.readline() == "ready\n"
        started = time.monotonic()
        assert end_group(stubborn.pid, grace=0.5) == "SIGKILL"
        assert 0.5 <= time.monotonic() - started < 5
        assert stubborn.wait(timeout=5) == -signal.SIGKILL
    finally:
        stubborn.kill()
        stubborn.wait()


def test_the_worker_command_is_not_in_the_help():
    assert "run-cell-worker" not in parser().format_help()
    assert "run-cell" in parser().format_help()
