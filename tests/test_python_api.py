"""The Python API (harness/api.py): the rows `vramlab aggregate` writes, the estimate `vramlab estimate` prints, and
the example of docs/python-api.md, run as it is written."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from harness import api
from harness.core.errors import UsageError
from harness.results import ResultFileError
from tests.conftest import REPO


def test_results_are_the_rows_of_the_committed_cells_table():
    rows = api.results("seed-16gb", REPO / "results")
    committed = pd.read_csv(REPO / "reports" / "seed-16gb" / "cells.csv", dtype={"cell_id": str})
    assert list(rows["cell_id"]) == list(committed["cell_id"])
    for column in ("status", "peak_device_bytes", "tokens_per_second", "mfu", "final_loss"):
        pd.testing.assert_series_equal(rows[column], committed[column], check_dtype=False, check_names=False)


def test_cells_without_a_result_are_pending_or_refused(tmp_path):
    rows = api.results("smoke", tmp_path)
    assert set(rows["status"]) == {"pending"} and len(rows) == len(list((REPO / "results" / "smoke").glob("*.json")))
    with pytest.raises(ResultFileError, match="has no result file"):
        api.results("smoke", tmp_path, partial=False)
    with pytest.warns(UserWarning, match="no cell of 'smoke' has a result"):
        assert api.steps("smoke", tmp_path).empty


def test_an_estimate_says_whether_a_configuration_fits_and_where_its_memory_goes():
    fit = api.estimate(model="arch:qwen3-8b", context=20480, quantization="nf4", kernels="unsloth",
                       checkpointing="offload")
    assert fit.fits and 8 < fit.total_gib < 16 and fit.budget_bytes == 16 * 2**30
    assert fit.components["bytes"].sum() == fit.total_bytes
    assert str(fit).startswith("cell (") and "of a 16.00 GiB budget: fits" in str(fit)
    assert not api.estimate(model="arch:qwen3-8b", context=20480, quantization="none").fits


@pytest.mark.parametrize(("settings", "message"), [
    ({"contxt": 4096}, "unknown setting 'contxt'; did you mean 'context'?"),
    ({"quantization": "nf5"}, "quantization"),
    ({"model": "arch:tiny-llama", "kernels": "unsloth", "device": "cpu"}, "no estimate: skipped: declared conflict"),
])
def test_bad_input_to_the_api_is_one_clear_error(settings, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        api.estimate(**settings)


def test_a_matrix_that_is_not_there_is_one_clear_error():
    with pytest.raises(UsageError, match="nosuch"):
        api.results("nosuch")


def test_the_matrices_are_those_of_ablations():
    assert api.matrices() == sorted(p.stem for p in (REPO / "ablations").glob("*.yaml"))


@pytest.mark.slow
def test_the_documented_example_runs(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    page = (REPO / "docs" / "python-api.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", page, re.S)
    names: dict = {}
    exec(compile(code, "docs/python-api.md", "exec"), names)
    printed = capsys.readouterr().out
    assert "seed-16gb" in printed and "GiB of 16" in printed
    assert len(names["cells"]) == 18 and names["fit"].cell.settings["context"] == 32768


@pytest.mark.slow
def test_the_readmes_example_runs(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    (code,) = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    names: dict = {}
    exec(compile(code, "README.md", "exec"), names)
    printed = capsys.readouterr().out
    assert "seed-stack" in printed and "GiB of 16" in printed and names["fit"].cell.settings["context"] == 32768
