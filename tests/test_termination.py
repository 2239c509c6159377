"""A vramlab command ended by SIGTERM (`kill`, a scheduler, Snakemake cancelling a job) ends as on Ctrl-C: the file
it was writing removed, every file before it whole, and one line that says so."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_sigterm_mid_report_leaves_no_temporary_and_says_so(tmp_path):  # t10-175
    shutil.copytree(REPO / "reports" / "smoke", tmp_path / "smoke")
    before = {p.name: p.read_bytes() for p in (tmp_path / "smoke").iterdir()}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "report", "smoke", "--reports-dir", str(tmp_path)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    # ended once it writes: a chart's temporary file appears in the folder
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and \
            not any(".tmp" in p.name for p in (tmp_path / "smoke").iterdir()):
        time.sleep(0.01)
    assert proc.poll() is None, "the report ended before it wrote a file"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip() == "vramlab: terminated (SIGTERM); nothing was left half-written", err
    after = {p.name: p.read_bytes() for p in (tmp_path / "smoke").iterdir()}
    assert not [name for name in after if ".tmp" in name]
    assert set(after) == set(before)
    # each file the one before or one written whole: a chart cut short would end before its format's last mark
    ends = {".png": b"IEND\xaeB`\x82", ".pdf": b"%%EOF\n"}
    for name, data in after.items():
        suffix = "." + name.rsplit(".", 1)[-1]
        assert data and (suffix not in ends or data.rstrip(b"\n").endswith(ends[suffix].rstrip(b"\n"))), name
