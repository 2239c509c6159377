"""Where Snakemake's own HTML report (`snakemake --report FILE`) may be written: never inside a published folder
(results/<matrix>/, reports/<matrix>/), where git would show it among the published files; refused in one line
before anything is read, as every output of a vramlab command there is."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.errors import UsageError
from harness.workflow import check_report_path, report_paths
from tests.checkout_copy import copy_checkout, last_line, snakemake, status


def test_the_report_file_is_read_from_every_spelling_of_the_option():
    assert report_paths(["--report", "a/x.html", "--config", "matrix=smoke"]) == [Path("a/x.html")]
    assert report_paths(["--report=b.zip"]) == [Path("b.zip")]
    assert report_paths(["--report", "--config", "matrix=smoke"]) == [Path("report.html")]  # Snakemake's default
    assert report_paths(["--report-html-path", "c.html"]) == [Path("c.html")]
    assert report_paths(["--config", "matrix=smoke"]) == []


@pytest.mark.parametrize("inside", [pytest.param("reports/smoke", id="t10-185-published-reports"),
                                    pytest.param("results/smoke", id="published-results"),
                                    pytest.param("reports/smoke/sub", id="below-a-published-folder")])
def test_a_report_inside_a_published_folder_is_refused(inside, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ablations").mkdir()  # a checkout, whose results/<m>/ and reports/<m>/ are published
    (tmp_path / inside).mkdir(parents=True)
    with pytest.raises(UsageError, match=rf"--report {inside}/x.html: {inside} lies in {tmp_path}/\w+/smoke/, a folder "
                                         r"of published results or reports; write the HTML report elsewhere"):
        check_report_path(["--report", f"{inside}/x.html"])
    (tmp_path / "reports").mkdir(exist_ok=True)
    check_report_path(["--report", "reports/x.html"])  # beside the published folders: fine
    check_report_path(["--report", "x.html"])


@pytest.mark.slow
def test_snakemake_refuses_a_report_in_a_published_folder_and_writes_nothing(tmp_path):  # t10-185
    clone = copy_checkout(tmp_path / "clone")
    done = snakemake(clone, "--report", "reports/smoke/x.html", "--config", "matrix=smoke")
    assert done.returncode == 2 and "--report reports/smoke/x.html: reports/smoke lies in" in last_line(done), \
        done.stderr[-3000:]
    assert status(clone) == ""
