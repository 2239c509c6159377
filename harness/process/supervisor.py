"""The supervisor of one cell: every way a cell can end leaves a result file, and no cell blocks the matrix.
Why it is so: docs/measurement.md."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from harness.core import environment_variables
from harness.core.environment import _cpu_name, _git, cuda_present, nvidia_driver, versions
from harness.core.errors import UsageError
from harness.data.training import sequences_needed
from harness.process import warm_start
from harness.process.procfs import stat_fields
from harness.results import CellResult, Status, new_result, now, write_atomic
from harness.results.existing import KILLED, record_input
from harness.results.model import Environment
from harness.run import worker
from harness.run.worker_status import RECORD_ENV, STATUS_ENV, TIME_LIMIT_ENV, SupervisorError, recorded_lease
from harness.spec.cells import Cell

log = logging.getLogger("vramlab")

BASE_SECONDS = 1800.0  # loading a large model from a cold disk, compiling kernels, the first steps
SECONDS_PER_SEQUENCE = 30.0  # a slow paged or offloaded sequence on a 16 GB card stays well below this
GRACE_SECONDS = 10.0
POLL_SECONDS = 0.1
OBSERVE_EVERY = 5  # polls between two looks at the worker's status for the progress line
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def time_limit(settings: dict[str, Any], given: float | None = None) -> float:
    """Seconds the cell may take: `given` (--time-limit), else VRAMLAB_TIME_LIMIT, else scaled by its work.

    Not a setting of the cell: a setting would enter the cell id, and a new limit would re-measure every cell."""
    if given is None:
        try:
            given = environment_variables.time_limit()
        except UsageError as err:
            raise SupervisorError(str(err)) from None
        if given is None:
            return BASE_SECONDS + SECONDS_PER_SEQUENCE * sequences_needed(settings)
        return given
    problem = environment_variables.time_limit_problem("--time-limit", given)
    if problem:
        raise SupervisorError(problem)
    return given


# --- the supervisor's side --------------------------------------------------------------------------------


def supervise(cell: Cell, out: Path, worker_args: list[str], limit: float, grace: float = GRACE_SECONDS,
              progress: Callable[[dict[str, Any]], None] | None = None, extra_env: dict[str, str] | None = None) -> int:
    """Run the worker under `limit` seconds; returns the exit status for `vramlab run-cell` (0 once a result
    exists, so the matrix goes on). Interrupted, it ends by the same signal and leaves no result. `progress`
    is shown the worker's status (phase, step, loss) as it changes. `extra_env`: the worker's own variables
    (the device it was leased, harness/process/device_lease.py)."""
    before = _signature(out)
    started = now()
    with tempfile.TemporaryDirectory(prefix="vramlab-status-") as folder:
        status_file = Path(folder) / "status.json"
        env = {**os.environ, **(extra_env or {}), STATUS_ENV: str(status_file), TIME_LIMIT_ENV: repr(limit)}
        proc = _start_worker(worker_args, env)
        interrupted: list[int] = []
        reaped = False

        def forward(signum: int, frame: FrameType | None) -> None:
            # the worker is in a session of its own: a Ctrl-C on the terminal or a scheduler's SIGTERM reaches
            # only this process, and the worker must not outlive it
            interrupted.append(signum)
            if not reaped:
                _signal_group(proc.pid, signum)

        # a signal this process was started ignoring (SIGINT in a background job) stays ignored, as before
        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)
                    if signal.getsignal(s) is not signal.SIG_IGN}
        try:
            observe = (lambda: progress(_read_status(status_file))) if progress else None
            ended_by = _watch(proc, time.monotonic() + limit, interrupted, grace, observe, _client_gone())
            returncode = _reap(proc, grace)
            reaped = True
            status = _read_status(status_file)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    if interrupted:
        log.warning("cell %s: interrupted by %s; no result, so the next run measures it again", cell.cell_id,
                    signal.Signals(interrupted[0]).name)
        signal.signal(interrupted[0], signal.SIG_DFL)
        os.kill(os.getpid(), interrupted[0])
        return 128 + interrupted[0]
    if _signature(out) not in (None, before):
        if ended_by is not None or returncode:
            log.warning("cell %s: its result was written, then the worker %s", cell.cell_id,
                        f"passed its {limit:g} s limit" if ended_by else _how_it_exited(returncode))
        return 0
    _write_result(cell, out, status, limit, ended_by, returncode, started, extra_env)
    return 0


def _start_worker(worker_args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes] | ForkedWorker:
    """The measuring process: a fresh interpreter, or, in a spare that took this cell (harness/process/warm_start.py),
    a fork of the spare that starts with its imports done, when nothing in the spare has touched CUDA."""
    serving = warm_start.SERVING
    if serving is not None and warm_start.cuda_untouched() is None:
        return _fork_worker(worker_args, {**env, RECORD_ENV: json.dumps(serving.record)}, serving)
    return subprocess.Popen([sys.executable, "-m", "harness.run", *worker_args], env=env,
                            start_new_session=True, preexec_fn=_dies_with_this_process())


class ForkedWorker:
    """The part of Popen the supervisor uses, for a measuring process forked from this one."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(POLL_SECONDS)


def _fork_worker(worker_args: list[str], env: dict[str, str], serving: Any) -> ForkedWorker:
    arm = _dies_with_this_process()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return ForkedWorker(pid)
    code = 1
    try:  # the measuring process, as `python -m harness.run` in a fresh interpreter would be
        serving.listener.close()
        serving.client.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as a fresh interpreter starts
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
        if arm is not None:
            arm()
        os.environ.clear()
        os.environ.update(env)
        logging.getLogger("vramlab").handlers.clear()  # the supervisor's console line is not the worker's
        code = worker.main(worker_args)
    except SystemExit as err:
        code = err.code if isinstance(err.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        worker.end_worker(code)


def _client_gone() -> Callable[[], bool] | None:
    return warm_start.SERVING.client_gone if warm_start.SERVING is not None else None


def _watch(proc: subprocess.Popen[bytes] | ForkedWorker, deadline: float, interrupted: list[int], grace: float,
           observe: Callable[[], None] | None = None, client_gone: Callable[[], bool] | None = None) -> str | None:
    """Wait for the worker to exit, leaving it unreaped so that no new process can take its group id while
    the group is signalled. Returns how it was ended at the limit (the last signal sent), or None when it
    ended by itself or was interrupted (a warm-started cell's client gone counts as SIGTERM)."""
    polls = 0
    while not _exited(proc.pid):
        polls += 1
        if observe is not None and polls % OBSERVE_EVERY == 0:
            observe()
        if client_gone is not None and not interrupted and polls % OBSERVE_EVERY == 0 and client_gone():
            interrupted.append(signal.SIGTERM)
            _signal_group(proc.pid, signal.SIGTERM)
        if interrupted:
            end_group(proc.pid, grace, first=None)  # the signal is already on its way
            return None
        if time.monotonic() >= deadline:
            return end_group(proc.pid, grace) or "nothing: it ended at the limit"
        time.sleep(POLL_SECONDS)
    if _group_alive(proc.pid):
        # a helper the worker left behind (a data loader worker) would hold memory the next cell needs
        end_group(proc.pid, grace)
    return None


def _reap(proc: subprocess.Popen[bytes] | ForkedWorker, grace: float) -> int | None:
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        # SIGKILL waits for a process stuck in the driver (uninterruptible sleep); the result cannot wait
        log.warning("worker %d still has not ended after SIGKILL", proc.pid)
        return None


def end_group(pgid: int, grace: float = GRACE_SECONDS, first: signal.Signals | None = signal.SIGTERM) -> str | None:
    """SIGTERM to every process of the group, then SIGKILL to whatever is still there after `grace` seconds;
    returns the name of the last signal sent (None when the group was already gone)."""
    sent = None
    if first is not None and _signal_group(pgid, first):
        sent = first.name
    deadline = time.monotonic() + grace
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return signal.SIGKILL.name if _signal_group(pgid, signal.SIGKILL) else sent
        time.sleep(POLL_SECONDS)
    return sent


def _signal_group(pgid: int, signum: int) -> bool:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _exited(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs; zombies (the unreaped worker itself) do not count."""
    try:
        entries = os.scandir("/proc")
    except OSError:
        return _signal_group(pgid, 0)
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            fields = stat_fields(Path(entry.path, "stat"))
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


def _dies_with_this_process() -> Callable[[], None] | None:
    """A worker in its own session escapes a kill of this process's group (a workflow killed with kill -9): the
    kernel sends it SIGKILL when this process dies, so that it never writes a result nobody waits for."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != parent:  # this process died before the line above
            os._exit(1)

    return arm


def _signature(path: Path) -> tuple[int, int, int] | None:
    """A result is new when this changed: results are renamed into place, so every write is a new inode."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _read_status(path: Path) -> dict[str, Any]:
    try:
        status = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return status if isinstance(status, dict) else {}


def _how_it_exited(returncode: int | None) -> str:
    if returncode is None:
        return "did not end even after SIGKILL (stuck in the driver?)"
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    cause = {"SIGKILL": " (perhaps the kernel's out-of-memory killer)",
             "SIGSEGV": " (a crash in native code: a CUDA library, a kernel)",
             "SIGBUS": " (a crash in native code: a CUDA library, a kernel)",
             "SIGABRT": " (aborted by native code: a failed assertion in a library)"}.get(name, "")
    return f"was killed by {name}{cause}"


def _write_result(cell: Cell, out: Path, status: dict[str, Any], limit: float, ended_by: str | None,
                  returncode: int | None, started: str, extra_env: dict[str, str] | None = None) -> CellResult:

    phase = str(status.get("phase") or "start")
    trace = status.get("traceback")
    record: dict[str, Any] = {"time_limit_seconds": limit, "phase": phase}
    if ended_by is not None:
        record["ended_by"] = ended_by
        result_status = Status.timeout
        reason = f"passed its wall-clock limit of {limit:g} s in phase '{phase}'; its processes were ended"
    else:
        record["exit"] = _how_it_exited(returncode)
        result_status = Status.error
        reason = f"the measuring process {record['exit']} in phase '{phase}', without writing a result"
        if trace:
            reason += f"; last error: {trace.strip().splitlines()[-1][:500]}"
    # a kill says nothing of the cell's settings: the next run measures it again (harness/results/existing.py)
    killed = {"error": {"cause": KILLED}} if returncode is not None and returncode < 0 and ended_by is None else {}
    result = new_result(cell, result_status, reason, environment=_environment(cell, status.get("environment")),
                        phase=phase, traceback=trace, records={"supervisor": record, **killed},
                        device_lease=recorded_lease(extra_env or {}))
    result.started_at, result.finished_at = started, now()
    record_input(result)
    write_atomic(out, result)
    log.warning("cell %s (%s): %s - %s", cell.cell_id, cell.name, result_status.value, reason)
    return result


def _environment(cell: Cell, reported: Any) -> dict[str, Any] | None:
    """The worker's own record when it got that far (it knows the device); else what can be known without
    torch. Never raises: a result without an environment is better than none."""
    if isinstance(reported, dict):
        try:
            return Environment.model_validate(reported).model_dump()
        except ValueError:
            log.warning("the worker's environment record is not valid; recording one without the device")
    try:
        import psutil

        driver = nvidia_driver()
        cuda = cell.settings.get("device") != "cpu" and cuda_present()
        return {"host": socket.gethostname(), "platform": platform.platform(), "cpu": _cpu_name(),
                "cpu_count": os.cpu_count(), "host_memory_bytes": psutil.virtual_memory().total,
                "python": platform.python_version(), "versions": versions(), "git": _git(),
                "cuda_available": cuda, "driver": driver}
    except Exception as err:
        log.warning("no environment for the result: %s", err)
        return None
