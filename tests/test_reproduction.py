"""What a reproduction's comparison judges (harness/report/reproduce.py): the status always, the loss on the same
software, the peak on the same device with the tolerance of its kind (a GPU's allocator, a CPU process's resident
set), throughput never."""

from __future__ import annotations

import pytest

from harness.report.reproduce import CPU_MEMORY_TOLERANCE, MEMORY_TOLERANCE, compare, describe_tolerances
from harness.results import read
from tests.conftest import REPO


def _again(path, peak_ratio: float = 1.0, torch: str | None = None):
    """A committed result and a copy of it as if measured again, its peak scaled, its torch perhaps another."""
    published = read(path)
    mine = published.model_copy(deep=True)
    mine.metrics.peak_device_bytes = int(published.metrics.peak_device_bytes * peak_ratio)
    if torch:
        mine.environment.versions["torch"] = torch
    return published, mine


CPU_RESULT = REPO / "results" / "smoke" / "4c55591d5771.json"
GPU_RESULT = REPO / "results" / "seed-16gb" / "1f7282a39590.json"


@pytest.mark.parametrize(("path", "tolerance"), [(CPU_RESULT, CPU_MEMORY_TOLERANCE), (GPU_RESULT, MEMORY_TOLERANCE)])
def test_the_peak_is_judged_with_the_tolerance_of_its_device(path, tolerance):
    inside = compare(*_again(path, 1 + tolerance * 0.9))
    outside = compare(*_again(path, 1 + tolerance * 1.1))
    assert inside.agrees and not outside.agrees
    assert outside.differences == [f"device peak ×{1 + tolerance * 1.1:.3f}"]


def test_a_cpu_peak_within_the_gpu_tolerance_agrees_on_either():
    assert compare(*_again(CPU_RESULT, 1 + MEMORY_TOLERANCE * 0.5)).agrees
    assert CPU_MEMORY_TOLERANCE >= MEMORY_TOLERANCE


def test_the_loss_is_judged_on_the_same_software_only():
    same = compare(*_again(CPU_RESULT))
    assert same.loss_difference == 0 and same.not_judged == []
    other = compare(*_again(CPU_RESULT, torch="2.12.0+cpu"))
    assert other.not_judged == ["loss (other software: torch 2.13.0+cpu→2.12.0+cpu)"]


def test_the_tolerances_are_said_as_judged():
    said = describe_tolerances()
    assert f"within {MEMORY_TOLERANCE:.0%} on the same GPU model" in said
    assert f"within {CPU_MEMORY_TOLERANCE:.0%} on the same CPU model" in said
