"""`vramlab claims` over a results folder that lacks some of the claims' matrices: the readings without a result say
"not measured yet", and the summary line names the runs that would measure them, those and no others."""

from __future__ import annotations

import shutil

import pytest

from harness import cli
from tests.conftest import REPO


def _claims_without(tmp_path, *missing: str) -> str:
    shutil.copytree(REPO / "results", tmp_path / "res", ignore=lambda folder, names: [
        n for n in names if folder == str(REPO / "results") and n in missing])
    assert cli.main(["claims", "--results-dir", str(tmp_path / "res"), "--reports-dir", str(tmp_path / "cl")]) == 0
    return (tmp_path / "cl" / "claims" / "claims.md").read_text()


@pytest.mark.slow
def test_the_unmeasured_readings_name_the_matrix_that_measures_them(tmp_path, capsys):  # t10-078
    said = _claims_without(tmp_path, "ceiling-16gb")
    assert "17 of 20 readings measured; the others say \"not measured yet\" until their cells run on the GPU machine " \
        "(`snakemake --config matrix=ceiling-16gb`)." in said
    assert "matrix=claims`" not in capsys.readouterr().out


@pytest.mark.slow
def test_every_matrix_with_an_unmeasured_reading_is_named(tmp_path):
    said = _claims_without(tmp_path, "ceiling-16gb", "seed-16gb")
    assert "until their cells run on the GPU machine (`snakemake --config matrix=ceiling-16gb` and `snakemake " \
        "--config matrix=seed-16gb`)." in said
