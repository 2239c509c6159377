"""The interface every tracker implements, and the set that runs them side by side.

A tracker watches one thing (device memory, host memory, time, compute) over the phases of a cell
(load, train). The cell runner builds the set once, with the device resolved once; the set samples every
sampling tracker on one thread, opens and closes phases for all of them, and gathers what each reports
into the result's metrics. Trackers never read one another, except the compute tracker, which turns the
time tracker's tokens per second into FLOP/s and MFU once both have reported.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.run import worker_status


class Tracker:
    name: str = ""
    samples: bool = False  # sampled on the shared thread

    def sample(self) -> None:
        """Take one reading (called every interval, and at the edges of each phase)."""

    def phase_started(self, phase: str) -> None: ...

    def phase_ended(self, phase: str) -> None:
        """After the phase's last sample; readings after this belong to no phase."""

    def stopped(self) -> None:
        """Called once after the last phase, after the sampler has stopped."""

    def callback(self) -> Any:
        """A transformers TrainerCallback that this tracker needs inside training, or None."""
        return None

    def report(self, metrics: dict[str, Any]) -> None:
        """Add this tracker's figures to the cell's metrics (run-wide keys and metrics['phases'][phase])."""


class TrackerSet:
    """Runs trackers as peers: one sampling thread, shared phase boundaries, one merged report."""

    def __init__(self, trackers: list[Tracker], interval: float = 0.01) -> None:
        self.trackers = trackers
        self.interval = interval
        self.sample_count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="vramlab-trackers")

    def get(self, name: str) -> Tracker:
        return next(t for t in self.trackers if t.name == name)

    def _sample(self) -> None:
        for tracker in self.trackers:
            if tracker.samples:
                tracker.sample()
        self.sample_count += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> TrackerSet:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        for tracker in self.trackers:
            tracker.stopped()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Every tracker sees the phase begin and end, also when it ends in an exception (an OOM half-way
        still has its peaks)."""
        worker_status.tell_phase(name)  # the phase a hang or a hard crash is recorded in
        for tracker in self.trackers:
            tracker.phase_started(name)
        self._sample()
        try:
            yield
        finally:
            self._sample()
            for tracker in self.trackers:
                tracker.phase_ended(name)

    def callbacks(self) -> list[Any]:
        return [cb for cb in (t.callback() for t in self.trackers) if cb is not None]

    def report(self, metrics: dict[str, Any]) -> None:
        metrics.setdefault("phases", {})
        for tracker in self.trackers:
            tracker.report(metrics)
        metrics["memory_samples"] = self.sample_count
