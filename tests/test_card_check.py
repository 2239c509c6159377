"""The real-card check (`vramlab card-check`, harness/report/card_check.py) on a machine without a GPU: its plan is
read from the committed results (a cell and two ceiling boundaries, each with a published emulated result of the
same settings), a dry run says what it would compare, a machine without a 16 GB card is refused in one line (a fake
RTX 4080 passes, a fake 24 GB card does not), and a real card's results are compared with the emulated ones in a
file to contribute back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from harness.cli import main
from harness.core.errors import UsageError
from harness.report import card_check
from harness.results import read
from tests.conftest import REPO

RESULTS = REPO / "results"


def test_the_plan_is_a_cell_and_two_published_boundaries_each_with_its_emulated_result():
    checks = card_check.plan(RESULTS)
    assert len(checks) == 5
    plain, *probes = checks
    assert plain.matrix == "card-check" and plain.reference == RESULTS / "claims" / f"{plain.cell_id}.json"
    # each boundary: the search's published answer (fits) and the next probe up (did not)
    assert [(c.matrix, c.context, read(c.reference).status.value) for c in probes] == [
        ("ceiling-16gb", 55296, "ok"), ("ceiling-16gb", 56320, "oom"),
        ("claims-context", 16384, "ok"), ("claims-context", 17408, "oom")]
    for check in checks:  # the same settings as the emulated result: the same cell id
        assert read(check.reference).cell_id == check.cell_id
        assert read(check.reference).budget.limit_bytes <= 16 * 2**30  # measured under a 16 GB card's memory


def test_a_dry_run_says_what_it_would_run_and_compare(capsys):
    assert main(["card-check", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "runs 5 measurements" in out and "memory judged across the devices" in out
    assert "at 56,320 tokens (one probe past it): emulated oom" in out


def _fake_card(monkeypatch, name: str, total_mib: int) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda device=None: SimpleNamespace(name=name, total_memory=total_mib * 2**20))


def test_a_machine_without_a_16_gb_card_is_refused_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["card-check"]) == 2
    assert "no CUDA GPU here" in capsys.readouterr().err
    _fake_card(monkeypatch, "NVIDIA GeForce RTX 4090", 24564)
    with pytest.raises(UsageError, match="not a 16 GB card"):
        card_check.sixteen_gb_card()
    _fake_card(monkeypatch, "NVIDIA GeForce RTX 4080", 16376)
    assert card_check.sixteen_gb_card() == "NVIDIA GeForce RTX 4080"
    _fake_card(monkeypatch, "NVIDIA GeForce RTX 4060 Ti", 16380)
    assert card_check.sixteen_gb_card() == "NVIDIA GeForce RTX 4060 Ti"


def _as_measured_on_a_real_card(check: card_check.Check, results: Path, status: str | None = None,
                                peak_ratio: float = 1.02) -> None:
    """What the check's run leaves for one measurement: its result file, on the real card."""
    data = json.loads(check.reference.read_text())
    data["environment"]["gpu"] = "NVIDIA GeForce RTX 4080"
    data["environment"]["gpu_memory_bytes"] = 16376 * 2**20
    data["metrics"]["peak_device_bytes"] = int(data["metrics"]["peak_device_bytes"] * peak_ratio)
    if data["budget"] is not None:
        data["budget"]["card_emulation"] = None  # the real card: nothing emulated
    data["status"] = status or data["status"]
    if data["status"] == "ok" and data["budget"] is not None:  # it fitted: its peak within the budget
        data["metrics"]["peak_device_bytes"] = min(data["metrics"]["peak_device_bytes"], data["budget"]["limit_bytes"])
    out = card_check.out_path(results, "my-4080", check)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data))


def test_the_real_cards_results_are_set_beside_the_emulated_ones_in_a_file_to_contribute(tmp_path):
    checks = card_check.plan(RESULTS)
    results = tmp_path / "results"
    with pytest.raises(UsageError, match="5 measurements have no result on my-4080"):
        card_check.write(checks, results, tmp_path / "reports", "my-4080")
    for i, check in enumerate(checks):
        # the last boundary: the probe past it fits on the real card, where the emulation said it did not
        _as_measured_on_a_real_card(check, results, status="ok" if i == 4 else None)
    path = card_check.write(checks, results, tmp_path / "reports", "my-4080")
    text = path.read_text()
    assert path == tmp_path / "reports" / "card-check" / "my-4080" / "comparison.md"
    assert "4 of 5 cells within the tolerances" in text and "Real card: NVIDIA GeForce RTX 4080" in text
    assert "status ok, published oom" in text and "×1.020" in text
    assert "memory (published" not in text  # memory judged although the devices differ: the check's question
    assert (path.parent / "comparison.csv").is_file() and "To contribute them" in text
    shutil.rmtree(results)
