"""The console is for people; the log file is for everything. A command given a log file sends its own
stdout and stderr there at the descriptor level, so that what libraries print (the trainer's bars and loss
dictionaries, lm-eval's request bars, tokenizer and profiler messages) and what child processes print land
in the file, and keeps a stream to the real console for the few lines meant for the person watching.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TextIO

from harness.errors import UsageError
from harness.log_file import log_file_problem

FORMAT = "[vramlab %(asctime)s] %(message)s"
CONSOLE: TextIO | None = None  # the console, once send_to_log has taken stdout and stderr


def send_to_log(path: Path) -> TextIO:
    """Redirect this process's stdout and stderr (and so its children's) to `path`; return the console.

    The vramlab logger keeps writing every message to the file and writes warnings to the console too. A path
    that is no log file (harness/log_file.py) is refused before anything is opened."""
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
