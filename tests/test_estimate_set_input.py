"""`vramlab estimate --set KEY=VALUE` with a side of the `=` left empty: refused in one line that quotes what was
written and says what to give, rather than a YAML null named None at cells[0], which the user never wrote."""

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
