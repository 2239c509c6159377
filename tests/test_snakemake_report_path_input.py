"""`snakemake --report FILE` where FILE's folder does not exist or is a regular file: one `vramlab:` line and exit 2
before the workflow runs, rather than Snakemake's 61 lines ending in FileNotFoundError or NotADirectoryError."""

from __future__ import annotations

import pytest

from harness.core.errors import UsageError
from harness.workflow import check_report_path
from tests.refusals import snakemake


@pytest.mark.parametrize(("where", "said"), [
    pytest.param("no/such/r.html", "no/such does not exist; make it first (mkdir -p", id="t11-170-missing-folder"),
    pytest.param("f/r.html", "f is a file, not a folder, so the report cannot go under it", id="t11-177-folder-a-file"),
])
def test_a_report_path_whose_folder_cannot_hold_it_is_refused(tmp_path, where, said):
    (tmp_path / "f").touch()
    with pytest.raises(UsageError, match=said.replace("(", r"\(")):
        check_report_path(["snakemake", "--report", str(tmp_path / where)])
    check_report_path(["snakemake", f"--report={tmp_path / 'r.html'}"])  # a folder that exists: accepted


@pytest.mark.slow
@pytest.mark.parametrize("where", [pytest.param("no/such/r.html", id="t11-170"),
                                   pytest.param("f/r.html", id="t11-177")])
def test_snakemake_report_into_a_folder_that_cannot_hold_it_is_one_line(tmp_path, where):
    (tmp_path / "f").touch()
    done = snakemake(tmp_path, "--cores", "1", "--config", "matrix=smoke", "--report", str(tmp_path / where))
    lines = [line for line in done.stderr.splitlines() if line.startswith("vramlab:")]
    assert done.returncode == 2 and len(lines) == 1 and f"--report {tmp_path / where}: " in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "no").exists()
