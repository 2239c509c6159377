"""Bad input, sixth round (tests/bad_input_trials/round6.md): the cases an independent trial on main found not clear,
each one line naming what is wrong, a non-zero exit, and nothing written."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from harness import cli
from harness.core.errors import UsageError
from harness.report.calibration import rebuild_calibration
from harness.report.ceiling import _keep_answers
from harness.workflow import check_config
from tests.conftest import REPO

TINY = """fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0%s}
axes: {adapter: [lora, rslora]}
"""


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], said: str) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err, err


# Y42: completion_only on data with no completion (a packed corpus) did nothing, silently, under new cell ids
def test_completion_only_on_a_packed_corpus_is_refused_and_its_default_is_not(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text(TINY % ', completion_only: "on"')
    _refused(["validate", str(path)], capsys, "fixed.completion_only: completion_only has no effect: it acts only "
                                              "in cells with data: grant-reports, chat: or text:")
    path.write_text(TINY % ', completion_only: "off"')  # the default written out asks for nothing
    assert cli.main(["validate", str(path)]) == 0


# C31: a calibration over folders without GPU results printed an empty table and exited 0
def test_a_calibration_over_no_gpu_result_is_refused(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    _refused(["estimate", "--calibrate", str(tmp_path / "empty")], capsys, "--calibrate: no ok GPU cell in")


# C40: a file given as --results-dir was told as every result missing under it
@pytest.mark.parametrize("command, option", [("aggregate", "--results-dir"), ("aggregate", "--reports-dir"),
                                             ("report", "--reports-dir"), ("run-cell", "--results-dir")])
def test_a_file_given_as_a_results_or_reports_folder_is_named(tmp_path, capsys, command, option):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    argv = [command, "smoke"] if command != "run-cell" else [command, "--matrix", "smoke", "--cell", "d9946bcf27e9"]
    _refused([*argv, option, str(afile / "below")], capsys, f"{option} {afile / 'below'}: {afile} is a file, not a "
                                                             "folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


# E19: a switch written with a space read as 1 here and would read as a word elsewhere
@pytest.mark.parametrize("value", [" 1", "0 ", "1\n"])
def test_a_switch_is_exactly_0_or_1(monkeypatch, capsys, value):
    monkeypatch.setenv("VRAMLAB_EMULATE_CARD", value)
    _refused(["validate", "smoke"], capsys, "write VRAMLAB_EMULATE_CARD=0 to turn it off")


# R01: `report --all` from an empty results folder rebuilt the committed calibration with no row
def test_a_calibration_is_not_replaced_by_one_over_fewer_cells(tmp_path, capsys):
    committed = REPO / "reports" / "estimate" / "calibration.md"
    folder = tmp_path / "reports" / "estimate"
    folder.mkdir(parents=True)
    shutil.copy(committed, folder / "calibration.md")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"calibration.md shows \d{3} measured cells that .*empty holds no result"):
        rebuild_calibration(tmp_path / "empty", tmp_path / "reports", tmp_path / "reports")
    assert (folder / "calibration.md").read_bytes() == committed.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["calibration.md"]


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


# N03-N07: matrix names that are the project's own folders of results/ and reports/
@pytest.mark.parametrize("name", ["estimate", "superseded", "benchmarks", "memory-history"])
def test_a_matrix_may_not_take_the_name_of_a_folder_that_holds_no_matrix(tmp_path, capsys, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text(TINY % "")
    _refused(["validate", str(path)], capsys, f"the name {name!r} is taken by")
    _refused(["run-cell", "--matrix", str(path), "--cell", "dca0c19d53c5", "--results-dir", str(tmp_path / "r")],
             capsys, f"the name {name!r} is taken by")
    assert not (tmp_path / "r").exists()


# R02, C97, C99: output paths among the results, or over a report's own files
def test_outputs_never_go_among_results_or_over_a_reports_files(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "reports" / "smoke").mkdir(parents=True)
    (tmp_path / "reports" / "smoke" / "overview.png").write_bytes(b"a committed chart")
    _refused(["report", "--all", "--out", "results/x"], capsys, "--out results/x is inside the results folder")
    _refused(["schema", "--out", "reports/smoke"], capsys, "--out reports/smoke is inside results or reports")
    _refused(["estimate", "smoke", "--chart", "reports/smoke/overview.png"], capsys,
             "--chart reports/smoke/overview.png is inside results or reports")
    assert (tmp_path / "reports" / "smoke" / "overview.png").read_bytes() == b"a committed chart"
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == []


# S23: one folder for results and reports
def test_the_workflow_refuses_one_folder_for_results_and_reports(tmp_path):
    same = str(tmp_path / "same")
    with pytest.raises(UsageError, match="results_dir and reports_dir are the same folder"):
        check_config({"matrix": "smoke", "results_dir": same, "reports_dir": same + "/"}, [])


# C86: a time limit no cell can meet
def test_a_time_limit_under_a_second_is_refused(tmp_path, capsys):
    _refused(["run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir", str(tmp_path / "r"),
              "--time-limit", "0.001"], capsys, "at least 1")
    assert not (tmp_path / "r").exists()


# G09: a prefix with nothing after it
@pytest.mark.parametrize("model, said", [("gguf:", "'gguf:' names nothing after its prefix"),
                                         ("package:", "'package:' names no package")])
def test_a_model_prefix_with_nothing_after_it_is_named(tmp_path, capsys, model, said):
    path = tmp_path / "m.yaml"
    path.write_text(TINY.replace('"arch:tiny-llama"', f'"{model}"') % "")
    _refused(["validate", str(path)], capsys, said)


# Z08, G04: a rank past every layer's full rank, and a model folder whose config gives no size
def test_a_rank_past_the_hidden_size_is_refused(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text(TINY % ", lora_rank: 1000")
    _refused(["validate", str(path)], capsys, "lora_rank: 1,000 is more than the hidden size 64 of arch:tiny-llama")
    path.write_text(TINY % ", lora_rank: 64")  # the full rank of a 64-wide layer is still a rank
    assert cli.main(["validate", str(path)]) == 0


def test_a_model_config_with_a_size_that_is_none_is_refused(tmp_path, capsys):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "hidden_size": -4}')
    path = tmp_path / "m.yaml"
    path.write_text(TINY.replace('"arch:tiny-llama"', f'"{folder}"') % "")
    _refused(["validate", str(path)], capsys, "its config gives hidden_size -4, not a size")
