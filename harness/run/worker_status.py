"""The worker's side of its supervision (harness/process/supervisor.py): the status file it tells its phase, step
and loss through, what its result keeps of the supervision and of how its process started (fresh, or forked
from a warm-start spare), and the faults the tests provoke. Inert where no supervisor started the process."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.run import bytecode, gc_freeze

log = logging.getLogger("vramlab")

STATUS_ENV = "VRAMLAB_STATUS_FILE"
TIME_LIMIT_ENV = "VRAMLAB_TIME_LIMIT"
FAULT_ENV = "VRAMLAB_TEST_FAULT"
RECORD_ENV = "VRAMLAB_WARM_START"  # the measuring process's record of how it started, set by its spare
LEASE_ENV = "VRAMLAB_DEVICE_LEASE"  # the device lease its supervisor took for it (harness/process/device_lease.py)


class SupervisorError(ValueError):
    """A limit that cannot be used; the message names where it came from."""


_status: dict[str, Any] = {}


def tell(**fields: Any) -> None:
    """Tell the supervisor something it should keep if this process dies before writing its result."""
    path = os.environ.get(STATUS_ENV)
    if not path:
        return
    _status.update(fields)
    target = Path(path)
    try:
        # temp file + rename: the supervisor may read at any moment, also after a SIGKILL half-way through a write
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(_status, handle, default=str)
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as err:
        # telling the supervisor is a courtesy; it must never change the outcome of the measurement
        log.warning("could not report to the supervisor: %s", err)


def tell_phase(phase: str) -> None:
    tell(phase=phase)
    _test_fault(phase)


def worker_record() -> dict[str, Any]:
    """What a worker's own result keeps of its supervision; empty when no supervisor started it."""
    if not os.environ.get(STATUS_ENV):
        return {}
    try:
        return {"time_limit_seconds": float(os.environ[TIME_LIMIT_ENV])}
    except (KeyError, ValueError):
        return {}


@contextmanager
def worker() -> Iterator[None]:
    """The worker's whole life: it starts in phase 'start', and an exception that escapes even the cell's
    own error handling still reaches the supervisor's result as a traceback."""
    tell_phase("start")
    try:
        yield
    except Exception:
        tell(traceback=traceback.format_exc())
        raise


class _UndescribableError(RuntimeError):
    def __str__(self) -> str:
        raise RuntimeError("test fault: this error fails when it is described")


def _test_fault(phase: str) -> None:
    """VRAMLAB_TEST_FAULT=<kind>:<phase> exists for tests/test_supervise.py only: it makes a worker hang or die
    the ways real ones do, at a phase boundary, without a test path anywhere in the measuring code. Unset, it
    does nothing. Kinds: hang (with a helper process in its group, as a stuck data loader has), sigkill (as
    the kernel's OOM killer does), raise-in-handler (an error that fails again inside the cell's handling)."""
    kind, _, at = os.environ.get(FAULT_ENV, "").partition(":")
    if not kind or at != phase:
        return
    if kind == "hang":
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        print(f"test fault: hanging in phase {phase} with helper process {helper.pid}", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    if kind == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "raise-in-handler":
        raise _UndescribableError()
    raise SupervisorError(f"{FAULT_ENV}: unknown fault {kind!r}")


def started_how() -> dict[str, Any]:
    """For the measuring process's result: how its process started, and where its bytecode came from."""
    try:
        record = json.loads(os.environ.get(RECORD_ENV) or "null")
    except ValueError:
        record = None
    return {**(record if isinstance(record, dict) else {"start": "fresh"}), "bytecode_cache": bytecode.in_use(),
            "gc_frozen_objects": gc_freeze.frozen()}


def recorded_lease(env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The device lease this measuring process was started under, as its supervisor handed it over (LEASE_ENV, in
    `env` where given, else this process's environment); None without one."""
    text = (os.environ if env is None else env).get(LEASE_ENV)
    if not text:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
