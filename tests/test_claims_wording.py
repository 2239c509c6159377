"""The claims report says what each verdict tests: a claim made with older software is judged "with 2026 software",
a speed claim about another GPU is "not testable here" (and its MFU is the one every report defines), every
ceiling answer has its cost beside it (what it left of the budget, the host memory it used, and the context that
leaves a stated margin), and every claim lists the loss path and versions its cells ran with."""

from __future__ import annotations

import pandas as pd

from harness.report.claims.measured import CeilingAnswer, Measured
from harness.report.claims.model import load
from harness.report.claims.verdict import software_year
from harness.results import CellResult
from tests.conftest import REPO
from tests.test_claims_report import ENV, cell, result

CLAIMS = REPO / "reports" / "claims"


def _table() -> pd.DataFrame:
    return pd.read_csv(CLAIMS / "claims.csv", keep_default_na=False)


def test_a_claim_older_than_the_software_that_measured_it_says_so():
    table = _table()
    sources = {c.id: c.source for c in load().claims}
    for _, row in table.iterrows():
        dated = sources[row["claim"]] == "unsloth-llama3-3"  # December 2024, measured with Unsloth 2026.10.9
        assert ("with 2026 software" in row["verdict"]) == dated, (row["claim"], row["verdict"])


def test_the_software_year_is_read_from_the_dated_library():
    of = cell("claims", "vramfarm-qlora-unsloth-2k")
    dated = CellResult.model_validate({**result(of).model_dump(), "environment": {
        **ENV, "versions": {**ENV["versions"], "unsloth": "2026.10.9"}}})
    assert software_year(Measured(results=[dated])) == 2026
    assert software_year(Measured(results=[result(of)])) is None
    assert software_year(Measured(ceiling=CeilingAnswer(1024, 1024, result=dated))) == 2026


def test_a_speed_claim_about_another_gpu_is_not_testable_here_with_the_reports_mfu():
    speed = _table().set_index("claim").loc["vramfarm-qlora-8b-rtx4090-speed"]
    assert speed["verdict"] == "not testable here"
    cells = pd.read_csv(CLAIMS / "cells.csv").set_index("name")
    mfu = cells.at["vramfarm-qlora-unsloth-speed", "mfu"]
    assert f"MFU {mfu:.1%}" in speed["measured"] and "measured matmul rate" in speed["measured"]
    assert f"{100 * mfu:.1f}" in (CLAIMS / "report.md").read_text()  # the same number in the matrix's report


def test_every_ceiling_answer_has_its_headroom_host_memory_and_a_margin_beside_it():
    table = _table()
    ceilings = table[table["measured_by"].str.contains("ceiling search")]
    assert len(ceilings) >= 12
    for _, row in ceilings.iterrows():
        measured = row["measured"]
        assert "MiB under the" in measured and "GiB budget" in measured, measured
        assert "host memory" in measured and "pinned" in measured, measured
        assert "MiB to spare" in measured or "left 512 MiB" in measured, measured


def test_every_claim_says_the_loss_path_and_versions_its_cells_ran_with():
    text = (CLAIMS / "claims.md").read_text()
    for claim in load().claims:
        section = text.split(f"## `{claim.id}`", 1)[1].split("\n## ", 1)[0]
        assert "The cells ran with: loss path `" in section and "unsloth 2026.10.9" in section, claim.id
