"""The Python API's arguments checked as the commands check theirs: `partial` is a bool (the text 'no' would be
true), a matrix is one name or path, a results folder that does not exist raises instead of making every cell
pending, and an estimate over its host budget does not fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import api
from harness.core.errors import UsageError
from harness.spec.matrix import MatrixError
from tests.conftest import REPO


@pytest.mark.parametrize("partial", ["no", 0, None])
def test_partial_that_is_no_bool_raises(partial, monkeypatch):  # t10-166
    monkeypatch.chdir(REPO)
    with pytest.raises(UsageError, match=r"results: partial=.*; give True or False"):
        api.results("smoke", partial=partial)


def test_a_results_dir_that_does_not_exist_raises_instead_of_every_cell_pending(tmp_path):  # t10-167
    with pytest.raises(UsageError, match=r"results_dir '.*nonexistent' is not a folder; give the folder that holds"):
        api.results("smoke", results_dir=tmp_path / "nonexistent")
    with pytest.raises(UsageError, match="is not a folder"):
        api.steps("smoke", results_dir=tmp_path / "nonexistent")


@pytest.mark.parametrize(("call", "said"), [
    (lambda: api.cells(["smoke"]), r"cells: matrix=\['smoke'\]; give one matrix"),  # t12-036
    (lambda: api.results(None), r"results: matrix=None; give one matrix"),  # t12-043
    (lambda: api.estimates(""), r"estimates: matrix=''; give one matrix"),
    (lambda: api.steps("smoke", results_dir=3), r"steps: results_dir=3; give the folder"),
])
def test_an_argument_of_the_wrong_kind_raises_naming_it(call, said):
    # not pathlib's TypeError about os.fspath, which names nothing the caller wrote
    with pytest.raises(UsageError, match=said):
        call()


def test_an_existing_results_dir_without_the_matrix_still_lists_its_cells_pending(tmp_path):
    assert set(api.results("smoke", results_dir=tmp_path).status) == {"pending"}


# t13-103: the matrix's own folder (results/smoke, holding its 8 results) gave 8 'pending' rows; t13-047: the reports
# folder (reports/smoke holds cells.csv, no result file) did too
@pytest.mark.parametrize(("folder", "said"), [
    pytest.param("results/smoke", r"results_dir 'results/smoke' is the folder of 'smoke' itself \(it holds its "
                 r"result files\); give the folder above it, '.*results', which holds smoke/", id="t13-103"),
    pytest.param("reports", r"results_dir 'reports': reports/smoke holds the reports of 'smoke' \(cells.csv, "
                 r".*\), not its result files; give the folder of results", id="t13-047"),
])
@pytest.mark.parametrize("function", ["results", "steps"])
def test_a_results_dir_one_level_off_raises_naming_it_instead_of_every_cell_pending(monkeypatch, folder, said,
                                                                                     function):
    monkeypatch.chdir(REPO)
    with pytest.raises(UsageError, match=rf"^{function}: {said}"):
        getattr(api, function)("smoke", results_dir=folder)


def test_a_folder_named_as_the_matrix_that_holds_its_folder_is_a_results_folder(tmp_path):
    (tmp_path / "smoke" / "smoke").mkdir(parents=True)  # results_dir named like the matrix, holding smoke/ as it should
    assert set(api.results("smoke", results_dir=tmp_path / "smoke").status) == {"pending"}


def test_an_estimate_over_its_host_budget_does_not_fit():
    settings = {"model": "arch:qwen3-8b", "device": "cuda", "quantization": "nf4", "checkpointing": "offload",
                "context": 20480}
    fit = api.estimate(**settings, host_budget="1MiB")
    assert fit.total_bytes <= fit.budget_bytes and not fit.host_fits and not fit.fits
    assert "but does not fit: its pinned host memory is over the 1.0 MiB host budget" in str(fit)
    assert api.estimate(**settings, host_budget="16GiB").fits


# t19-058: a number taken from one of the API's own frames is a numpy scalar; api.estimate(context=np.int64(1024))
# was refused as "np.int64(1024) is not an integer". It is the number it holds, and a numpy fraction is still refused
def test_estimate_takes_a_numpy_number_as_the_number_it_holds():
    import numpy as np

    assert api.estimate(context=np.int64(1024)).total_bytes == api.estimate(context=1024).total_bytes
    with pytest.raises(MatrixError, match=r"context: 1\.5 is not an integer"):
        api.estimate(context=np.float64(1.5))


# t20-060: api.estimate(model=Path(...)) was refused as "PosixPath('/nonexistent') is not a string", where api.results
# takes a Path; the path is read as the model source it names, so a missing one is said to be missing
def test_estimate_takes_a_model_given_as_a_path(tmp_path):
    with pytest.raises(MatrixError, match="model folder '/nonexistent' does not exist"):
        api.estimate(model=Path("/nonexistent"))
