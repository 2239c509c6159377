"""The Python API (harness/api.py) given what it cannot use as asked: a results folder that is a file is refused
with a UsageError naming it; a folder without any of the matrix's results gives its empty steps frame with a warning,
so that it is not read as a matrix whose cells took no step; a GPU card's budget on a CPU cell is said in the
estimate's notes, since `fits` is then against a card the cell never runs on."""

from __future__ import annotations

import pytest

from harness import api
from harness.core.errors import UsageError
from tests.conftest import REPO


def test_results_refuses_a_results_dir_that_is_a_file():  # t11-162
    with pytest.raises(UsageError, match=r"results_dir '.*README\.md' is not a folder; give the folder that holds"):
        api.results("smoke", results_dir=REPO / "README.md")


def test_steps_warns_when_no_cell_of_the_matrix_has_a_result_there(tmp_path):  # t11-163
    with pytest.warns(UserWarning, match=f"steps: no cell of 'smoke' has a result under {tmp_path}; the frame is"):
        assert api.steps("smoke", results_dir=tmp_path).empty


def test_estimate_notes_a_gpu_card_budget_on_a_cpu_cell():  # t11-165
    fit = api.estimate(model="arch:tiny-llama", device="cpu", context=64, budget="rtx4080")
    said = "the budget names a GPU (NVIDIA GeForce RTX 4080) but this cell runs on the CPU: it fits or not against"
    assert any(said in note for note in fit.notes) and said in str(fit), fit.notes
    assert not any("runs on the CPU" in n for n in api.estimate(model="arch:tiny-llama", device="cpu").notes)
