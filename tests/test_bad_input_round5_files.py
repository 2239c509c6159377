"""Bad input, fifth round (tests/bad_input_trials/round5.md), its cases of files, folders, the environment and the
workflow: each is one line naming what is wrong (and the path), a non-zero exit, and nothing written or left
behind. A full disk is simulated by making a write fail as a full disk fails it (tests run unprivileged), a
read-only folder by what access(2) answers. Tests that run vramlab or Snakemake in a child process are slow."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from harness import cli
from harness.core.atomic_files import write_text_atomic, writer_host
from harness.core.console import run_command
from harness.core.environment_variables import KNOWN, check_all
from harness.core.errors import UsageError
from harness.results import ResultFileError, check, store
from harness.results.lock import lock_path, result_lock
from harness.workflow import check_writable
from tests.conftest import REPO, copy_repository_files, run_vramlab
from tests.test_bad_input_round2 import _files

TINY = """fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0}
axes: {adapter: [lora, rslora]}
"""
MISSPELT = "VRAMLAB_EMULATE_CRAD"  # the trial's misspelling


def _matrix(tmp_path: Path, name: str = "ok") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(TINY)
    return path


def _full_disk(*_args: object, **_kwargs: object) -> None:
    """What a write, a flush or an fsync raises on a full file system: an OSError that names no file."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def _snakemake(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


# F-runcell-fulldisk: the full disk is said with the file it concerns, and the cell's lock and the folders the
# command made go with the failure
def test_run_cell_on_a_full_disk_names_the_file_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(os, "pwrite", _full_disk)
    results = tmp_path / "results"
    code = cli.main(["run-cell", "--matrix", str(_matrix(tmp_path)), "--cell", "dca0c19d53c5", "--results-dir",
                     str(results)])
    said = _said(capsys)
    assert code == 2 and f"{results}/ok/.locks/dca0c19d53c5.json.lock: No space left on device" in said, said
    assert not results.exists()


# D-reportall-out-full: the same for a report rebuilt into a folder on a full disk: no empty folder stays
def test_report_all_on_a_full_disk_names_the_file_and_leaves_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(os, "fsync", _full_disk)
    out = tmp_path / "rep"
    code = cli.main(["report", "--all", "--out", str(out), "--results-dir", str(REPO / "results"),
                     "--reports-dir", str(REPO / "reports")])
    said = _said(capsys)
    assert code == 2 and re.search(rf"vramlab: {out}/\S+: No space left on device; free some space", said), said
    assert not out.exists()


# the class: an OSError of standard output (a full disk under a redirection) names it too
def test_output_that_cannot_be_written_is_named(monkeypatch, capsys):
    class FullDisk:
        write = flush = staticmethod(_full_disk)

    monkeypatch.setattr(sys, "stdout", FullDisk())
    assert run_command(lambda: print("a table") or 0) == 2
    assert "vramlab: standard output" in _said(capsys)


def test_a_result_lock_is_removed_on_every_exit_but_a_kill(tmp_path):
    out = tmp_path / "m" / "abc.json"
    with result_lock(out) as waited:
        assert not waited and lock_path(out).is_file()
    assert not lock_path(out).parent.exists()
    with pytest.raises(RuntimeError), result_lock(out):
        raise RuntimeError("the cell failed")
    assert not lock_path(out).exists()


def test_a_waiter_takes_the_lock_of_a_holder_that_removed_its_file(tmp_path):
    out = tmp_path / "m" / "abc.json"
    held, release, order = threading.Event(), threading.Event(), []

    def first() -> None:
        with result_lock(out):
            held.set()
            release.wait(10)
            order.append("first")

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(10)
    # flock locks are per open file, so a second one in this process waits as another process would
    with result_lock(out, waiting=lambda *_: release.set()) as waited:
        order.append("second")
        assert waited and lock_path(out).is_file()  # the file there now, not the one the first removed
    thread.join(10)
    assert order == ["first", "second"] and not lock_path(out).exists()


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
    done = _snakemake(tmp_path, "-n", "--cores", "1", env={MISSPELT: "0"})
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


# S-target-bogus: a target that is no rule runs nothing, so nothing is said of a run
@pytest.mark.slow
def test_a_target_that_is_no_rule_gets_no_word_of_a_run(tmp_path):
    done = _snakemake(tmp_path, "-n", "--cores", "1", "nosuch_target", "--config", f"matrix={_matrix(tmp_path)}")
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "No rule to produce nosuch_target" in said and "vramlab:" not in said, said
    done = _snakemake(tmp_path, "-n", "--cores", "1", "--config", f"matrix={_matrix(tmp_path)}")
    assert done.returncode == 0 and "vramlab: matrix 'ok'" in done.stderr, done.stderr[-3000:]


# S-reports-ro-real: a folder nothing can be written to is refused before any job (a dry run too)
@pytest.mark.parametrize("key", ["results_dir", "reports_dir"])
def test_a_folder_that_cannot_be_written_is_refused_before_any_job(tmp_path, monkeypatch, key):
    locked = tmp_path / "ro"
    locked.mkdir()
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: access(path, mode) and not str(path).startswith(str(locked)))
    with pytest.raises(UsageError, match=f"--config {key}={locked}/sub: {locked} cannot be written"):
        check_writable({key: str(locked / "sub")}, "ok")
    check_writable({key: str(tmp_path / "rw")}, "ok")


@pytest.mark.slow
def test_snakemake_refuses_a_read_only_reports_folder_in_one_line(tmp_path):
    locked = tmp_path / "ro"
    locked.mkdir()
    # the child's os.access answers for `locked` as on a read-only file system (sitecustomize runs at its start)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        f"import os\n_access = os.access\nos.access = lambda p, m, **k: _access(p, m, **k) and not "
        f"str(p).startswith({str(locked)!r})\n")
    done = _snakemake(tmp_path, "-n", "--cores", "1", "--config", f"matrix={_matrix(tmp_path)}",
                      f"reports_dir={locked}", env={"PYTHONPATH": f"{tmp_path / 'site'}:{REPO}"})
    said = done.stdout + done.stderr
    assert done.returncode == 2 and f"vramlab: --config reports_dir={locked}: {locked} cannot be written" in said, \
        said[-3000:]
    assert not (tmp_path / "results").exists()


# D-migrate-othercell: migrate says of another cell's result what check and aggregate say, and leaves it as it is
def test_migrate_names_another_cells_result_and_changes_nothing(tmp_path, capsys):
    folder = tmp_path / "smoke"
    folder.mkdir()
    copy = folder / "d9946bcf27e9.json"
    copy.write_bytes((REPO / "results" / "smoke" / "c5338522d7ed.json").read_bytes())
    before = copy.read_bytes()
    assert cli.main(["migrate", str(copy)]) == 1
    said = _said(capsys)
    assert f"not migrated: {copy}: cell_id/task: the file of this result would be named c5338522d7ed.json" in said
    assert copy.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == [copy.name]


# D-check-devzero, D-check-fifo: what is no regular file once its links are followed is refused before it is read
# (a FIFO would block, /dev/zero never ends); run in a child whose memory is capped, in case it reads
@pytest.mark.slow
def test_check_refuses_a_device_and_a_named_pipe_unread(tmp_path, cache_dir):
    zero, fifo = tmp_path / "zero.json", tmp_path / "fifo.json"
    zero.symlink_to("/dev/zero")
    os.mkfifo(fifo)
    done = run_vramlab("check", str(zero), str(fifo), cwd=tmp_path, cache=cache_dir, timeout=120,
                       address_space=4 << 30)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert (f"vramlab check: {zero}: a character device (a symlink to /dev/zero), not a file, so it is not a "
            "result") in done.stderr
    assert f"vramlab check: {fifo}: a FIFO (a named pipe), not a file, so it is not a result" in done.stderr


def test_a_result_file_is_read_no_further_than_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "c5338522d7ed.json"
    path.write_bytes((REPO / "results" / "smoke" / "c5338522d7ed.json").read_bytes())
    monkeypatch.setattr(store, "MAX_RESULT_BYTES", 100)
    real = os.fstat
    # a file whose size is not what it reads (a device, a file growing): only what is read counts
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((*real(fd)[:6], 0, *real(fd)[7:])))
    with pytest.raises(ResultFileError, match="more bytes than the limit"):
        check(path)


# D-report-truncated-csv, D-report-csv-is-dir: a damaged table, or a folder in its place, is said as what it is
@pytest.mark.parametrize(("damage", "expected"), [
    (lambda p: p.write_bytes(p.read_bytes()[:500]), "damaged, not a table vramlab wrote (it ends inside a line"),
    (lambda p: p.write_bytes(p.read_bytes().split(b"\n")[0] + b"\n"), "damaged, not a table vramlab wrote (a header"),
    (lambda p: (p.unlink(), p.mkdir()), "cells.csv is a folder, in the place of a table vramlab writes; move it away"),
], ids=["cut-in-its-header", "a-header-only", "a-folder"])
def test_report_on_a_damaged_table_says_what_is_wrong_and_writes_nothing(tmp_path, capsys, damage, expected):
    reports = tmp_path / "reports"
    copy_repository_files(REPO / "reports" / "smoke", reports / "smoke")
    damage(reports / "smoke" / "cells.csv")
    before = {p: p.read_bytes() for p in (reports / "smoke").iterdir() if p.is_file()}
    assert cli.main(["report", "smoke", "--reports-dir", str(reports)]) == 2
    assert expected in _said(capsys)
    assert {p: p.read_bytes() for p in (reports / "smoke").iterdir() if p.is_file()} == before


def test_aggregate_names_a_folder_in_the_place_of_its_table(tmp_path, capsys):
    (tmp_path / "reports" / "smoke" / "cells.csv").mkdir(parents=True)
    code = cli.main(["aggregate", "smoke", "--results-dir", str(REPO / "results"), "--reports-dir",
                     str(tmp_path / "reports")])
    said = _said(capsys)
    assert code == 2 and f"{tmp_path}/reports/smoke/cells.csv: a folder is in the place of this file" in said, said
    assert [p.name for p in (tmp_path / "reports" / "smoke").iterdir()] == ["cells.csv"]


# I-kill9-report-inplace: a temporary file whose writer was killed is removed by the next write into its folder;
# one of a live writer (this host's, or another host's on a shared folder) is never touched, and git ignores them
def test_a_killed_writers_temporary_file_goes_with_the_next_write(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no process has now
    host = writer_host()
    stale = tmp_path / f".deltas.{host}-{gone.pid}-f__aph_a.tmp.pdf"
    live = tmp_path / f".deltas.{host}-{os.getpid()}-adgpfgxf.tmp.pdf"
    elsewhere = tmp_path / f".deltas.otherhost-{gone.pid}-adgpfgxf.tmp.pdf"
    for path in (stale, live, elsewhere):
        path.write_bytes(b"half a chart")
    write_text_atomic(tmp_path / "report.md", "# a report\n")
    assert not stale.exists() and live.exists() and elsewhere.exists()
    names = [f"reports/smoke/{stale.name}", f"results/smoke/{live.name}"]
    ignored = subprocess.run(["git", "check-ignore", *names], cwd=REPO, capture_output=True, text=True)
    assert ignored.stdout.split() == names


def test_the_next_report_removes_what_a_killed_one_left(tmp_path, capsys):
    reports = tmp_path / "reports"
    copy_repository_files(REPO / "reports" / "smoke", reports / "smoke")
    gone = subprocess.Popen(["true"])
    gone.wait()
    host = writer_host()
    stale = reports / "smoke" / f".deltas-column.{host}-{gone.pid}-adgpfgxf.tmp.pdf"
    stale.write_bytes(b"")
    assert cli.main(["report", "smoke", "--reports-dir", str(reports)]) == 0
    assert not stale.exists()
    committed = copy_repository_files(REPO / "reports" / "smoke", tmp_path / "committed")
    assert _files(reports / "smoke") == _files(committed)


# I-sigint-snakemake: Snakemake's own tracebacks at a second SIGINT are said where interruptions are
def test_the_docs_say_what_a_second_sigint_prints():
    text = " ".join((REPO / "docs" / "resuming.md").read_text().split())
    assert "a second SIGINT while Snakemake waits for its jobs to end" in text
    assert "makes Snakemake print tracebacks of its own executor" in text
