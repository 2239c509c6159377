"""What `vramlab check --fresh` is given and what the aggregate reads of its record: a folder of no matrix's cell
results, a folder named after no matrix, another matrix's freshness.json copied in, and a new record among the
published results. Each is one line; no record is written where nothing would read it."""

from __future__ import annotations

import shutil

import pytest

from harness import cli
from tests.conftest import REPO
from tests.refusals import refused

SMOKE = REPO / "results" / "smoke"
ONE_RESULT = "d9946bcf27e9.json"


def test_a_folder_of_no_cell_results_is_refused(tmp_path, capsys):  # t10-064
    (tmp_path / "benchmarks").mkdir()
    for table in ("harness-overhead.json", "loss-path.json"):  # JSON files, a benchmark's own tables
        shutil.copy(REPO / "results" / "benchmarks" / table, tmp_path / "benchmarks")
    refused(["check", "--fresh", str(tmp_path / "benchmarks")], capsys,
            "holds no cell result of a matrix (a benchmark's tables, probes or damaged files are not judged), so "
            "--fresh has nothing to judge")
    assert not (tmp_path / "benchmarks" / "freshness.json").exists()


def test_a_folder_named_after_no_matrix_is_refused(tmp_path, capsys):  # t10-066
    (tmp_path / "nomatrix").mkdir()
    shutil.copy(SMOKE / ONE_RESULT, tmp_path / "nomatrix")
    refused(["check", "--fresh", str(tmp_path / "nomatrix")], capsys,
            "its results are of the matrix 'smoke', but the folder is named 'nomatrix'; `vramlab aggregate smoke` "
            "reads the freshness record in <results-dir>/smoke/ only")
    assert sorted(p.name for p in (tmp_path / "nomatrix").iterdir()) == [ONE_RESULT]


def test_another_matrix_freshness_record_is_refused_by_the_aggregate(tmp_path, capsys):  # t10-068
    shutil.copytree(SMOKE, tmp_path / "smoke")
    shutil.copy(REPO / "results" / "quality-qwen" / "freshness.json", tmp_path / "smoke")
    refused(["aggregate", "smoke", "--results-dir", str(tmp_path), "--reports-dir", str(tmp_path / "rep")], capsys,
            "freshness.json: a freshness record of the matrix 'quality-qwen', not of 'smoke' whose results are here; "
            f"run `vramlab check --fresh {tmp_path / 'smoke'}` to write smoke's own")
    assert not (tmp_path / "rep").exists()


def test_another_matrix_freshness_record_is_refused_by_check(tmp_path, capsys):  # t10-068
    shutil.copytree(SMOKE, tmp_path / "smoke")
    shutil.copy(REPO / "results" / "quality-qwen" / "freshness.json", tmp_path / "smoke")
    refused(["check", str(tmp_path / "smoke")], capsys, "a freshness record of the matrix 'quality-qwen', not of "
                                                        "'smoke'")


@pytest.mark.slow
def test_a_new_record_among_published_results_says_to_commit_or_delete_it(tmp_path, capsys):  # t10-059
    (tmp_path / "ablations").mkdir()  # a checkout: its results/<matrix>/ are published folders
    (tmp_path / "results" / "smoke").mkdir(parents=True)
    shutil.copy(SMOKE / ONE_RESULT, tmp_path / "results" / "smoke")
    folder = tmp_path / "results" / "smoke"
    assert cli.main(["check", "--fresh", str(folder)]) == 0
    said = capsys.readouterr().out.splitlines()[-1]
    assert said.startswith("smoke: 1 cell results: 0 fresh, 0 stale, 1 unknown, 0 not judged; written to ")
    assert f"; a new file in the published {folder}/: commit it with the results for the published report to " \
        "carry it, or delete it to leave the folder as it was" in said
    assert (folder / "freshness.json").is_file()
    assert cli.main(["check", "--fresh", str(folder)]) == 0  # written again: no new file, nothing more to say
    assert "a new file" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_record_outside_a_checkout_is_written_without_a_word_of_publishing(tmp_path, capsys):
    (tmp_path / "smoke").mkdir()
    shutil.copy(SMOKE / ONE_RESULT, tmp_path / "smoke")
    assert cli.main(["check", "--fresh", str(tmp_path / "smoke")]) == 0
    said = capsys.readouterr().out.splitlines()[-1]
    assert "written to" in said and "published" not in said
