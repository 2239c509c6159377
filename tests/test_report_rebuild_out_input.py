"""`vramlab report --all --out` naming the reports folder it is meant to spare (the default one spelled out, or
--reports-dir by another path): refused in one line before any report is rebuilt."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.refusals import refused


@pytest.mark.parametrize("out", [pytest.param("reports", id="t11-079"), pytest.param("./reports/", id="another-path")])
def test_report_all_refuses_an_out_that_is_the_reports_folder(capsys, monkeypatch, out):
    monkeypatch.chdir(REPO)
    before = sorted(p.stat().st_mtime_ns for p in (REPO / "reports").rglob("*.csv"))
    refused(["report", "--all", "--out", out], capsys, f"--out {out} is the reports folder itself (--reports-dir "
                                                      "reports), which --out is to spare; leave --out out")
    assert sorted(p.stat().st_mtime_ns for p in (REPO / "reports").rglob("*.csv")) == before
