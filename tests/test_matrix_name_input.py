"""The matrix name, taken from the file name, names the results folder: the refusal of one outside its rule says
the rule exactly (ASCII letters), and which letter broke it where a person would read it as a letter."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.spec.matrix import MatrixError, matrix_name

RULE = "must start with a letter or digit and hold only letters, digits, '-' and '_', all ASCII (a-z, A-Z, 0-9)"


@pytest.mark.parametrize(("file", "letter"), [pytest.param("mätrix.yaml", " ('ä' is not ASCII)", id="t11-054"),
                                              pytest.param("a b.yaml", "", id="space"),
                                              pytest.param("-x.yaml", "", id="dash-first")])
def test_a_matrix_name_outside_the_rule_says_the_rule_and_the_letter(file, letter):
    with pytest.raises(MatrixError) as refused:
        matrix_name(Path("/tmp") / file)
    said = str(refused.value)
    assert RULE in said and said.endswith(f"it names the results folder; rename the file{letter}")


def test_an_ascii_matrix_name_is_accepted():
    assert matrix_name(Path("/tmp/matrix_2-b.yaml")) == "matrix_2-b"
