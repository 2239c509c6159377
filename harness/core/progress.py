"""What a person watching a matrix run sees: where the matrix stands (cells done of all, time left), and one
progress line per cell for its steps. Everything else a cell prints (the trainer's own bars and loss
dictionaries, tokenizer and profiler messages) goes to the cell's log file, not to the console.

The supervisor draws this from the worker's status file (phase, step), so the measured process writes no
console output of its own. On a terminal the step line redraws in place; elsewhere (a CI log, a file) it is
printed at each phase and at every quarter of the steps, so that a log stays short.
"""

from __future__ import annotations

import json
import statistics
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

BAR_WIDTH = 24


def _seconds(result: dict[str, Any]) -> float | None:
    try:
        started = datetime.fromisoformat(result["started_at"])
        finished = datetime.fromisoformat(result["finished_at"])
    except (KeyError, TypeError, ValueError):
        return None
    return (finished - started).total_seconds()


def matrix_standing(cell_ids: list[str], folder: Path) -> str:
    """'3/8 cells done, about 4 min left' from the result files of this folder: the time left is the median
    time of the cells done here times the cells still to do, one at a time."""
    done = [folder / f"{cell_id}.json" for cell_id in cell_ids if (folder / f"{cell_id}.json").is_file()]
    times = []
    for path in done:
        try:
            seconds = _seconds(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
        if seconds is not None and seconds >= 0:
            times.append(seconds)
    text = f"{len(done)}/{len(cell_ids)} cells done"
    left = len(cell_ids) - len(done)
    if times and left:
        text += f", about {_duration(statistics.median(times) * left)} left at one cell at a time"
    return text


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class StepLine:
    """One cell's line: its phase, then its optimizer steps as a bar."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.phase: str | None = None
        self.quarter = -1
        self.drawn = False

    def update(self, status: dict[str, Any]) -> None:
        phase, step, steps = status.get("phase"), status.get("step"), status.get("steps")
        if phase != self.phase:
            self.phase = phase
            if not self.live and phase:
                self._print(f"{self.label}: {phase}")
        if isinstance(step, int) and isinstance(steps, int) and steps > 0:
            quarter = 4 * step // steps
            if self.live:
                self._draw(self._bar(step, steps, status.get("loss")))
            elif quarter != self.quarter:
                self.quarter = quarter
                self._print(f"{self.label}: {self._bar(step, steps, status.get('loss'))}")
        elif self.live and phase:
            self._draw(phase)

    def close(self, final: str) -> None:
        if self.live and self.drawn:
            self.stream.write("\r\033[K")
        self._print(final)

    def _bar(self, step: int, steps: int, loss: Any) -> str:
        filled = BAR_WIDTH * step // steps
        text = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] step {step}/{steps}"
        return text + (f", loss {loss:.3f}" if isinstance(loss, float) else "")

    def _draw(self, text: str) -> None:
        self.stream.write(f"\r\033[K{self.label}: {text}")
        self.stream.flush()
        self.drawn = True

    def _print(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
