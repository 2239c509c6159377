"""Locks on a filesystem without flock (NFS, Lustre without -o flock: flock raises ENOLCK or EOPNOTSUPP): the
result lock and the device lease fall back to POSIX record locks, which still keep a second process out, and where
the filesystem gives no lock at all a command stops in one line that names the folder."""

from __future__ import annotations

import errno
import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.devices import Device
from harness.core.file_locks import LocksUnsupported, try_lock_file
from harness.process.device_lease import device_lease
from harness.results.lock import result_lock
from tests.conftest import REPO


def _refuse(code: int):
    def refused(*args, **kwargs):
        raise OSError(code, "refused by the filesystem")
    return refused


# a second process whose flock fails as the first's does, asking for the same lock without waiting
SECOND = """
import errno, fcntl, sys
from pathlib import Path
def refused(*args, **kwargs):
    raise OSError(errno.{code}, "refused by the filesystem")
fcntl.flock = refused
from harness.core.file_locks import try_lock_file
print("free" if try_lock_file(Path(sys.argv[1])) is not None else "held")
"""


def _second_process_finds(path: Path, code: str) -> str:
    done = subprocess.run([sys.executable, "-c", SECOND.format(code=code), str(path)], capture_output=True,
                          text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("code", ["ENOLCK", "EOPNOTSUPP"])
def test_without_flock_a_held_result_lock_still_keeps_a_second_process_out(tmp_path, monkeypatch, code):
    monkeypatch.setattr(fcntl, "flock", _refuse(getattr(errno, code)))
    out = tmp_path / "results" / "m" / "abcdefabcdef.json"
    with result_lock(out) as waited:
        assert not waited
        lock = out.parent / ".locks" / f"{out.name}.lock"
        assert _second_process_finds(lock, code) == "held"
    assert not lock.exists()  # let go and removed as with flock


def test_without_flock_a_device_lease_is_still_one_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(fcntl, "flock", _refuse(errno.ENOLCK))
    device = Device(entry="0", index=0, key="GPU-0")
    with device_lease([device], folder=tmp_path) as lease:
        assert lease.slot == 0
        assert _second_process_finds(tmp_path / f"{device.file_key}.slot0.lock", "ENOLCK") == "held"
    assert try_lock_file(tmp_path / f"{device.file_key}.slot0.lock") is not None  # free again once let go


def test_a_filesystem_without_any_lock_is_named_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(fcntl, "flock", _refuse(errno.ENOLCK))
    monkeypatch.setattr(fcntl, "lockf", _refuse(errno.ENOLCK))
    with pytest.raises(LocksUnsupported, match=r"its filesystem gives no file locks \(flock: ENOLCK, fcntl record "
                                               r"locks: ENOLCK\)"), result_lock(tmp_path / "m" / "x.json"):
        pass


def test_run_cell_on_a_results_folder_without_locks_stops_in_one_line_and_writes_nothing(tmp_path, monkeypatch,
                                                                                          capsys):
    monkeypatch.setattr(fcntl, "flock", _refuse(errno.EOPNOTSUPP))
    monkeypatch.setattr(fcntl, "lockf", _refuse(errno.EOPNOTSUPP))
    results = tmp_path / "results"
    matrix = tmp_path / "m.yaml"
    matrix.write_text('fixed: {model: "arch:tiny-llama", device: cpu, steps: 1}\naxes: {adapter: [lora]}\n')
    assert main(["run-cell", "--matrix", str(matrix), "--cell", "adapter=lora", "--results-dir", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{results / 'm' / '.locks'}/: its filesystem gives no file locks" in err, err
    assert not [p for p in results.rglob("*") if p.is_file()]  # no result, and no lock file left behind


def test_an_error_flock_does_not_explain_is_not_taken_for_a_missing_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(fcntl, "flock", _refuse(errno.EBADF))
    with pytest.raises(OSError) as raised:
        try_lock_file(tmp_path / "x.lock")
    assert raised.value.errno == errno.EBADF and not isinstance(raised.value, LocksUnsupported)
