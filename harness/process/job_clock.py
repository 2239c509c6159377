"""One clock for a cell on a cluster: the scheduler's job limit is derived from the supervisor's, and the
supervisor's never runs past the job's end. SLURM kills a job at its limit without a word, so a cell still running
then would leave no result: no `timeout` is written, and the job just fails. So each `cell` job asks for the cell's
own limit (harness/process/supervisor.py, `time_limit`) plus the minutes a cell takes outside it (the command's
start before the clock, ending the worker, writing the result), and inside a SLURM job the cell's limit ends that
much before the job does ($SLURM_JOB_END_TIME where SLURM sets it, which 22.05 does not; else squeue's time left for
$SLURM_JOB_ID): a limit given by hand, or a job with less time than asked (a profile's `--set-resources`), still
ends the cell as a `timeout`."""

from __future__ import annotations

import math
import os
import re
import subprocess
import time
from typing import Any

from harness.core.environment_variables import MIN_TIME_LIMIT
from harness.process.supervisor import GRACE_SECONDS, time_limit

JOB_END_ENV = "SLURM_JOB_END_TIME"
JOB_ID_ENV = "SLURM_JOB_ID"
SQUEUE_SECONDS = 10.0  # squeue answers in well under a second where the controller is up
# outside the supervisor's limit, within the job: the command's start before the limit's clock runs (imports, the
# matrix checked, the lock), ending the worker (a grace after SIGTERM, another after SIGKILL) and writing the result
OUTSIDE_LIMIT_SECONDS = 240.0 + 2 * GRACE_SECONDS


def job_minutes(settings: dict[str, Any]) -> int:
    """Minutes a scheduler's job for the cell asks for (Snakemake's `runtime`): its limit and the time around it."""
    return math.ceil((time_limit(settings) + OUTSIDE_LIMIT_SECONDS) / 60)


def seconds_to_job_end(now: float | None = None) -> float | None:
    """Seconds until this SLURM job is killed, where SLURM tells it ($SLURM_JOB_END_TIME, else squeue's time left for
    $SLURM_JOB_ID); None outside a job, or for one without an end."""
    text = os.environ.get(JOB_END_ENV)
    if text is None:
        return _time_left(os.environ.get(JOB_ID_ENV, ""))
    try:
        end = float(text)
    except ValueError:
        return None
    left = end - (time.time() if now is None else now)
    return left if end > 0 and math.isfinite(left) and left > 0 else None


def _time_left(job: str) -> float | None:
    """squeue's time left for the job (SLURM 22.05 does not tell a job its end): [days-][hours:]minutes:seconds,
    or UNLIMITED, NOT_SET, INVALID for a job without an end; None where squeue cannot say."""
    if not job.strip().isdigit():
        return None
    try:
        done = subprocess.run(["squeue", "-h", "-j", job, "-o", "%L"], capture_output=True, text=True,
                              timeout=SQUEUE_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", done.stdout.strip()) if done.returncode == 0 else None
    if found is None:
        return None
    days, hours, minutes, seconds = (int(part or 0) for part in found.groups())
    left = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return float(left) if left > 0 else None


def within_job(limit: float, now: float | None = None) -> tuple[float, str | None]:
    """The cell's limit, ended before its job is (and why, where that shortened it)."""
    left = seconds_to_job_end(now)
    if left is None or limit + OUTSIDE_LIMIT_SECONDS <= left:
        return limit, None
    capped = max(left - OUTSIDE_LIMIT_SECONDS, MIN_TIME_LIMIT)
    return capped, (f"its time limit is {capped:g} s, not {limit:g} s: the SLURM job it runs in ends in {left:.0f} s, "
                    "and the cell must end as a timeout, with its result written, before that")
