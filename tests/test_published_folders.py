"""No cache and no output of another run goes inside a folder of published results or reports (<checkout>/results/<m>/,
<checkout>/reports/<m>/): the files there would be taken for the published ones, `vramlab check` would fail on a
model cache among them, and git would show them. Refused before anything is written, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.environment_variables import check_all
from harness.core.errors import UsageError
from harness.core.path_problems import published_folder
from harness.workflow import check_config
from tests.refusals import refused


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch) -> Path:
    """A checkout's shape: ablations/, and results/ and reports/ with a matrix's folder in each."""
    for folder in ("ablations", "results/smoke", "reports/smoke", "reports/estimate"):
        (tmp_path / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path



def test_a_published_folder_is_one_of_a_checkout(checkout, tmp_path_factory):
    assert published_folder(checkout / "results" / "smoke" / "cache" / "models") == checkout / "results" / "smoke"
    assert published_folder(checkout / "reports" / "estimate") == checkout / "reports" / "estimate"
    assert published_folder(checkout / "results") is None  # the results folder itself takes new matrices' folders
    assert published_folder(checkout / "results" / "mine") is None  # a folder not made yet is no published one
    elsewhere = tmp_path_factory.mktemp("no-checkout")
    (elsewhere / "results" / "smoke").mkdir(parents=True)
    assert published_folder(elsewhere / "results" / "smoke") is None  # no ablations/ beside it: no checkout


@pytest.mark.parametrize("inside", ["results/smoke/cache", "reports/smoke"])
def test_a_cache_inside_a_published_folder_isrefused(checkout, monkeypatch, inside):
    monkeypatch.setenv("VRAMLAB_CACHE", str(checkout / inside))
    with pytest.raises(UsageError, match=rf"VRAMLAB_CACHE=.*{inside}.* lies in .*, a folder of published results or "
                                         "reports; give a cache folder outside it"):
        check_all()


@pytest.mark.parametrize(("key", "folder"), [("results_dir", "results/smoke/mine"), ("reports_dir", "reports/smoke"),
                                             ("results_dir", "reports/estimate/x")])
def test_snakemakes_output_folders_inside_a_published_folder_arerefused(checkout, key, folder):
    with pytest.raises(UsageError, match=rf"--config {key}={folder}: .* lies in .*, a folder of published results or "
                                         "reports; give a folder of its own"):
        check_config({key: folder}, [])


@pytest.mark.parametrize("argv", [["aggregate", "smoke", "--reports-dir", "reports/smoke"],
                                  ["aggregate", "smoke", "--results-dir", "results/smoke/x"],
                                  ["report", "--all", "--out", "reports/estimate/rebuilt"],
                                  ["evaluate", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir",
                                   "results/smoke"]])
def test_a_commands_output_folder_inside_a_published_folder_isrefused(checkout, capsys, argv):
    refused(argv, capsys, "a folder of published results or reports; give a folder of its own")
    assert sorted(p.name for p in (checkout / "results" / "smoke").iterdir()) == []
    assert sorted(p.name for p in (checkout / "reports" / "smoke").iterdir()) == []


def test_a_folder_of_ones_own_beside_the_published_ones_is_taken(checkout):
    check_config({"results_dir": "results-mine", "reports_dir": "reports/mine"}, [])
