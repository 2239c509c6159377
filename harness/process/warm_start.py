"""Warm start: the next cell's libraries are imported while the current cell runs. Why it is so: docs/measurement.md."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO

from harness.core.cache import cache_root
from harness.core.environment import cuda_present
from harness.process.procfs import running

log = logging.getLogger("vramlab")

# imported ahead by every spare: none of them starts CUDA, none is patched by Unsloth
PRELOAD = ("torch", "torch._dynamo", "torch._inductor.compile_fx", "torch.utils.checkpoint", "sympy", "scipy",
           "scipy.special", "networkx", "numpy", "pandas", "pyarrow", "datasets", "safetensors", "tokenizers",
           "huggingface_hub", "psutil", "jinja2", "torchvision", "harness.process.cell_command",
           "harness.process.supervisor", "harness.run.worker", "harness.run.measure", "harness.run.train",
           "harness.run.trackers", "harness.spec.matrix", "harness.data.training", "harness.core.budget")
# Unsloth patches these as it is imported, so only a spare for a cell on the Hugging Face path imports any of them
PATCHED_BY_UNSLOTH = ("transformers", "trl", "peft", "accelerate")
# (peft, trl and transformers.trainer start CUDA as they are imported: measured on the H200 machine)
AHEAD = {"any": PRELOAD,
         "huggingface": (*PRELOAD, "transformers", "transformers.models.auto.modeling_auto", "accelerate")}
# what a spare of each kind must not hold when it forks: libraries that load native code looking at the device
# as they are imported, Unsloth itself, and (for a spare any cell may take) what Unsloth patches
NEVER_AHEAD = ("unsloth", "unsloth_zoo", "bitsandbytes", "liger_kernel")
NOT_AHEAD = {"any": NEVER_AHEAD + PATCHED_BY_UNSLOTH, "huggingface": NEVER_AHEAD}
# which spares a cell may take, best first, by its model path (harness.stack.backends.name_for)
TAKES = {"unsloth": ("any",), "huggingface": ("huggingface", "any")}
# differ from one cell to the next and are read only after the fork; the shell's own bookkeeping
# (CUDA_VISIBLE_DEVICES is not one of them: a spare serves cells on the GPU its launcher ran on, so that
# streams of cells on two GPUs keep their own spares; sharing, one stream took and stopped the other's)
PER_CELL_ENV = ("VRAMLAB_STATUS_FILE", "VRAMLAB_TIME_LIMIT", "VRAMLAB_MEMORY_HISTORY", "VRAMLAB_WARM_START", "_",
                "OLDPWD", "PWD", "SHLVL")
MESSAGE_BYTES = 1 << 20
@dataclass
class Serving:
    """Set in a spare that has taken a cell: its supervisor forks the measuring process."""

    listener: socket.socket
    client: socket.socket
    record: dict[str, Any]

    def client_gone(self) -> bool:
        try:
            return self.client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True


SERVING: Serving | None = None


def pool() -> Path:
    return cache_root() / "spares"


def key(env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    """What a spare and its client must share: interpreter, checkout, working folder, environment."""
    env = dict(os.environ if env is None else env)
    stable = sorted((k, v) for k, v in env.items() if k not in PER_CELL_ENV)
    here = str(Path(__file__).resolve().parents[1])  # the harness package this process runs
    text = json.dumps([sys.executable, sys.version, here, cwd or os.getcwd(), stable])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cuda_untouched(kind: str | None = None) -> str | None:
    """None when forking is safe for CUDA: neither torch nor anything else has initialized the CUDA driver (a
    process forked after that cannot use CUDA), and nothing this kind of spare must not hold is imported; else
    why not. `kind` None: the kind of the spare this process serves as."""
    kind = kind or (SERVING.record["kind"] if SERVING is not None else "any")
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "torch has initialized CUDA"
    driver = _driver_state()
    if driver:
        return driver
    ahead = [m for m in NOT_AHEAD[kind] if m in sys.modules]
    if ahead:
        return f"{', '.join(ahead)} already imported"
    return None


CUDA_ERROR_NOT_INITIALIZED = 3


def _driver_state() -> str | None:
    """None when the CUDA driver library is not loaded, or loaded (a CUDA build of torch loads it as it is
    imported) but not initialized. Asking it how many devices it has does not initialize it: before cuInit
    the answer is CUDA_ERROR_NOT_INITIALIZED."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "cannot read /proc/self/maps to check for the CUDA driver"
    names = {line.split()[-1] for line in maps.splitlines() if "libcuda.so" in line}
    if not names:
        return None
    count = ctypes.c_int()
    try:
        code = ctypes.CDLL(sorted(names)[0]).cuDeviceGetCount(ctypes.byref(count))
    except (OSError, AttributeError) as err:
        return f"cannot ask the CUDA driver whether it is initialized: {err}"
    if code == CUDA_ERROR_NOT_INITIALIZED:
        return None
    return "the CUDA driver is initialized" if code == 0 else f"the CUDA driver answers error {code}"


def applies_to(settings: dict[str, Any]) -> bool:
    """Only cells on a GPU start warm: a CPU cell's device memory is its process's resident set, which imports
    made ahead would change; and a GPU cell on a machine without one is only recorded as skipped, which needs
    no spare. VRAMLAB_WARM_START_CPU=1 exists for the tests, which have no GPU to start warm."""
    if os.environ.get("VRAMLAB_WARM_START_CPU") == "1":
        return True
    return settings.get("device") != "cpu" and cuda_present()


def kinds_for(backends: set[str]) -> list[str]:
    """The spares worth keeping for a matrix whose cells take these model paths."""
    return sorted({TAKES[b][0] for b in backends})


# --- the client: `vramlab run-cell --warm-start` ------------------------------------------------------------


def _spares(folder: Path, wanted: str) -> list[tuple[Path, dict[str, Any]]]:
    """The spares of this key that are alive (starting or ready); files of spares that died are removed."""
    spares = []
    for entry in sorted(folder.glob("*.spare")) if folder.is_dir() else []:
        try:
            info = json.loads(entry.read_text())
        except (OSError, ValueError):
            continue
        if not running(int(info.get("pid", 0))):
            entry.unlink(missing_ok=True)
            Path(info.get("socket", entry.with_suffix(".sock"))).unlink(missing_ok=True)
        elif info.get("key") == wanted:
            spares.append((entry, info))
    return spares


def waiting_spares() -> list[dict[str, Any]]:
    """The spares this process's environment could hand a cell to, starting or ready (not those taken)."""
    return [info for _, info in _spares(pool(), key())]


def stop_spares() -> None:
    """End the waiting spares of this process's environment (a spare not yet serving leaves no files)."""
    for info in waiting_spares():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(info["pid"]), signal.SIGTERM)


SPARES_LOG_BYTES = 8 * 2**20


def open_spares_log(folder: Path) -> BinaryIO:
    """The log the spares write to, for appending; past SPARES_LOG_BYTES it becomes spares.log.1 (replacing
    the one before), since every cell of every matrix started on this machine adds to it. Spares already
    running keep writing to the file they were given, under its new name."""
    path = folder / "spares.log"
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > SPARES_LOG_BYTES:
            path.replace(path.with_name("spares.log.1"))
    return open(path, "ab")


def launch_spares(kinds: list[str]) -> list[int]:
    """Start a spare of each kind that has none alive; they outlive this process on purpose. Their pids."""
    folder = pool()
    folder.mkdir(parents=True, exist_ok=True)
    have = {info.get("kind") for _, info in _spares(folder, key())}
    env = {k: v for k, v in os.environ.items() if k not in PER_CELL_ENV}
    started = []
    for kind in kinds:
        if kind in have:
            continue
        with open_spares_log(folder) as out:
            out.write(f"[{time.strftime('%H:%M:%S')}] run-cell {os.getpid()} starts a spare ({kind})\n".encode())
            out.flush()
            spare = subprocess.Popen([sys.executable, "-m", "harness.process", "--kind", kind, "--launcher",
                                      str(os.getpid())], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     start_new_session=True)
        log.info("warm start: spare %d (%s) started for the next cell", spare.pid, kind)
        started.append(spare.pid)
    return started


def wait_until_ready(pids: list[int], seconds: float) -> None:
    """Until each of these spares is ready, or has ended (one that refuses to serve ends), or `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        states = {info["pid"]: info.get("state") for info in waiting_spares()}
        if all(states.get(pid) == "ready" or not running(pid) for pid in pids):
            return
        time.sleep(0.2)


def run_in_spare(argv: list[str], backend: str, kinds: list[str]) -> int | None:
    """Hand `vramlab <argv>` (a run-cell command for a cell on the `backend` path) to a waiting spare that may
    take it, start the spares for the next cells, and wait for the exit status; None when no spare took it
    (the caller then runs the cell itself)."""
    folder = pool()
    takes = TAKES[backend]
    ready = [(entry, info) for entry, info in _spares(folder, key())
             if info.get("state") == "ready" and info.get("kind") in takes]
    for entry, info in sorted(ready, key=lambda spare: takes.index(spare[1]["kind"])):
        claimed = entry.with_suffix(f".claimed-{os.getpid()}")
        try:
            entry.rename(claimed)  # atomic: of two clients, one wins
        except OSError:
            continue
        try:
            return _run_claimed(int(info["pid"]), Path(info["socket"]), argv, kinds)
        except _Refused as err:
            log.info("warm start: spare %s refused the cell (%s); starting a fresh process", info["pid"], err)
        finally:
            claimed.unlink(missing_ok=True)
    return None


class _Refused(Exception):
    pass


def _run_claimed(pid: int, path: Path, argv: list[str], kinds: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError as err:
        raise _Refused(f"cannot connect: {err}") from err
    data = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "key": key()}).encode() + b"\n"
    sent = socket.send_fds(conn, [data], [0, 1, 2])
    conn.sendall(data[sent:])
    reply = receive(conn)
    if "refused" in reply or "accepted" not in reply:
        raise _Refused(reply.get("refused", "it ended without answering"))
    launch_spares(kinds)  # the next cells', importing while this one runs
    interrupted: list[int] = []

    def forward(signum: int, frame: FrameType | None) -> None:
        interrupted.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)  # the spare supervises: it passes the signal on to the measuring process

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)
                if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        reply = receive(conn)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        conn.close()
    if interrupted:
        signal.signal(interrupted[0], signal.SIG_DFL)
        os.kill(os.getpid(), interrupted[0])
        return 128 + interrupted[0]
    if "exit" not in reply:
        print(f"vramlab: the spare process {pid} that ran this cell ended without an exit status", file=sys.stderr)
        return 1
    return int(reply["exit"])


def receive(conn: socket.socket, data: bytes = b"") -> dict[str, Any]:
    """One message: a JSON object ended by a newline, of which `data` is what was already read; {} when the
    other side closed first or sent something else."""
    while not data.endswith(b"\n"):
        try:
            chunk = conn.recv(MESSAGE_BYTES)
        except InterruptedError:
            continue
        except OSError:
            return {}
        if not chunk:
            return {}
        data += chunk
    try:
        message = json.loads(data)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}
