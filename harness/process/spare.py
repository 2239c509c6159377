"""A warm-start spare (harness/process/warm_start.py): it imports ahead what is safe to, waits for one `vramlab
run-cell --warm-start` of its environment, runs that command (harness/process/cell_command.py), whose supervisor
forks the measuring process from here, and ends. Started as `python -m harness.process --kind KIND --launcher PID`."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from harness.core.cell_arguments import spare_arguments
from harness.core.command_line import Parser
from harness.core.console import start_logging
from harness.core.environment_variables import spare_idle_seconds
from harness.process import cell_command, warm_start
from harness.process.procfs import running
from harness.process.warm_start import (
    AHEAD,
    MESSAGE_BYTES,
    PER_CELL_ENV,
    Serving,
    cuda_untouched,
    key,
    pool,
    receive,
)
from harness.run import gc_freeze


def main(argv: list[str] | None = None) -> int:
    start_logging()
    parser = Parser(prog="python -m harness.process", description=__doc__.split("\n\n")[0])
    spare_arguments(parser)
    args = parser.parse_args(argv)
    problem = launcher_problem(args.launcher)
    if problem:
        parser.error(problem)
    return serve(args.kind, args.launcher)


def launcher_problem(launcher: int) -> str | None:
    """A spare serves the `run-cell --warm-start` that starts it, its parent: given any other process it would wait
    for a cell that never comes, for as long as that process lives."""
    parent = os.getppid()
    if launcher == parent:
        return None
    return (f"--launcher {launcher}: a spare serves the run-cell that starts it, its parent process ({parent}); it is "
            "started by `vramlab run-cell --warm-start`, not by hand")


def serve(kind: str, launcher: int, idle: float | None = None) -> int:
    """Import ahead, wait for one cell, supervise it (forking the measuring process), then end. `idle`: how long to
    wait unclaimed once the cell that started it has ended (default VRAMLAB_SPARE_IDLE, read when it starts)."""
    idle = spare_idle_seconds() if idle is None else idle
    started = time.time()
    # ended before it takes a cell (by its idle time, or a signal), it leaves no files behind
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    own_key, before = key(), dict(os.environ)
    folder = pool()
    folder.mkdir(parents=True, exist_ok=True)
    entry, path = folder / f"{os.getpid()}.spare", folder / f"{os.getpid()}.sock"
    info = {"pid": os.getpid(), "key": own_key, "kind": kind, "socket": str(path), "state": "starting"}
    _write(entry, info)
    try:
        # torch asks NVML, not the CUDA driver, whether a GPU is there: the driver must stay unloaded here
        os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
        for name in AHEAD[kind]:
            with contextlib.suppress(ImportError):  # an optional library (torchvision) that this machine lacks
                importlib.import_module(name)
        os.environ.pop("PYTORCH_NVML_BASED_CUDA_CHECK")
        if before.get("PYTORCH_NVML_BASED_CUDA_CHECK") is not None:
            os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = before["PYTORCH_NVML_BASED_CUDA_CHECK"]
        gc_freeze.freeze_imports()  # the measuring process forked from here starts with them frozen
        loaded = time.time()
        unsafe = cuda_untouched(kind)
        if unsafe:
            print(f"vramlab spare {os.getpid()} ({kind}): not serving: {unsafe}", file=sys.stderr)
            return 0
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path.unlink(missing_ok=True)
        listener.bind(str(path))
        listener.listen(1)
        listener.settimeout(1.0)
        _write(entry, {**info, "state": "ready", "ready_at": loaded})
        conn = _wait_for_client(listener, launcher, idle)
        if conn is None:
            return 0
        data, fds, _, _ = socket.recv_fds(conn, MESSAGE_BYTES, 3)
        message = receive(conn, data) if data else {}
        # what the imports set in the environment (torch's inductor names its cache folder), as a fresh process
        # importing them would have it
        set_by_imports = {k: v for k, v in os.environ.items() if before.get(k) != v and k not in PER_CELL_ENV}
        record = {"start": "warm", "kind": kind, "imports_ahead_seconds": round(loaded - started, 3),
                  "imported_ahead": list(AHEAD[kind])}
        return _take(listener, conn, message, fds, own_key, set_by_imports, record, loaded)
    finally:
        entry.unlink(missing_ok=True)
        path.unlink(missing_ok=True)


def _write(entry: Path, info: dict[str, Any]) -> None:
    tmp = entry.with_suffix(".partial")
    tmp.write_text(json.dumps(info))
    tmp.rename(entry)


def _wait_for_client(listener: socket.socket, launcher: int, idle: float) -> socket.socket | None:
    launcher_ended: float | None = None
    while True:
        try:
            conn, _ = listener.accept()
            conn.settimeout(None)
            return conn
        except TimeoutError:
            pass
        if launcher_ended is None and not running(launcher):
            launcher_ended = time.monotonic()
        if launcher_ended is not None and time.monotonic() - launcher_ended > idle:
            return None


def _take(listener: socket.socket, conn: socket.socket, message: dict[str, Any], fds: list[int], own_key: str,
          set_by_imports: dict[str, str], record: dict[str, Any], loaded: float) -> int:
    refusal = cuda_untouched(record["kind"])
    if len(fds) != 3 or not isinstance(message.get("env"), dict) or not isinstance(message.get("argv"), list):
        refusal = "the request is incomplete"
    elif message.get("key") != own_key or key(message["env"], message.get("cwd")) != own_key:
        refusal = "its interpreter, checkout, folder or environment differs from this spare's"
    if refusal:
        _send(conn, {"refused": refusal})
        for fd in fds:
            os.close(fd)
        return 0
    _send(conn, {"accepted": True})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # from here on a supervisor like any other
    record["waited_seconds"] = round(time.time() - loaded, 3)
    adopt_streams(fds)  # the client's standard streams become this process's, and the measuring process's
    os.chdir(message["cwd"])
    os.environ.clear()
    os.environ.update({**message["env"], **set_by_imports})
    warm_start.SERVING = Serving(listener, conn, record)
    code = 1
    try:
        code = cell_command.main(message["argv"])
    finally:
        _send(conn, {"exit": code})
    return code


def _send(conn: socket.socket, reply: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(reply).encode() + b"\n")


def adopt_streams(fds: list[int]) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
