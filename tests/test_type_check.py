"""The type check CI runs (tools/type_check.py): mypy's errors kept without their line numbers, against a baseline
that only shrinks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tools.type_check import BASELINE, baseline, error_key


def test_an_error_is_kept_by_its_file_message_and_code_not_its_line():
    one = 'harness/a.py:12: error: Item "None" of "X | None" has no attribute "y"  [union-attr]'
    moved = 'harness/a.py:40:5: error: Item "None" of "X | None" has no attribute "y"  [union-attr]'
    kept = 'harness/a.py: Item "None" of "X | None" has no attribute "y" [union-attr]'
    assert error_key(one) == error_key(moved) == kept
    assert error_key("harness/a.py:12: note: Both left and right operands are unions") is None


def test_the_baseline_holds_errors_of_harness_only_each_with_its_code():
    known = baseline()
    assert known and all(line.startswith("harness/") and line.endswith("]") for line in known)
    assert BASELINE.read_text().startswith("# ")


@pytest.mark.slow
def test_mypy_finds_no_error_beyond_the_baseline_and_none_of_it_is_gone():
    done = subprocess.run([sys.executable, "-m", "tools.type_check"], cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
