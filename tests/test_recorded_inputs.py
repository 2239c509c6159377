"""Bad inputs recorded by the trials keep their clear answers. Each `clear` case of a trial's log
(tests/bad_input_trials/round*.jsonl) runs its recorded commands with bash in a copy of this checkout, as the trial ran
them from a fresh clone's root, and must still give what the trial saw:

- `exit`: the exit status of the commands as bash returns it (a case ending in `echo rc=$?` exits 0 and says its
  command's own status in `prints`);
- `says`: a piece of the line the user sees: on stderr, or on stdout when `lines` is 0 (stderr stays empty);
- `lines`: the most lines stderr may hold (1 for a refusal; in a timed-signal case bash's report of the kill is not
  counted); null where stderr holds a Python traceback, whose length is the call stack's, not the case's (its last
  line is in `says`);
- `prints` (optional): a piece stdout must hold;
- `leaves`: "clean" (tracked files unchanged, nothing untracked) or {"untracked": [paths the case may add]};
- `without_gpu` (optional): the case asks for a CUDA GPU and records the answer where there is none;
- `slow`: its replay takes over about 2 s. Every case runs in the slow tier all the same: each starts Python (about
  1 s of CPU), and the 101 quick ones tripled the fast tier.

Temporary files go under the test's own folder (TMPDIR), the model cache is the suite's, and after each case the
copy is put back (tracked files restored, anything untracked or ignored but bytecode removed) for the next."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout_copy import copy_checkout, environment, git, status

TRIALS = Path(__file__).resolve().parent / "bad_input_trials"
pytestmark = pytest.mark.slow


def clear_cases() -> list:
    cases = []
    for log in sorted(TRIALS.glob("round*.jsonl")):
        for line in log.read_text().splitlines():
            case = json.loads(line)
            if case["class"] == "clear":
                cases.append(pytest.param(case, id=case["id"], marks=[pytest.mark.slow] if case["slow"] else []))
    return cases


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("recorded") / "clone")


def replay(case: dict, clone: Path, cache: Path, temporary: Path) -> subprocess.CompletedProcess:
    """The case's commands as the trial ran them: bash in the checkout's root, the venv's python and snakemake first
    on PATH, and no VRAMLAB_ setting of the environment the tests run in."""
    env = environment(clone, TMPDIR=str(temporary),
                      PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env = {**{k: v for k, v in env.items() if not k.startswith("VRAMLAB_")}, "VRAMLAB_CACHE": str(cache)}
    return subprocess.run(["bash", "-c", case["commands"]], cwd=clone, env=env, capture_output=True, text=True,
                          errors="replace", timeout=300)


# a signal sent a fixed time in (`timeout -s INT 2 ...`, `sleep 1; kill ...`), and the status the case echoes after it
TIMED_SIGNAL = re.compile(r"timeout -s \w+ [\d.]+ |sleep [\d.]+; kill ")
SIGNAL_ANSWERS = ("interrupted; nothing was left half-written", "terminated (SIGTERM); nothing was left half-written")
ECHOED_STATUS = re.compile(r"\b(rc|first|killed)=(\d+)")
# bash's own report of a job a signal ended: not a line the command said
SHELL_KILL_REPORT = re.compile(r"^bash: line \d+: +\d+ (Killed|Terminated|Interrupt)\b")


def signal_came_too_late(case: dict, done: subprocess.CompletedProcess) -> bool:
    """Whether the command of a timed-signal case ended on its own before the signal: where the trial saw it cut short
    (an echoed status of 124, 130, 137 or 143), this machine finished it first, and the answer to the signal is not
    on trial."""
    if not TIMED_SIGNAL.search(case["commands"]):
        return False
    if any(answer in case["says"] for answer in SIGNAL_ANSWERS) and not done.stderr.strip():
        return True  # ended with its work done, or as the signal came in its exit (`timeout` says 124 all the same)
    cut_short = {"124", "130", "137", "143"}
    if str(case["exit"]) in cut_short and done.returncode == 0:
        return True
    observed = case.get("observed")  # the early rounds kept what the trial saw as one text
    recorded = dict(ECHOED_STATUS.findall(observed.get("stdout", "") if isinstance(observed, dict) else str(observed)))
    seen = dict(ECHOED_STATUS.findall(done.stdout))
    # the trial saw the signal cut it short; here it ended with a status of its own (0, or a refusal's 2)
    return any(recorded.get(key) in cut_short and seen.get(key, "124") not in cut_short for key in recorded)


def lines_said(case: dict, stderr: str) -> list[str]:
    """The lines stderr holds, less the shell's report of the kill in a timed-signal case: the signal races the
    command (it answers just before, or is cut short just after), and the shell's line is not the command's."""
    said = [line for line in stderr.splitlines() if line.strip()]
    if not TIMED_SIGNAL.search(case["commands"]):
        return said
    return [line for line in said if not SHELL_KILL_REPORT.match(line)]


def restore(clone: Path) -> None:
    # ignored files go too (Snakemake's records in .snakemake/, exports/, logs), or one case's leftovers would change
    # the next one's answer; bytecode stays, so that each case does not compile the harness again
    git("checkout", "--", ".", cwd=clone)
    git("clean", "-fdqx", "-e", "__pycache__", cwd=clone)


@pytest.mark.parametrize("case", clear_cases())
def test_a_recorded_bad_input_keeps_its_clear_answer(case, clone, cache_dir, tmp_path):
    if case.get("without_gpu"):
        import torch

        if torch.cuda.is_available():
            pytest.skip("the case records the answer on a machine without a CUDA GPU")
    try:
        done = replay(case, clone, cache_dir, tmp_path)
        if signal_came_too_late(case, done):
            pytest.skip("the command ended before the timed signal reached it: the race the case records did not "
                        "happen on this machine")
        seen = f"exit {done.returncode}\nstderr:\n{done.stderr[-3000:]}\nstdout:\n{done.stdout[-2000:]}"
        assert done.returncode == case["exit"], seen
        said = lines_said(case, done.stderr)
        assert case["lines"] is None or len(said) <= case["lines"], seen
        assert case["says"] in (done.stderr if case["lines"] != 0 else done.stdout), seen
        assert case.get("prints", "") in done.stdout, seen
        allowed = set() if case["leaves"] == "clean" else {f"?? {path}" for path in case["leaves"]["untracked"]}
        assert set(status(clone).splitlines()) <= allowed, status(clone)
    finally:
        restore(clone)
