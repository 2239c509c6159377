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


# t13-029, t13-031: VRAMLAB_CACHE at the checkout's results/ root (a model folder there looks like a matrix "arch")
# or in ablations/; t13-079, t13-080: VRAMLAB_LEASES and VRAMLAB_STATUS_FILE inside published folders, taken without
# a word where the cache there is refused
@pytest.mark.parametrize(("name", "value", "says"), [
    pytest.param("VRAMLAB_CACHE", "results", "results/, the checkout's folder of published results; give a cache",
                 id="t13-029"),
    pytest.param("VRAMLAB_CACHE", "ablations/cache", "ablations/, the checkout's folder of matrix files",
                 id="t13-031"),
    pytest.param("VRAMLAB_CACHE", "reports", "reports/, the checkout's folder of published reports", id="reports"),
    pytest.param("VRAMLAB_LEASES", "results/smoke", "results/smoke/, a folder of published results or reports; "
                 "give a leases folder outside it", id="t13-079"),
    pytest.param("VRAMLAB_STATUS_FILE", "reports/smoke/status.json", "reports/smoke/, a folder of published results "
                 "or reports; it is the status file", id="t13-080"),
])
def test_vramlabs_own_files_among_the_checkouts_published_ones_are_refused(checkout, monkeypatch, name, value, says):
    monkeypatch.setenv(name, str(checkout / value))
    with pytest.raises(UsageError, match=rf"^{name}=.* lies in .*{says}"):
        check_all()


def test_a_folder_named_like_a_checkouts_beside_no_checkout_takes_a_cache(tmp_path, monkeypatch):
    # an ablations/ of one's own (no results/ or reports/ beside it) is no checkout's folder of matrix files
    (tmp_path / "ablations").mkdir()
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "ablations" / "cache"))
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
