"""One clock for a cell on a cluster: the scheduler's job limit is derived from the supervisor's, and the
supervisor's never runs past the job's end. SLURM kills a job at its limit without a word, so a cell still running
then would leave no result: no `timeout` is written, and the job just fails. So each `cell` job asks for the cell's
own limit (harness/process/supervisor.py, `time_limit`) plus the minutes a cell takes outside it (the command's
start before the clock, ending the worker, writing the result), and inside a job whose end SLURM tells
($SLURM_JOB_END_TIME, SLURM 22.05 and later) the cell's limit ends that much before it: a limit given by hand, or a
job with less time than asked (a profile's `--set-resources`), still ends the cell as a `timeout`."""

from __future__ import annotations

import math
import os
import time
from typing import Any

from harness.process.supervisor import GRACE_SECONDS, MIN_TIME_LIMIT, time_limit

JOB_END_ENV = "SLURM_JOB_END_TIME"
# outside the supervisor's limit, within the job: the command's start before the limit's clock runs (imports, the
# matrix checked, the lock), ending the worker (a grace after SIGTERM, another after SIGKILL) and writing the result
OUTSIDE_LIMIT_SECONDS = 240.0 + 2 * GRACE_SECONDS


def job_minutes(settings: dict[str, Any]) -> int:
    """Minutes a scheduler's job for the cell asks for (Snakemake's `runtime`): its limit and the time around it."""
    return math.ceil((time_limit(settings) + OUTSIDE_LIMIT_SECONDS) / 60)


def seconds_to_job_end(now: float | None = None) -> float | None:
    """Seconds until this SLURM job is killed, where SLURM tells it; None outside a job, or for one without an end."""
    try:
        end = float(os.environ.get(JOB_END_ENV, ""))
    except ValueError:
        return None
    left = end - (time.time() if now is None else now)
    return left if end > 0 and math.isfinite(left) and left > 0 else None


def within_job(limit: float, now: float | None = None) -> tuple[float, str | None]:
    """The cell's limit, ended before its job is (and why, where that shortened it)."""
    left = seconds_to_job_end(now)
    if left is None or limit + OUTSIDE_LIMIT_SECONDS <= left:
        return limit, None
    capped = max(left - OUTSIDE_LIMIT_SECONDS, MIN_TIME_LIMIT)
    return capped, (f"its time limit is {capped:g} s, not {limit:g} s: the SLURM job it runs in ends in {left:.0f} s "
                    f"({JOB_END_ENV}), and the cell must end as a timeout, with its result written, before that")
