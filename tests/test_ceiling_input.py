"""The ceiling search given a range, a probe or a machine it cannot use.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import shutil
import subprocess

import pandas as pd
import pytest

from harness import commands
from harness.core.errors import UsageError
from harness.report.ceiling import _keep_answers
from harness.spec.ceiling import CeilingSpec, CeilingSpecError
from tests.conftest import REPO
from tests.refusals import TINY2, matrix_at, refused


# R09, R10, R11: a ceiling search over an empty results folder, or over --cell, cut the committed ceiling table
def test_a_ceiling_table_is_not_replaced_by_one_with_fewer_answers(tmp_path):
    committed = pd.read_csv(REPO / "reports" / "ceiling-16gb" / "ceiling.csv", dtype=str, keep_default_na=False)
    path = tmp_path / "ceiling.csv"
    shutil.copy(REPO / "reports" / "ceiling-16gb" / "ceiling.csv", path)
    cells = set(committed["cell_id"])
    unanswered = committed.assign(ceiling_context=float("nan"))
    with pytest.raises(UsageError, match="shows 9 answers this run does not have"):
        _keep_answers(path, unanswered, cells)  # every probe skipped, or none kept in that results folder
    with pytest.raises(UsageError, match="shows 8 answers"):
        _keep_answers(path, committed.head(1), cells)  # one search of nine
    _keep_answers(path, committed, cells)  # the same answers: written
    _keep_answers(path, committed.head(1), set(committed["cell_id"].head(1)))  # the others left the matrix


# G11, G12: a ceiling above what any probe may reach validated, and the search ended in a traceback
def test_a_ceiling_past_what_a_probe_may_reach_is_refused(tmp_path, capsys):
    text = TINY2.replace("context: 64, ", "") % ("", "ceiling: {low: 64, high: 1000000, resolution: 1}\n")
    refused(["validate", matrix_at(tmp_path, text)], capsys,
            "ceiling.high: 1,000,000 tokens, but a probe of adapter=lora may reach 524,288 (4 x the 131,072 "
            "positions of arch:tiny-llama)")


def test_a_probe_that_run_cell_refuses_ends_the_search_in_one_line(tmp_path, monkeypatch):
    from harness.core.errors import UsageError
    from harness.process import ceiling

    monkeypatch.setattr(ceiling.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 2))
    cell = next(iter(__import__("harness.spec.matrix", fromlist=["expand"]).expand("smoke")))
    with pytest.raises(UsageError, match=r"its probe at 900,000 tokens was not run \(run-cell exited 2"):
        ceiling.run_probe("smoke", cell, 900_000, tmp_path / "r" / "smoke" / "ceiling" / "x.json")


def test_ceiling_searches_that_need_a_gpu_here_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(commands, "cuda_present", lambda: False)
    refused(["ceiling", "ceiling-16gb", "--cell", "unsloth-offload", "--results-dir", str(tmp_path / "r"),
              "--reports-dir", str(tmp_path / "p")], capsys, "1 of the searches asked for need probes on a CUDA GPU")
    assert not (tmp_path / "r").exists() and not (tmp_path / "p").exists()


# t21-013: `ceiling: {}` was refused as "low: None is not a positive number of tokens", a value never written; the keys
# missing are named as missing
@pytest.mark.parametrize(("section", "said"), [pytest.param({}, "low and high missing", id="t21-013"),
                                               ({"low": 1024}, "high missing")])
def test_a_ceiling_section_without_its_bounds_names_them_missing(section, said):
    with pytest.raises(CeilingSpecError, match=f"^{said}; a ceiling section names the contexts it searches between"):
        CeilingSpec.parse(section)
