"""The rule for a `--log FILE` (run-cell, evaluate, and so the Snakefile's jobs and ceiling probes): its name ends
in .log, so that a result file, a README or any other file given by mistake is refused before anything is
written, never truncated into a log."""

from __future__ import annotations

from pathlib import Path

from harness.core.path_problems import file_in_the_way

LOG_SUFFIX = ".log"


def log_file_problem(path: Path) -> str | None:
    """Why `path` cannot be a log file, or None."""
    path = Path(path)
    if path.is_dir():
        return f"--log {path} is a folder; give the path of a file ending in {LOG_SUFFIX}"
    if path.suffix != LOG_SUFFIX:
        return (f"--log {path}: a log file's name ends in {LOG_SUFFIX} (e.g. {path.with_suffix(LOG_SUFFIX)}), so "
                "that no result, report or other file given by mistake is ever written over")
    blocker = file_in_the_way(path)
    if blocker is not None:
        return f"--log {path}: {blocker} is a file, not a folder, so the log cannot be created under it"
    return None
