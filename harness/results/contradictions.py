"""Values of one cell result that contradict each other: vramlab never writes them together, so a file that holds them
was edited or damaged after it was written, and every reader (check, aggregate, report) refuses it as damaged rather
than report a speed nobody measured or an ok cell over its budget.

Each rule names the fields it compares. Timings from two clocks (a phase's and its steps') get a small tolerance."""

from __future__ import annotations

import datetime as dt
from typing import Any

from harness.core.budget import budget_bytes, budget_problem

# a phase's wall time and the sum of its steps' are taken by separate clock reads: rounding, never a real difference
CLOCK_TOLERANCE_SECONDS = 0.01


# how far ahead of this machine's clock another machine's may be and its results still stand
CLOCK_SKEW = dt.timedelta(days=1)


def _moment(text: str | None) -> dt.datetime | None:
    """A time stamp as a comparable moment, or None where it is not one this check can read (no contradiction)."""
    try:
        moment = dt.datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
    return moment if moment is None or moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _over_budget(result: Any) -> bool:
    """Whether a recorded peak is over the budget the result records (device, or host memory no file backs)."""
    metrics, budget = result.metrics, result.budget
    if budget is None:
        return False
    device = metrics.peak_device_bytes is not None and metrics.peak_device_bytes > budget.limit_bytes
    host = budget.host_limit_bytes is not None and metrics.peak_host_unmapped_bytes is not None \
        and metrics.peak_host_unmapped_bytes > budget.host_limit_bytes
    return device or host


def _speed_rules(result: Any) -> list[str]:
    m = result.metrics
    found = []
    # measured_steps None: not recorded (hand-made and early files), which contradicts nothing
    if m.tokens_per_second is not None and m.measured_steps == 0:
        found.append(f"metrics.tokens_per_second is {m.tokens_per_second:g} but metrics.measured_steps is "
                     f"{m.measured_steps}: a speed with no measured step")
    if m.tokens_per_second is not None and m.median_step_seconds == 0:
        found.append("metrics.median_step_seconds is 0 with a metrics.tokens_per_second: no step takes no time")
    steps = result.config.get("steps")
    if isinstance(steps, int) and m.measured_steps is not None and m.measured_steps > steps:
        found.append(f"metrics.measured_steps is {m.measured_steps}, more than the {steps} steps of config.steps")
    return found


def _step_list_rules(result: Any) -> list[str]:
    """The per-step lists hold the warm-up steps and the measured ones, one entry a step; a cell that failed may
    have recorded none, an ok one that measured steps has recorded each."""
    m = result.metrics
    warmup = result.config.get("warmup_steps", 0)
    if not m.measured_steps or not isinstance(warmup, int):
        return []
    expected, ok = warmup + m.measured_steps, result.status.value == "ok"
    found = [f"metrics.{name} holds {len(values) or 'no'} steps, not the {expected} of config.warmup_steps ({warmup}) "
             f"and metrics.measured_steps ({m.measured_steps})"
             for name, values in (("step_seconds", m.step_seconds), ("loss", m.loss))
             if (values or ok) and len(values) != expected]
    if m.train_seconds is not None and m.step_seconds \
            and m.train_seconds + CLOCK_TOLERANCE_SECONDS < sum(m.step_seconds):
        found.append(f"metrics.train_seconds is {m.train_seconds:g}, less than the {sum(m.step_seconds):g} s its "
                     "metrics.step_seconds add up to")
    return found


def _memory_rules(result: Any) -> list[str]:
    m, budget, env = result.metrics, result.budget, result.environment
    found = []
    if result.status.value == "ok" and _over_budget(result):
        found.append("status is ok, but a peak (metrics.peak_device_bytes or metrics.peak_host_unmapped_bytes) is over "
                     "its limit in budget")
    # all steps trained and timed, memory within the budget: nothing ran out of memory
    if result.status.value == "oom" and m.tokens_per_second is not None and not _over_budget(result) \
            and isinstance(result.config.get("steps"), int) and (m.measured_steps or 0) >= result.config["steps"]:
        found.append("status is oom with every step measured and a metrics.tokens_per_second, but no peak over its "
                     "limit in budget")
    if env is not None and env.host_memory_bytes and m.peak_host_unmapped_bytes is not None \
            and m.peak_host_unmapped_bytes > env.host_memory_bytes:
        found.append("metrics.peak_host_unmapped_bytes is more than environment.host_memory_bytes, the host's total")
    # both from the caching allocator, which allocates only within what it reserved; the device peak is sampled
    # and may miss a spike (a result of loss-path-16gb reserved more than its device peak), so it is no bound
    if m.peak_allocated_bytes is not None and m.peak_reserved_bytes is not None \
            and m.peak_allocated_bytes > m.peak_reserved_bytes:
        found.append("metrics.peak_allocated_bytes is more than metrics.peak_reserved_bytes: the allocator allocates "
                     "only within what it reserved")
    setting = result.config.get("budget")
    if budget is not None and setting is not None and budget_problem(setting) is None \
            and budget.limit_bytes != budget_bytes(setting):
        found.append(f"budget.limit_bytes is {budget.limit_bytes}, not the {budget_bytes(setting)} bytes of "
                     f"config.budget ({setting})")
    return found


def contradictions(result: Any) -> list[str]:
    """What in a cell result (a CellResult) contradicts itself, one phrase a contradiction; empty when nothing does."""
    found = [*_speed_rules(result), *_step_list_rules(result), *_memory_rules(result)]
    order = time_order_contradiction(result.started_at, result.finished_at)
    return [*found, order] if order else found


def time_order_contradiction(started_at: str | None, finished_at: str | None) -> str | None:
    """A result (a cell's or an evaluation's) that finished before it started, in a phrase; None when it did not."""
    started, finished = _moment(started_at), _moment(finished_at)
    if started is not None and finished is not None and finished < started:
        return f"finished_at ({finished_at}) is before started_at ({started_at})"
    latest = max((m for m in (started, finished) if m is not None), default=None)
    if latest is not None and latest > dt.datetime.now(dt.UTC) + CLOCK_SKEW:
        return (f"{'finished_at' if latest == finished else 'started_at'} ({latest.isoformat()}) is in the future, "
                "which no run has reached; the file was edited, or written by a machine whose clock is wrong")
    return None
