"""`vramlab estimate --calibrate` counts each results folder once: one named twice, or by two paths to it, would count
each of its cells twice in the calibration; refused in one line before anything is read."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.refusals import refused


@pytest.mark.parametrize("second", ["results/seed-16gb", "./results/seed-16gb", "results/smoke/../seed-16gb",
                                    str(REPO / "results" / "seed-16gb")])
def test_a_folder_given_twice_to_the_calibration_is_refused(capsys, monkeypatch, second):
    monkeypatch.chdir(REPO)  # read only: refused before any file is read
    err = refused(["estimate", "--calibrate", "results/seed-16gb", second], capsys,
                  f"--calibrate {second}: given more than once")
    assert "each of its cells would be counted twice" in err
