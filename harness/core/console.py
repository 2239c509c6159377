"""The console is for people; the log file is for everything. A command given a log file sends its own
stdout and stderr there at the descriptor level, so that what libraries print (the trainer's bars and loss
dictionaries, lm-eval's request bars, tokenizer and profiler messages) and what child processes print land
in the file, and keeps a stream to the real console for the few lines meant for the person watching.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from harness.core.errors import UsageError, one_line

FORMAT = "[vramlab %(asctime)s] %(message)s"


def start_logging() -> None:
    """The vramlab logger's lines on stderr, as every command and process of the harness writes them."""
    logging.basicConfig(level=logging.INFO, format=FORMAT, datefmt="%H:%M:%S")


def send_to_log(path: Path) -> TextIO:
    """Redirect this process's stdout and stderr (and so its children's) to `path`; return the console.

    The vramlab logger keeps writing every message to the file and writes warnings to the console too."""
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
    return console


def run_command(command: Callable[[], int]) -> int:
    """A command's exit status: its own, or 2 with one line on stderr for a UsageError or an unusable path."""
    try:
        return command()
    except UsageError as err:
        print(f"vramlab: {one_line(err)}", file=sys.stderr)
        return 2
    except OSError as err:  # a path given to a command that cannot be read or written (a file for a folder, ...)
        where = f"{err.filename}: " if err.filename else ""
        print(f"vramlab: {one_line(where + (err.strerror or str(err)))}", file=sys.stderr)
        return 2
