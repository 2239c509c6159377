"""The console is for people; the log file is for everything. A command given a log file sends its own
stdout and stderr there at the descriptor level, so that what libraries print (the trainer's bars and loss
dictionaries, lm-eval's request bars, tokenizer and profiler messages) and what child processes print land
in the file, and keeps a stream to the real console for the few lines meant for the person watching.
"""

from __future__ import annotations

import _thread
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from harness.core.environment_variables import check_all, notes
from harness.core.errors import UsageError, one_line
from harness.core.log_file import log_file_problem
from harness.core.made_folders import forget_made, remove_empty_made
from harness.core.path_problems import explain_os_error

FORMAT = "[vramlab %(asctime)s] %(message)s"
CONSOLE: TextIO | None = None  # the console, once send_to_log has taken stdout and stderr


def start_logging() -> None:
    """The vramlab logger's lines on stderr, as every command and process of the harness writes them. Only the
    vramlab logger says INFO: the root stays at WARNING, so that a library's INFO lines (torch's exit hook printing
    FakeTensor lines, a tokenizer's notes) never reach the person's console."""
    logging.basicConfig(level=logging.WARNING, format=FORMAT, datefmt="%H:%M:%S")
    logging.getLogger("vramlab").setLevel(logging.INFO)


def send_to_log(path: Path) -> TextIO:
    """Redirect this process's stdout and stderr (and so its children's) to `path`; return the console.

    The vramlab logger keeps writing every message to the file and writes warnings to the console too. A path
    that is no log file (harness/core/log_file.py) is refused before anything is opened."""
    global CONSOLE
    problem = log_file_problem(path)
    if problem:
        raise UsageError(problem)
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    console = os.fdopen(os.dup(2), "w", buffering=1)
    log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    loud = logging.StreamHandler(console)
    loud.setLevel(logging.WARNING)
    loud.setFormatter(logging.Formatter(FORMAT, datefmt="%H:%M:%S"))
    logging.getLogger("vramlab").addHandler(loud)
    CONSOLE = console
    return console


def console_stream() -> TextIO:
    """Where a line for the person goes: the real console, also once stdout and stderr go to a log file."""
    return CONSOLE or sys.stderr


def refuse(message: str, code: int = 2) -> int:
    """The error on the console, also when stdout and stderr were sent to a log file (and then in the log too)."""
    if console_stream() is None:  # stderr closed too (2>&-): nothing can be said, the exit status tells
        return code
    print(f"vramlab: {message}", file=console_stream())
    if console_stream() is not sys.stderr:
        print(f"vramlab: {message}", file=sys.stderr)
    return code


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, a scheduler, a job's end), raised where the command is, so that it ends as Ctrl-C does: the
    file being written removed (harness/core/atomic_files.py), and one line that says so."""


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated


def _deliver_later(signum: signal.Signals) -> None:
    time.sleep(0.01)  # once the callback has returned: delivered inside it, the signal would be lost again
    _thread.interrupt_main(signum)


def _interrupt_again(unraisable: Any) -> None:
    """A Ctrl-C that lands inside a callback that cannot raise (a weak reference's, a __del__) is printed by Python
    as "Exception ignored" and lost, and the command runs on: it is delivered to the main thread again instead."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
        signum = signal.SIGTERM if issubclass(unraisable.exc_type, Terminated) else signal.SIGINT
        threading.Thread(target=_deliver_later, args=(signum,), daemon=True).start()
        return
    sys.__unraisablehook__(unraisable)


def run_command(command: Callable[[], int], end_on_sigterm: bool = False) -> int:
    """A command's exit status: its own, or one line for the person and 2 for a UsageError or a path that cannot be
    used, 130 for Ctrl-C (143 for SIGTERM where `end_on_sigterm`). Every VRAMLAB_* variable is checked first
    (harness/core/environment_variables.py). A command that fails leaves no folder it made empty
    (harness/core/made_folders.py)."""
    forget_made()
    code = 1
    # a handler can be set in the main thread only: a command run from another (a notebook's worker) keeps the default
    previous = signal.signal(signal.SIGTERM, _terminated) \
        if end_on_sigterm and threading.current_thread() is threading.main_thread() else None
    stdout, sys.stdout = sys.stdout, _NamedOutput(sys.stdout)
    hook, sys.unraisablehook = sys.unraisablehook, _interrupt_again
    try:
        _check_started(stdout)
        check_all()
        for note in notes():
            print(f"vramlab: {note}", file=sys.stderr)
        code = command()
        sys.stdout.flush()  # here, where a failure is told as any other, not in Python's exit
    except UsageError as err:
        code = refuse(one_line(err))
    except OSError as err:  # a path given to a command that cannot be read or written (a file for a folder, ...)
        code = _os_error(err)
    except KeyboardInterrupt as err:
        # every file is written whole or not at all (harness/core/atomic_files.py): nothing is left half-written
        code = refuse("terminated (SIGTERM); nothing was left half-written", code=128 + signal.SIGTERM) \
            if isinstance(err, Terminated) else refuse("interrupted; nothing was left half-written", code=130)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        sys.stdout = stdout
        sys.unraisablehook = hook
        if code != 0:
            remove_empty_made()
    return code


def _check_started(stdout: TextIO | None) -> None:
    """What a command needs of the process it was started in before it does anything: an open standard output (`>&-`
    leaves none, and the next file opened would take its place) and a working folder that still exists."""
    if stdout is None:
        raise UsageError("standard output is closed (as `>&-` leaves it); give the command one, e.g. >/dev/null "
                         "to discard what it prints")
    try:
        os.getcwd()
    except FileNotFoundError:
        raise UsageError(f"the working folder {_lost_folder()}no longer exists (deleted since the command started "
                         "there); cd to a folder that exists and run it again") from None


def _lost_folder() -> str:
    """The deleted working folder's path and a space, as Linux still names it or else the shell's $PWD, or ''."""
    try:
        return os.readlink("/proc/self/cwd").removesuffix(" (deleted)") + " "
    except OSError:
        return f"{os.environ['PWD']} " if os.environ.get("PWD") else ""


def _output_name() -> str:
    """Standard output in words, with the file it goes to (a log file, /dev/full) where Linux tells it."""
    try:
        return f"standard output ({os.readlink('/proc/self/fd/1')})"
    except OSError:
        return "standard output"


class _NamedOutput:
    """sys.stdout whose write errors name it: the system names no file for a write that finds the disk full."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as err:
            err.filename = err.filename or _output_name()
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as err:
            err.filename = err.filename or _output_name()
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _os_error(err: OSError) -> int:
    """An OSError's one line; a reader of standard output that went away (`vramlab cells | head -1`) is no error
    to tell, and Python's own report of it at exit is kept quiet."""
    if isinstance(err, BrokenPipeError) and str(err.filename).startswith("standard output"):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        return 128 + signal.SIGPIPE  # as a shell reports a process that SIGPIPE ended
    return refuse(one_line(explain_os_error(err)))
