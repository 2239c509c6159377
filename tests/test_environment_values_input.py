"""VRAMLAB_* values checked before every command, also one that does not read them: a cell's time limit, the files
vramlab sets itself for a cell's process, the leases folder, and an empty device list (allowed, and told)."""

from __future__ import annotations

import re

import pytest

from harness.core.console import run_command
from harness.core.environment_variables import check_all, notes
from harness.core.errors import UsageError


@pytest.mark.parametrize(("name", "value", "expected"), [
    pytest.param("VRAMLAB_TIME_LIMIT", "abc", "VRAMLAB_TIME_LIMIT: expected seconds, got 'abc'; give a number of "
                 "seconds", id="t11-127"),
    pytest.param("VRAMLAB_TIME_LIMIT", "0", "at least 1", id="time-limit-zero"),
    pytest.param("VRAMLAB_STATUS_FILE", "{tmp}", "is a folder; it is the status file", id="t11-135"),
    pytest.param("VRAMLAB_MEMORY_HISTORY", "x", "is relative; it is the memory snapshot", id="t11-139"),
    pytest.param("VRAMLAB_LEASES", "/no-such-folder-vramlab/dir", "its folder /no-such-folder-vramlab does not exist",
                 id="t11-133-parent")])
def test_a_value_no_command_could_use_is_refused_before_any_command(monkeypatch, tmp_path, name, value, expected):
    monkeypatch.setenv(name, value.format(tmp=tmp_path))
    with pytest.raises(UsageError, match=re.escape(expected)):
        check_all()


@pytest.mark.parametrize(("name", "value"), [("VRAMLAB_TIME_LIMIT", "90"), ("VRAMLAB_STATUS_FILE", "{tmp}/s.json"),
                                             ("VRAMLAB_MEMORY_HISTORY", "{tmp}/h.pickle"),
                                             ("VRAMLAB_LEASES", "{tmp}/leases")])
def test_the_values_vramlab_itself_sets_are_accepted(monkeypatch, tmp_path, name, value):
    monkeypatch.setenv(name, value.format(tmp=tmp_path))
    check_all()


def test_a_refused_value_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_TIME_LIMIT", "abc")
    assert run_command(lambda: 0) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.startswith("vramlab: VRAMLAB_TIME_LIMIT: expected seconds")


# t11-134: empty is documented (docs/gpu.md) as leasing off; t11-133: a leases folder not made yet is made later
def test_an_empty_device_list_and_a_new_leases_folder_are_told_on_every_command(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("VRAMLAB_LEASES", raising=False)
    monkeypatch.delenv("VRAMLAB_DEVICES", raising=False)
    assert notes() == []
    monkeypatch.setenv("VRAMLAB_DEVICES", "")
    monkeypatch.setenv("VRAMLAB_LEASES", str(tmp_path / "leases"))
    assert run_command(lambda: 0) == 0
    said = capsys.readouterr().err.splitlines()
    assert said == [f"vramlab: VRAMLAB_LEASES={tmp_path / 'leases'} does not exist yet: it is made at the first "
                    "device lease, and runs that name another folder do not see these leases",
                    "vramlab: VRAMLAB_DEVICES is set but empty, which turns device leasing off: cells on a GPU do not "
                    "wait for one another (unset it to lease every GPU of this machine)"]
    (tmp_path / "leases").mkdir()
    monkeypatch.setenv("VRAMLAB_DEVICES", "0")
    assert notes() == []
