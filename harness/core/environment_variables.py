"""The VRAMLAB_* environment variables a person sets, each read and checked here: a value that cannot be used is
one line naming the variable and the fix (never a traceback, never silently the default, never a cache or a
matrix folder relative to wherever a command happens to run). `vramlab` checks them all before any command, and
refuses a VRAMLAB_* name it does not know: a misspelt one (EMULATE_CRAD for EMULATE_CARD) would leave the setting it
meant at its default without a word."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

from harness.core.errors import UsageError
from harness.core.path_problems import checkout_place, published_place
from harness.core.suggest import did_you_mean

MAX_CELLS = "VRAMLAB_MAX_CELLS"
CACHE = "VRAMLAB_CACHE"
ABLATIONS = "VRAMLAB_ABLATIONS"
SPARE_IDLE = "VRAMLAB_SPARE_IDLE"
DEVICE_SLOTS = "VRAMLAB_DEVICE_SLOTS"
LEASES = "VRAMLAB_LEASES"
DEVICE_LEASE = "VRAMLAB_DEVICE_LEASE"
# switches the docs document as NAME=0 (off); 1, the default, is on
SWITCHES = ("VRAMLAB_EMULATE_CARD", "VRAMLAB_GC_FREEZE", "VRAMLAB_BYTECODE_CACHE")
DEVICES = "VRAMLAB_DEVICES"
TIME_LIMIT = "VRAMLAB_TIME_LIMIT"
STATUS_FILE = "VRAMLAB_STATUS_FILE"
MEMORY_HISTORY = "VRAMLAB_MEMORY_HISTORY"
# read where they are used: a cell's time limit (harness/process/supervisor.py), the commit a result records where
# the checkout is no git repository (harness/core/environment.py)
READ_ELSEWHERE = (TIME_LIMIT, "VRAMLAB_GIT_COMMIT", "VRAMLAB_GIT_DIRTY")
# set by vramlab for its own processes (harness/run/worker_status.py, harness/run/memory_history.py), or by the tests
# (a worker's fault, warm starts on the CPU) and benchmarks/cell_time_run.py (its stream's number); nobody sets them
# by hand, but a process started with them set is vramlab's own
INTERNAL = (STATUS_FILE, "VRAMLAB_WARM_START", DEVICE_LEASE, MEMORY_HISTORY,
            "VRAMLAB_TEST_FAULT", "VRAMLAB_WARM_START_CPU", "VRAMLAB_CELL_TIME_STREAM")
# the ones a person sets (docs/): named where a misspelt one is near none of them
DOCUMENTED = (MAX_CELLS, CACHE, ABLATIONS, SPARE_IDLE, DEVICE_SLOTS, LEASES, *SWITCHES, DEVICES, *READ_ELSEWHERE)
KNOWN = frozenset(DOCUMENTED + INTERNAL)
PREFIX = "VRAMLAB_"
# what CUDA_VISIBLE_DEVICES takes: an index, or a GPU's or MIG instance's UUID
DEVICE_ENTRY = re.compile(r"^(\d+|(GPU|MIG)-[A-Za-z0-9/-]+)$")
# huggingface_hub's, transformers' and datasets' switches off the hub, which vramlab reads too (harness/stack/models/
# hub.py): each library takes 1, ON, YES or TRUE (any case) as on and every other word as off
HUB_SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
HUB_TRUE = ("1", "ON", "YES", "TRUE")
HUB_FALSE = ("", "0", "OFF", "NO", "FALSE")
MAX_CELLS_DEFAULT = 5000  # a typo in an axis must not eat the memory
# cells sharing one GPU at once (concurrent_cells, --device-slots): each holds a CUDA context, a model and its
# activations, so a few dozen fill the largest card; a number beyond that is a typo, never a plan
MAX_DEVICE_SLOTS = 64
SPARE_IDLE_DEFAULT = 120.0
MIN_TIME_LIMIT = 1.0  # below it no cell gets past its start: the limit would only write timeouts
MAX_TIME_LIMIT = 366 * 86400.0  # a year: past it a limit limits nothing, and the timers' arithmetic overflows


def positive_int(name: str, default: int, most: int | None = None) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or (most is not None and value > most):
        span = f"from 1 to {most:,}" if most is not None else "of 1 or more"
        raise UsageError(f"{name}={text[:40]!r}: give a whole number {span} (unset it for {default:,})")
    return value


def device_slots_problem(value: object) -> str | None:
    """Why `value` cannot be the number of cells that share one GPU, or None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"{value!r} is not a positive integer"
    if value > MAX_DEVICE_SLOTS:
        return (f"{value:,} cells on one GPU at once is more than the limit of {MAX_DEVICE_SLOTS} (each holds its own "
                "CUDA context, model and activations)")
    return None


def positive_seconds(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise UsageError(f"{name}={text[:40]!r}: give a positive number of seconds (unset it for {default:g})")
    return value


def folder(name: str, default: Path | None, must_exist: bool) -> Path | None:
    """An absolute folder (or `default` where unset): empty, relative, or a file in its place is refused."""
    text = os.environ.get(name)
    if text is None:
        return default
    path = Path(text).expanduser()
    unset = f"unset it for {default}" if default else "unset it"
    if not text.strip():
        raise UsageError(f"{name} is set but empty; give an absolute folder ({unset})")
    if not path.is_absolute():
        raise UsageError(f"{name}={text[:80]!r} is relative, so it would name another folder in each place a "
                         f"command runs; give an absolute folder ({unset})")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{name}={text[:80]!r} is a file; give a folder ({unset})")
    if must_exist and not path.is_dir():
        raise UsageError(f"{name}={text[:80]!r} does not exist; give an existing folder ({unset})")
    return path


def switch(name: str) -> None:
    """A switch is 0 or 1: a word read as either would silently do the other thing."""
    text = os.environ.get(name)
    if text is not None and text not in ("0", "1"):  # exactly: ' 1' would read as 1 here and as a word elsewhere
        raise UsageError(f"{name}={text[:40]!r}: write {name}=0 to turn it off, or {name}=1 (the default, as when "
                         "unset) to keep it on")


def devices() -> None:
    """VRAMLAB_DEVICES: comma-separated GPU indices or UUIDs, as CUDA_VISIBLE_DEVICES takes them (empty: no leases).
    A GPU named twice would be two lease slots on one device: two cells on it at once, their speed recorded as
    measured."""
    text = os.environ.get(DEVICES)
    entries = [e.strip() for e in (text or "").split(",") if e.strip()]
    bad = next((e for e in entries if not DEVICE_ENTRY.match(e)), None)
    if bad is not None:
        raise UsageError(f"{DEVICES}={text[:80]!r}: {bad[:40]!r} is no GPU; give indices or UUIDs separated by "
                         "commas (e.g. 0,1 or GPU-...), or an empty value to turn device leasing off")
    twice = next((e for i, e in enumerate(entries) if _index(e) in map(_index, entries[:i])), None)
    if twice is not None:
        raise UsageError(f"{DEVICES}={text[:80]!r}: GPU {twice[:40]!r} is listed twice, which would run two cells on "
                         "it at once as if each had it alone; name each GPU once (cells that may share one say so "
                         "with concurrent_cells or --device-slots)")


def _index(entry: str) -> str:
    """An index as a number ('00' and '0' are one GPU), a UUID as written."""
    return str(int(entry)) if entry.isdigit() else entry


def hub_switches() -> None:
    """A hub switch that is neither on nor off in the libraries' words ('maybe', ' 1') is off for them without a
    word, so the hub would be asked where the person may have meant it not to be."""
    for name in HUB_SWITCHES:
        text = os.environ.get(name)
        if text is not None and text.upper() not in HUB_TRUE + HUB_FALSE:
            raise UsageError(f"{name}={text[:40]!r}: huggingface_hub reads only {', '.join(HUB_TRUE)} as on, so this "
                             f"would be off (the hub asked); write {name}=1 to stay off the hub, or {name}=0")


def device_lease() -> None:
    """The lease record a cell's supervisor hands its process (harness/process/device_lease.py), a JSON object: any
    other value would leave the result without its lease, as if none had been taken."""
    text = os.environ.get(DEVICE_LEASE)
    if not text:
        return
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise UsageError(f"{DEVICE_LEASE}={text[:40]!r} is not the lease record (a JSON object) that vramlab's "
                         "supervisor hands a cell's process; vramlab sets it itself: unset it")


def unknown_names() -> None:
    """A VRAMLAB_* variable vramlab does not know is refused, with the known name nearest to it."""
    unknown = sorted(name for name in os.environ if name.startswith(PREFIX) and name not in KNOWN)
    if unknown:
        name = unknown[0]
        # compared without the prefix, which every name shares and would make any one look near
        near = did_you_mean(name.removeprefix(PREFIX), [k.removeprefix(PREFIX) for k in KNOWN], PREFIX) or \
            f"; vramlab's are {', '.join(DOCUMENTED)}"
        raise UsageError(f"{name[:80]} is set, but vramlab has no such variable{near} (unset it: a misspelt name "
                         "would leave the setting it meant at its default)")


def max_cells() -> int:
    """The most cells a matrix may expand to."""
    return positive_int(MAX_CELLS, MAX_CELLS_DEFAULT)


def spare_idle_seconds() -> float:
    """How long a spare process of harness/process/warm_start.py waits unclaimed once its cell has ended."""
    return positive_seconds(SPARE_IDLE, SPARE_IDLE_DEFAULT)


def device_slots() -> int:
    """Cells that may share one GPU at once where no --device-slots says (harness/process/device_lease.py)."""
    return positive_int(DEVICE_SLOTS, 1, MAX_DEVICE_SLOTS)


def leases_folder() -> Path | None:
    """The folder of the device leases, where one is named (harness/process/device_lease.py has the default). It is
    made where it is missing, but only inside an existing folder: a mistyped parent would become a tree of folders
    holding leases that no other run sees."""
    path = folder(LEASES, None, must_exist=False)
    if path is not None:
        outside_published(LEASES, path, "give a leases folder outside it (unset it for the default)")
    if path is not None and not path.exists() and not path.parent.is_dir():
        raise UsageError(f"{LEASES}={str(path)[:80]!r}: its folder {str(path.parent)[:80]} does not exist; give a "
                         "folder that exists or one inside an existing folder (unset it for the default)")
    return path


def notes() -> list[str]:
    """What a setting that is allowed but easily set by mistake does, told on every command that runs with it."""
    said = []
    leases = leases_folder()
    if leases is not None and not leases.exists():
        said.append(f"{LEASES}={str(leases)[:80]} does not exist yet: it is made at the first device lease, and runs "
                    "that name another folder do not see these leases")
    if os.environ.get(DEVICES) is not None and not os.environ[DEVICES].strip():
        said.append(f"{DEVICES} is set but empty, which turns device leasing off: cells on a GPU do not wait for one "
                    "another (unset it to lease every GPU of this machine)")
    return said


def cache_folder() -> Path:
    path = folder(CACHE, Path.home() / ".cache" / "vramlab", must_exist=False) or Path()
    outside_published(CACHE, path, "give a cache folder outside it")
    return path


def outside_published(name: str, path: Path, fix: str, where: Callable[[Path], str | None] = checkout_place) -> None:
    """Refuses a folder of vramlab's own among a checkout's files (`where` says which), saying `fix`: models,
    bytecode or leases among the published files would be taken for a matrix's results (`vramlab check` fails,
    `matrices` lists them), and anywhere git does not ignore them, git shows them as the checkout's own."""
    place = where(path)
    if place is not None:
        raise UsageError(f"{name}={str(path)[:200]} lies in {place}; {fix}")


def ablations_folder() -> Path | None:
    return folder(ABLATIONS, None, must_exist=True)


def time_limit_problem(source: str, given: float) -> str | None:
    """Why `given` seconds (from `source`: --time-limit or VRAMLAB_TIME_LIMIT) cannot limit a cell, or None."""
    if not math.isfinite(given) or given < MIN_TIME_LIMIT:
        return (f"{source}: the time limit must be a number of seconds of at least {MIN_TIME_LIMIT:g} (a cell's "
                f"process takes longer than that to start), got {given!r}")
    if given > MAX_TIME_LIMIT:
        return (f"{source}: {given:g} s is more than a year ({MAX_TIME_LIMIT:,.0f} s), the longest a time limit may "
                "be; give fewer seconds")
    return None


def time_limit() -> float | None:
    """VRAMLAB_TIME_LIMIT, a cell's time limit in seconds where no --time-limit says (harness/process/supervisor.py);
    checked before every command, also those that run no cell, so that a typo is found before the run that needs it."""
    text = os.environ.get(TIME_LIMIT)
    if not text:
        return None
    try:
        given = float(text)
    except ValueError:
        raise UsageError(f"{TIME_LIMIT}: expected seconds, got {text[:40]!r}; give a number of seconds from "
                         f"{MIN_TIME_LIMIT:g} (or unset it: each cell's limit is then scaled by its work)") from None
    problem = time_limit_problem(TIME_LIMIT, given)
    if problem:
        raise UsageError(problem)
    return given


def internal_paths() -> None:
    """The files vramlab's supervisor names for a cell's process (its status file; run-cell --memory-history's
    snapshot): absolute paths of files in existing folders. A person who sets one by hand gets its use told, since
    in any other process nothing reads them."""
    for name, what in ((STATUS_FILE, "the status file a cell's supervisor hands its process"),
                       (MEMORY_HISTORY, "the memory snapshot run-cell --memory-history FILE asks for")):
        text = os.environ.get(name)
        if not text:
            continue
        path = Path(text)
        if not path.is_absolute() or path.is_dir() or not path.parent.is_dir():
            flaw = ("is relative" if not path.is_absolute() else "is a folder" if path.is_dir()
                    else "lies in no existing folder")
            raise UsageError(f"{name}={text[:80]!r} {flaw}; it is {what}, which vramlab sets itself: unset it")
        if name == STATUS_FILE:  # the supervisor's own is a temporary file; one among published files is a mistake
            outside_published(name, path, f"it is {what}, which vramlab sets itself: unset it", published_place)


def check_all() -> None:
    """Every variable above, so that a bad one (or a name vramlab does not know) stops any command before it
    starts."""
    unknown_names()
    max_cells()
    spare_idle_seconds()
    device_slots()
    leases_folder()
    cache_folder()
    ablations_folder()
    for name in SWITCHES:
        switch(name)
    devices()
    device_lease()
    hub_switches()
    git_commit()
    git_dirty()
    time_limit()
    internal_paths()


def git_commit() -> str | None:
    """The commit a result records where the tree has no .git (a cluster job's copy): a commit id, 7 to 40 hex
    digits, since it becomes the result's provenance."""
    text = os.environ.get("VRAMLAB_GIT_COMMIT")
    if text and not re.fullmatch(r"[0-9a-f]{7,40}", text.strip().lower()):
        raise UsageError(f"VRAMLAB_GIT_COMMIT={text[:80]!r} is no commit id (7 to 40 hex digits, as `git rev-parse "
                         "HEAD` prints); it would be recorded as the results' commit")
    return text.strip().lower() if text else None


def git_dirty() -> bool | None:
    """Whether the copy that VRAMLAB_GIT_COMMIT names differs from that commit (results and reports aside), as the
    launcher, which has the repository, found it: 0 or 1; None (unknown) where it does not say."""
    text = os.environ.get("VRAMLAB_GIT_DIRTY")
    if text is None:
        return None
    if text.strip() not in ("0", "1"):
        raise UsageError(f"VRAMLAB_GIT_DIRTY={text[:80]!r} is neither 0 (the copy is the commit) nor 1 (it differs)")
    return text.strip() == "1"
