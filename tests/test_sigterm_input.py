"""SIGTERM to a vramlab command: it ends as on Ctrl-C, with exit status 143 and one line that says so; files are
written whole or not at all, so it leaves none half-written. In-process callers get their own SIGTERM handler back
when the command returns."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from harness.core.console import run_command
from tests.conftest import REPO

WAITS = ("import sys, time\nfrom harness.core.console import run_command\n"
         "sys.exit(run_command(lambda: (print('ready', flush=True), time.sleep(60), 0)[-1], end_on_sigterm=True))\n")


@pytest.mark.slow
def test_sigterm_ends_a_command_by_the_signal_with_one_line():  # t11-156
    proc = subprocess.Popen([sys.executable, "-c", WAITS], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err == "vramlab: terminated (SIGTERM); nothing was left half-written\n"


def test_the_callers_sigterm_handler_is_put_back():
    def mine(signum, frame):
        raise AssertionError("not called here")

    before = signal.signal(signal.SIGTERM, mine)
    try:
        assert run_command(lambda: 0, end_on_sigterm=True) == 0
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)
