"""How a recorded trial case's replay is judged where the timed signal races the command's own answer."""

from __future__ import annotations

from tests.test_recorded_inputs import lines_said

KILLED = {"commands": "{ timeout -s KILL 2 vramlab compare smoke; echo killed=$?; }", "says": "Killed", "lines": 1}
REPORT = "bash: line 1:  7550 Killed                  timeout -s KILL 2 vramlab compare smoke"
REFUSAL = "vramlab: no reproduction of smoke on vm to compare: results/smoke/reproductions/vm/ holds no result"


def test_the_shells_kill_report_beside_the_commands_answer_is_not_a_line_it_said():
    assert lines_said(KILLED, f"{REFUSAL}\n{REPORT}\n") == [REFUSAL]


def test_the_kill_report_alone_leaves_no_line_of_the_command():
    # where the trial saw the command end first (no line), a slower machine may see it killed: the same answer
    assert lines_said(KILLED, f"{REPORT}\n") == []


def test_a_traceback_before_the_kill_still_counts_every_line():
    traceback = "Traceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'x'\n"
    assert len(lines_said(KILLED, traceback + REPORT)) == 3  # the traceback's, not the shell's


def test_a_case_without_a_timed_signal_counts_every_line():
    plain = {**KILLED, "commands": "vramlab compare smoke"}
    assert lines_said(plain, f"{REFUSAL}\n{REPORT}\n") == [REFUSAL, REPORT]
