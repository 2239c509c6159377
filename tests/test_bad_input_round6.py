"""Bad input, sixth round (docs/bad-input/round6.md): the cases an independent trial on main found not clear, each
one line naming what is wrong, a non-zero exit, and nothing written."""

from __future__ import annotations

import pytest

from harness import cli

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
