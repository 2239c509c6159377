"""A claim's verdict where its inputs are incomplete: a result that records a library as not installed (null in
`environment.versions`), and a max_context claim, which only a ceiling search's answer can measure."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.report.claims.measured import Measured
from harness.report.claims.model import Published, load
from harness.report.claims.verdict import software_year
from harness.results import CellResult
from tests.test_claims_report import ENV, cell, result


def _with_unsloth(version: str | None) -> CellResult:
    of = cell("claims", "vramfarm-qlora-unsloth-2k")
    return CellResult.model_validate({**result(of).model_dump(), "environment": {
        **ENV, "versions": {**ENV["versions"], "unsloth": version}}})


def test_a_library_recorded_as_not_installed_dates_no_software():
    assert software_year(Measured(results=[_with_unsloth(None)])) is None
    assert software_year(Measured(results=[_with_unsloth(None), _with_unsloth("2026.10.9")])) == 2026


def test_a_max_context_claim_read_by_cells_is_refused_when_read():
    published = load().model_dump()
    claim = next(c for c in published["claims"] if c["kind"] == "max_context")
    by_cells = {**claim["readings"][0], "ceiling": None, "cells": ["vramfarm-qlora-unsloth-2k"]}
    with pytest.raises(ValidationError, match=f"{claim['id']}: a max_context claim is read by a ceiling search"):
        Published.model_validate({**published, "claims": [{**claim, "readings": [by_cells]}]})
