"""Time: each phase's wall time, and every optimizer step's, device synchronized.

tokens/s is tokens per optimizer step over the median step time, warm-up steps excluded. Where sequences
have different lengths (the document workloads), each step's real tokens are counted by the trainer and
tokens/s is the median of the steps' own rates.
"""

from __future__ import annotations

import logging
import statistics
import time
from typing import Any

from harness.run.trackers.base import Tracker
from harness.run.worker_status import tell

log = logging.getLogger("vramlab")


def summarize_steps(step_seconds: list[float], warmup: int, tokens_per_step: int,
                    step_tokens: list[int] | None = None) -> dict[str, Any]:
    """Timings over the measured (post warm-up) optimizer steps."""
    measured = step_seconds[warmup:]
    if not measured:
        return {"measured_steps": 0, "median_step_seconds": None, "tokens_per_second": None}
    median = statistics.median(measured)
    quartiles = statistics.quantiles(measured, n=4) if len(measured) >= 4 else None
    summary = {
        "measured_steps": len(measured),
        "tokens_per_step": tokens_per_step,
        "median_step_seconds": median,
        "min_step_seconds": min(measured),
        "max_step_seconds": max(measured),
        # the spread, as the interquartile range where there are enough steps to have one
        "step_seconds_iqr": quartiles[2] - quartiles[0] if quartiles else max(measured) - min(measured),
        "tokens_per_second": tokens_per_step / median,
        "tokens_per_second_mean": tokens_per_step * len(measured) / sum(measured),
    }
    if step_tokens is not None:
        tokens = step_tokens[warmup:warmup + len(measured)]
        rates = [n / s for n, s in zip(tokens, measured, strict=True)]
        summary.update(tokens_per_step=round(statistics.mean(tokens)), tokens_per_second=statistics.median(rates),
                       tokens_per_second_mean=sum(tokens) / sum(measured))
    return summary


class TimeTracker(Tracker):
    name = "time"

    def __init__(self, cuda: bool, warmup_steps: int, total_steps: int, tokens_per_step: int | None) -> None:
        """tokens_per_step None: sequences differ in length, so the trainer counts each step's tokens."""
        self.cuda, self.warmup_steps, self.total_steps = cuda, warmup_steps, total_steps
        self.tokens_per_step = tokens_per_step
        self.step_seconds: list[float] = []
        self.step_tokens: list[int] = []
        self.phase_seconds: dict[str, float] = {}
        self._started: dict[str, float] = {}

    def phase_started(self, phase: str) -> None:
        self._started[phase] = time.perf_counter()

    def phase_ended(self, phase: str) -> None:
        self.phase_seconds[phase] = time.perf_counter() - self._started[phase]

    def now(self) -> float:
        if self.cuda:
            import torch

            torch.cuda.synchronize()
        return time.perf_counter()

    def callback(self) -> Any:
        from transformers import TrainerCallback

        tracker = self

        class StepTimer(TrainerCallback):
            """Wall time between consecutive optimizer-step ends, device synchronized: everything the
            trainer does for a step (data, forward, backward, optimizer, logging) is inside it."""

            def on_train_begin(self, args, state, control, **kwargs):
                self.last = tracker.now()
                self.tokens_seen = 0

            def on_step_end(self, args, state, control, **kwargs):
                now = tracker.now()
                tracker.step_seconds.append(now - self.last)
                self.last = now
                if tracker.tokens_per_step is None:
                    tracker.step_tokens.append(int(state.num_input_tokens_seen) - self.tokens_seen)
                    self.tokens_seen = int(state.num_input_tokens_seen)
                log.info("step %d/%d: %.2f s", state.global_step, tracker.total_steps, tracker.step_seconds[-1])
                tell(step=state.global_step, steps=tracker.total_steps)

        return StepTimer()

    def trainer_settings(self) -> dict[str, Any]:
        """Counting tokens costs a device sync per step, so it is asked for only where lengths differ."""
        return {"include_num_input_tokens_seen": "non_padding"} if self.tokens_per_step is None else {}

    def report(self, metrics: dict[str, Any]) -> None:
        for phase, seconds in self.phase_seconds.items():
            metrics["phases"].setdefault(phase, {})["seconds"] = seconds
            if phase in ("load", "train"):  # the result's own columns; the other phases live in `phases`
                metrics[f"{phase}_seconds"] = seconds
        metrics["step_seconds"] = self.step_seconds
        if self.tokens_per_step is None:
            metrics["step_tokens"] = self.step_tokens
        if "train" in self.phase_seconds:
            variable = self.tokens_per_step is None
            metrics.update(summarize_steps(self.step_seconds, self.warmup_steps, self.tokens_per_step or 0,
                                           self.step_tokens if variable else None))
