"""The VRAMLAB_* variables: an unknown one, a switch outside 0 and 1, a device listed twice, a commit
that is no commit id; refused in one line by every command and by the workflow.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.core.environment_variables import KNOWN, check_all
from harness.core.errors import UsageError
from tests.conftest import REPO
from tests.refusals import one_line, refused, snakemake, vramlab

MISSPELT = "VRAMLAB_EMULATE_CRAD"  # the trial's misspelling


# 11: every VRAMLAB_* variable is checked
@pytest.mark.slow
@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("VRAMLAB_MAX_CELLS", "abc", "give a whole number of 1 or more"),
    ("VRAMLAB_MAX_CELLS", "0", "give a whole number of 1 or more"),
    ("VRAMLAB_CACHE", "", "is set but empty"),
    ("VRAMLAB_CACHE", "relative", "is relative"),
    ("VRAMLAB_ABLATIONS", "/no/such/folder", "does not exist"),
    ("VRAMLAB_SPARE_IDLE", "soon", "positive number of seconds"),
    ("VRAMLAB_DEVICE_SLOTS", "two", "give a whole number from 1 to 64"),
    ("VRAMLAB_LEASES", "relative", "is relative"),
])
def test_a_bad_environment_variable_is_one_line(tmp_path, variable, value, expected):
    one_line(vramlab("validate", "smoke", cwd=tmp_path, env={variable: value}), f"{variable}")
    one_line(vramlab("validate", "smoke", cwd=tmp_path, env={variable: value}), expected)
    assert list(tmp_path.iterdir()) == []


# E04, E05, E10: a switch is 0 or 1 and VRAMLAB_DEVICES names GPUs, as the README documents; any other value is
# one line naming the variable and what it takes, before any command (and any Snakemake plan) starts
@pytest.mark.parametrize(("name", "value", "expected"), [
    ("VRAMLAB_EMULATE_CARD", "maybe", "write VRAMLAB_EMULATE_CARD=0 to turn it off, or VRAMLAB_EMULATE_CARD=1"),
    ("VRAMLAB_GC_FREEZE", "banana", "write VRAMLAB_GC_FREEZE=0"),
    ("VRAMLAB_BYTECODE_CACHE", "2", "write VRAMLAB_BYTECODE_CACHE=0"),
    ("VRAMLAB_DEVICES", "abc", "'abc' is no GPU; give indices or UUIDs")])
def test_an_environment_switch_outside_its_documented_values_is_refused(monkeypatch, name, value, expected):
    from harness.core.environment_variables import check_all
    from harness.core.errors import UsageError

    monkeypatch.setenv(name, value)
    with pytest.raises(UsageError, match=re.escape(expected)):
        check_all()
    for fine in (["0", "1"] if name != "VRAMLAB_DEVICES" else ["0,1", "", "GPU-6a1c-22f0,MIG-9f3e/1/0"]):
        monkeypatch.setenv(name, fine)
        check_all()


@pytest.mark.slow
def test_snakemake_refuses_a_bad_environment_switch_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", "matrix=smoke"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO), "VRAMLAB_DEVICES": "abc"}, timeout=300)
    said = done.stdout + done.stderr  # Snakemake prints a WorkflowError on stdout
    assert done.returncode != 0 and "vramlab: VRAMLAB_DEVICES='abc': 'abc' is no GPU" in said, said[-3000:]
    assert "Traceback" not in said and not (tmp_path / "results").exists()


# E-unknown-var: a VRAMLAB_* name vramlab does not know is refused, with the name it is near
def test_an_unknown_vramlab_variable_is_refused_with_a_did_you_mean(monkeypatch):
    monkeypatch.setenv(MISSPELT, "0")
    with pytest.raises(UsageError, match=f"{MISSPELT} is set, but vramlab has no such variable; did you mean "
                                         "'VRAMLAB_EMULATE_CARD'"):
        check_all()
    monkeypatch.delenv(MISSPELT)
    monkeypatch.setenv("VRAMLAB_XYZZY", "1")
    with pytest.raises(UsageError, match="vramlab's are VRAMLAB_MAX_CELLS, VRAMLAB_CACHE"):
        check_all()


def test_every_vramlab_variable_the_repository_names_is_known():
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    # the trial reports quote the misspelling they tried, and this file names unknown ones; the scripts of the shared
    # device folder set the cache
    here = Path(__file__).resolve().relative_to(REPO).as_posix()
    paths = [REPO / f for f in files if not f.startswith("tests/bad_input_trials/") and f != here] + \
        sorted((REPO.parent / "shared" / "device").glob("*.sh"))
    names = {m.decode() for p in paths if p.is_file() for m in re.findall(rb"VRAMLAB_[A-Z0-9_]*[A-Z0-9]",
                                                                           p.read_bytes())}
    assert names - KNOWN == set()
    assert "VRAMLAB_EMULATE_CARD" in names and "VRAMLAB_CACHE" in names


@pytest.mark.slow
def test_snakemake_refuses_an_unknown_vramlab_variable_in_one_line(tmp_path):
    done = snakemake(tmp_path, "-n", "--cores", "1", env={MISSPELT: "0"})
    said = done.stdout + done.stderr
    assert done.returncode == 2 and "did you mean 'VRAMLAB_EMULATE_CARD'" in said and "Traceback" not in said, said


# E-devices-dup: a GPU listed twice in VRAMLAB_DEVICES would be two lease slots on one device
@pytest.mark.parametrize("devices", ["0,0", "1, 0,1", "00,0", "GPU-6a1c,GPU-6a1c"])
def test_a_device_listed_twice_is_refused(monkeypatch, devices):
    monkeypatch.setenv("VRAMLAB_DEVICES", devices)
    with pytest.raises(UsageError, match="is listed twice"):
        check_all()
    monkeypatch.setenv("VRAMLAB_DEVICES", "0,1,GPU-6a1c")
    check_all()


# E19: a switch written with a space read as 1 here and would read as a word elsewhere
@pytest.mark.parametrize("value", [" 1", "0 ", "1\n"])
def test_a_switch_is_exactly_0_or_1(monkeypatch, capsys, value):
    monkeypatch.setenv("VRAMLAB_EMULATE_CARD", value)
    refused(["validate", "smoke"], capsys, "write VRAMLAB_EMULATE_CARD=0 to turn it off")


# E29: any text in VRAMLAB_GIT_COMMIT became a result's commit
def test_a_git_commit_that_is_no_commit_id_is_refused(monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_GIT_COMMIT", "not a commit; rm -rf /")
    refused(["validate", "smoke"], capsys, "VRAMLAB_GIT_COMMIT='not a commit; rm -rf /' is no commit id")
    monkeypatch.setenv("VRAMLAB_GIT_COMMIT", "233b9b1")
    assert cli.main(["validate", "smoke"]) == 0


@pytest.fixture
def git_checkout(tmp_path: Path) -> Path:
    """A checkout's shape under git: ablations/, results/, docs/, and a .gitignore naming exports/ as vramlab's."""
    for folder in ("ablations", "results/smoke", "docs"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("/exports/\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


# t14-039, t14-042: a cache at the checkout's root or in its docs/ wrote arch/ and bytecode/ (hundreds of files)
# into the repository, untracked, where one inside results/ was refused already; leases there would do the same
@pytest.mark.parametrize(("name", "inside", "fix"), [
    pytest.param("VRAMLAB_CACHE", ".", "give a cache folder outside it", id="t14-039"),
    pytest.param("VRAMLAB_CACHE", "docs", "give a cache folder outside it", id="t14-042"),
    pytest.param("VRAMLAB_LEASES", "docs/leases", "give a leases folder outside it", id="leases"),
])
def test_a_folder_of_vramlabs_own_inside_the_checkout_is_refused(git_checkout, monkeypatch, capsys, name, inside,
                                                                 fix):
    monkeypatch.setenv(name, str((git_checkout / inside).resolve()))
    refused(["prepare-model", "arch:tiny-llama"], capsys,
            f"lies in {git_checkout}/, a checkout of vramlab, in a folder its .gitignore does not name; {fix}")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=git_checkout,
                            capture_output=True, text=True, check=True).stdout
    assert status.split() == ["??", ".gitignore"]


def test_a_cache_in_a_folder_the_checkout_ignores_is_taken(git_checkout, monkeypatch):
    monkeypatch.setenv("VRAMLAB_CACHE", str(git_checkout / "exports" / "cache"))  # not made yet, ignored all the same
    check_all()


# t20-030: with VRAMLAB_ABLATIONS holding a smoke.yaml of its own, `default-matrix` said "the CPU smoke matrix runs",
# where validate and Snakemake refuse that file; it answers for the file the name finds, as they do
def test_default_matrix_refuses_the_matrix_file_snakemake_would_refuse(tmp_path, capsys, monkeypatch):
    (tmp_path / "smoke.yaml").write_text("description: x\nfixed: [\n")
    monkeypatch.setenv("VRAMLAB_ABLATIONS", str(tmp_path))
    refused(["default-matrix"], capsys, f"{tmp_path / 'smoke.yaml'}: a matrix named 'smoke' ships with vramlab")
