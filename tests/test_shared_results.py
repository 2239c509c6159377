"""A results folder shared by several runs and several people: one run at a time per cell, and result files
everyone can read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.test_published_results import _env, matrix_with_cell_id_after


@pytest.mark.slow
def test_a_cell_is_never_measured_by_two_runs_at_once(tmp_path):
    """A second run of a cell that another run is measuring waits for it, says so, and keeps what it measured."""
    from harness.results import read

    matrix, cell_id = matrix_with_cell_id_after(tmp_path, first="")
    out = tmp_path / "results" / "m" / f"{cell_id}.json"
    # the other run: a process that holds the cell's lock while it "measures" (here: until told to write)
    holder = subprocess.Popen([sys.executable, "-c", f"""
import sys
from pathlib import Path
from harness.results.lock import result_lock
from tests.test_published_results import write_published
with result_lock(Path({str(out)!r})):
    print("holding", flush=True)
    sys.stdin.readline()
    write_published(Path({str(tmp_path / "results")!r}), Path({str(matrix)!r}))
"""], cwd=REPO, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    second = subprocess.Popen([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell", cell_id,
                               "--out", str(out), "--time-limit", "1"], cwd=tmp_path, env=_env(),
                              stderr=subprocess.PIPE, text=True)
    line = second.stderr.readline()
    assert "is being measured by another run" in line and f"pid {holder.pid}" in line, line
    assert second.poll() is None  # waiting
    holder.communicate("go\n", timeout=60)
    rest = second.communicate(timeout=120)[1]
    assert second.returncode == 0, rest
    assert "was measured by the run this one waited for" in rest
    assert read(out).status.value == "ok"  # the other run's result, not a timeout of this one


def test_a_killed_run_leaves_no_lock_to_clear(tmp_path):
    import signal

    from harness.results.lock import result_lock

    out = tmp_path / "results" / "m" / "0123456789ab.json"
    holder = subprocess.Popen([sys.executable, "-c", f"""
import time
from pathlib import Path
from harness.results.lock import result_lock
with result_lock(Path({str(out)!r})):
    print("holding", flush=True)
    time.sleep(600)
"""], cwd=REPO, env=_env(), stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "holding"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    told = []
    with result_lock(out, lambda who, path: told.append(who)) as waited:
        assert not waited and not told


@pytest.mark.slow
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_result_file_is_as_readable_as_the_folders_other_files(tmp_path, umask, mode):
    """A shared results folder (a lab's server, a cluster's shared disk): result files get the permissions the
    umask gives any new file, as the logs and reports beside them do."""
    matrix, _ = matrix_with_cell_id_after(tmp_path, first="")
    done = subprocess.run([sys.executable, "-c", f"""
import os
os.umask({umask})
from pathlib import Path
from tests.test_published_results import write_published
write_published(Path({str(tmp_path / "results")!r}), Path({str(matrix)!r}))
"""], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "results").rglob("*.json")]
    assert len(files) == 3 and {oct(p.stat().st_mode & 0o777) for p in files} == {oct(mode)}


class _FakeNvml:
    """pynvml as seen by a cell's process: the compute processes on its GPU."""

    class NVMLError(Exception):
        pass

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        from types import SimpleNamespace

        return [SimpleNamespace(pid=pid, usedGpuMemory=2**30) for pid in self.pids]

    def nvmlDeviceGetMemoryInfo(self, handle):
        from types import SimpleNamespace

        return SimpleNamespace(used=2**31, total=2**34)


def _probe(pids: list[int]):
    import os

    from harness.run.trackers.memory import DeviceMemoryProbe

    probe = DeviceMemoryProbe.__new__(DeviceMemoryProbe)
    probe._nvml, probe.handle, probe.pid, probe.baseline, probe.total = _FakeNvml(pids), None, os.getpid(), 0, 2**34
    probe.method = "nvml-process"
    probe.others = set()
    return probe


def test_a_cell_that_shared_its_device_unannounced_is_no_speed_measurement():
    """Another process computing on the same GPU (a second run on the folder, a colleague's job) slows the cell:
    its peak is still its own process's, its tokens/s is no measurement."""
    import os

    from harness.run.measure import throughput_measured

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # this process's own
    try:
        alone = _probe([os.getpid(), child.pid])
        assert alone.read() == 2**30 and throughput_measured(alone, shared_device=False) == (True, None)
        shared = _probe([os.getpid(), 1])
        shared.read()
        measured, note = throughput_measured(shared, shared_device=False)
        assert not measured and "1 other process" in note
        hidden = _probe([4242424])  # this process not listed (a PID namespace): nothing can be told
        hidden.read()
        assert throughput_measured(hidden, shared_device=False) == (True, None)
        assert throughput_measured(None, shared_device=True)[0] is False  # the matrix said so
    finally:
        child.kill()
        child.wait()
