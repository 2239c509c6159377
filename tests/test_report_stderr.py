"""What `vramlab report` (and so `report --all`) leaves on stderr: nothing but its own lines. A report holds every
chart of one width open until it saves them, dozens of parts for a quality matrix's comparisons, which matplotlib
would warn about after 20 (\"More than 20 figures have been opened\"), once per figure, burying a refusal's one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings

import matplotlib.pyplot as plt
import pytest

from harness.report.charts.style import RC
from tests.conftest import REPO


def test_a_report_opens_more_than_twenty_figures_without_a_warning():  # t10-141, t10-191
    figures = []
    try:
        with warnings.catch_warnings(), plt.rc_context(RC):
            warnings.simplefilter("error")  # matplotlib's warning is a RuntimeWarning: an error here
            figures = [plt.subplots()[0] for _ in range(30)]
    finally:
        for fig in figures:
            plt.close(fig)
    assert len(figures) == 30


@pytest.mark.slow
@pytest.mark.minutes
def test_the_report_with_the_most_chart_parts_writes_nothing_on_stderr(tmp_path):  # t10-141, t10-191
    shutil.copytree(REPO / "reports" / "quality-qwen", tmp_path / "quality-qwen")
    done = subprocess.run([sys.executable, "-W", "default", "-m", "harness", "report", "quality-qwen", "--reports-dir",
                           str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr == ""
