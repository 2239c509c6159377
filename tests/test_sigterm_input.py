"""SIGTERM to a vramlab command: it ends as on Ctrl-C, with exit status 143 and one line that says so; files are
written whole or not at all, so it leaves none half-written. In-process callers get their own SIGTERM handler back
when the command returns."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

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


class _RaisesOnCollection:
    """What a signal does when it lands in a weak reference's callback or a __del__: Python cannot raise it there."""

    def __init__(self, signal_exception: type[BaseException]) -> None:
        self.signal_exception = signal_exception

    def __del__(self) -> None:
        raise self.signal_exception


def _runs_on() -> int:
    end = time.monotonic() + 10  # the interrupt delivered again lands here, long before the ten seconds end
    while time.monotonic() < end:
        pass
    return 0


# t10-174 (replayed under load): Ctrl-C to `report --all` landed in a weak reference's callback, Python printed
# "Exception ignored ... KeyboardInterrupt" in five lines and the command ran on to its end
@pytest.mark.parametrize(("raised", "code", "said"), [
    pytest.param(KeyboardInterrupt, 130, "vramlab: interrupted; nothing was left half-written\n", id="t10-174"),
    pytest.param("terminated", 128 + signal.SIGTERM, "vramlab: terminated (SIGTERM); nothing was left half-written\n",
                 id="sigterm"),
])
def test_a_signal_that_lands_where_python_cannot_raise_it_still_ends_the_command(capsys, raised, code, said):
    from harness.core.console import Terminated

    def command() -> int:
        _RaisesOnCollection(Terminated if raised == "terminated" else raised)  # collected at once: __del__ runs
        return _runs_on()

    # as a command starts from a shell: Python's own SIGINT handler (the interrupt delivered again is simulated
    # through it, and does nothing where a test process left SIGINT ignored or at its default)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert run_command(command, end_on_sigterm=True) == code
    finally:
        signal.signal(signal.SIGINT, before)
    assert capsys.readouterr().err == said
