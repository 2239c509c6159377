"""`vramlab estimate --set KEY=VALUE` with a side of the `=` left empty: refused in one line that quotes what was
written and says what to give, rather than a YAML null named None at cells[0], which the user never wrote; a level
written as `vramlab settings` lists it (`on`) is that level, and a YAML boolean (`yes`) is refused naming the levels."""

from __future__ import annotations

import pytest

from tests.refusals import refused


@pytest.mark.parametrize(("pair", "said"), [
    pytest.param("context=", "--set context=: the value is empty; give one (e.g. --set context=32768)", id="t11-086"),
    pytest.param("context= ", "--set context= : the value is empty", id="blank-value"),
    pytest.param("=64", "--set =64: the setting's name is empty; write it as KEY=VALUE", id="empty-key"),
])
def test_estimate_refuses_a_set_pair_with_an_empty_side(capsys, pair, said):
    err = refused(["estimate", "--set", "model=arch:tiny-llama", "--set", pair], capsys, said)
    assert "None" not in err and "cells[0]" not in err, err


def test_estimate_refuses_a_missing_results_dir_beside_a_chart(tmp_path, capsys):  # t11-090
    refused(["estimate", "smoke", "--chart", str(tmp_path / "c.png"), "--results-dir", str(tmp_path / "no")], capsys,
            f"--results-dir {tmp_path / 'no'} does not exist; give the folder of the results")
    assert not (tmp_path / "c.png").exists()


def test_a_level_written_as_settings_lists_it_is_that_level(capsys):  # t12-104
    # YAML reads a bare `on` as true; a shell has no quotes to keep it a word, so the matrix file's advice fails here
    from harness import cli

    assert cli.main(["estimate", "--set", "model=arch:qwen3-8b", "--set", "checkpointing=on"]) == 0
    assert "does not fit" in capsys.readouterr().out


@pytest.mark.parametrize("word", ["yes", "true", "ON"])
def test_a_yaml_boolean_for_a_setting_of_words_is_refused_naming_its_levels(capsys, word):
    err = refused(["estimate", "--set", "model=arch:qwen3-8b", "--set", f"checkpointing={word}"], capsys,
                  f"--set checkpointing={word}: {word} is not one of its levels, off, on, offload")
    assert "quotes" not in err, err
