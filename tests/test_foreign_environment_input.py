"""Environment variables that vramlab reads but does not own, or sets only for its own processes: a hub switch
(HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE, HF_DATASETS_OFFLINE) that is neither on nor off in the libraries' words
would be off without a word, and a device lease that is no lease record would leave a result without its lease.
Each is refused in one line before any command, as vramlab's own variables are."""

from __future__ import annotations

import json

import pytest

from harness import cli
from tests.refusals import refused


@pytest.mark.parametrize("name", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"])
def test_a_hub_switch_that_is_neither_on_nor_off_is_refused(monkeypatch, capsys, name):  # t10-179
    monkeypatch.setenv(name, "maybe")
    refused(["settings"], capsys, f"{name}='maybe': huggingface_hub reads only 1, ON, YES, TRUE as on, so "
                                           f"this would be off (the hub asked); write {name}=1")


@pytest.mark.parametrize("value", ["1", "true", "YES", "0", "off", ""])
def test_the_libraries_words_for_on_and_off_are_accepted(monkeypatch, capsys, value):
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert cli.main(["settings"]) == 0


def test_a_device_lease_that_is_no_lease_record_is_refused(monkeypatch, capsys):  # t10-180
    monkeypatch.setenv("VRAMLAB_DEVICE_LEASE", "garbage")
    refused(["settings"], capsys, "VRAMLAB_DEVICE_LEASE='garbage' is not the lease record (a JSON object) "
                                           "that vramlab's supervisor hands a cell's process")


def test_a_lease_record_as_the_supervisor_hands_it_is_accepted(monkeypatch, capsys):
    monkeypatch.setenv("VRAMLAB_DEVICE_LEASE", json.dumps({"device": "0", "slot": 0}))
    assert cli.main(["settings"]) == 0
