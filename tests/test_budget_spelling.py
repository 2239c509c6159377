"""One budget, one cell: every spelling of a size (or of a card without a reserve) makes the same cell id, the
spelling committed results use keeps theirs, and `vramlab migrate` moves a result of another spelling."""

from __future__ import annotations

import json
import shutil

import pytest

from harness.core.budget import budget_problem, canonical_budget
from harness.results import read
from harness.results.budget_spelling import respell, respelled_config
from harness.spec.cells import cell_id_of
from harness.spec.matrix import expand_spec
from harness.spec.settings import defaults
from tests.conftest import REPO, repository_files, run_vramlab


def cell(budget, **more):
    return expand_spec("m", {"design": "list", "cells": [{"name": "a", "budget": budget, **more}]}, source="t")[0]


@pytest.mark.parametrize("spelling", ["16GiB", "16384MiB", "16 GiB", 17179869184, "17179869184", "16777216KiB",
                                      "0.015625TiB"])
def test_every_spelling_of_16_gib_is_the_cell_16gib_is(spelling):
    assert cell(spelling).cell_id == cell("16GiB").cell_id == cell_id_of(defaults())
    assert cell(spelling).settings["budget"] == "16GiB"


def test_other_sizes_are_written_in_the_largest_unit_that_holds_them_whole():
    assert canonical_budget("0.5GiB") == "512MiB" and canonical_budget("1024GiB") == "1TiB"
    assert canonical_budget(8_000_000_000) == "7812500KiB"  # 8 GB read as decimal
    assert canonical_budget("15.5GiB") == canonical_budget("15872MiB") == "15872MiB"
    assert cell("15.5GiB").cell_id == cell("15872MiB").cell_id != cell("16GiB").cell_id


def test_a_card_with_no_display_reserve_is_allowed_and_is_the_card():
    assert budget_problem({"card": "rtx4080", "display_reserve": "0GiB"}) is None
    assert budget_problem({"card": "rtx4080", "display_reserve": 0}) is None
    assert cell({"card": "rtx4080", "display_reserve": "0GiB"}).cell_id == cell("rtx4080").cell_id
    reserved = [cell({"card": "rtx4080", "display_reserve": r}) for r in ("0.5GiB", "512MiB", 536870912)]
    assert len({c.cell_id for c in reserved}) == 1
    assert reserved[0].settings["budget"] == {"card": "rtx4080", "display_reserve": "512MiB"}


def test_what_is_no_budget_is_still_refused():
    assert "has no unit" in budget_problem("16")  # 16 bytes is no budget: GiB were meant
    assert "decimal units" in budget_problem("16GB")
    assert "less than 1 MiB" in budget_problem("0GiB")
    assert "leaves nothing" in budget_problem({"card": "rtx4080", "display_reserve": "15942MiB"})


def test_host_budgets_have_one_spelling_too_and_none_stays_out_of_the_id():
    assert cell("16GiB", host_budget="32768MiB").cell_id == cell("16GiB", host_budget="32GiB").cell_id
    assert cell("16GiB", host_budget="none").cell_id == cell_id_of(defaults())


def test_no_committed_result_changes_its_id():
    """results/ holds GPU measurements keyed by cell id: the spellings they were made with are canonical."""
    paths = [p for p in repository_files(REPO / "results") if p.suffix == ".json"]
    configs = [data["config"] for p in paths for data in [json.loads(p.read_text())]
               if isinstance(data, dict) and isinstance(data.get("config"), dict)]
    assert len(configs) > 250
    assert {json.dumps(c.get("budget")) for c in configs} >= {'"16GiB"', '"rtx4080"'}
    assert [c for c in configs if respelled_config(c)[1]] == []


@pytest.mark.slow
def test_migrate_moves_a_result_of_another_spelling_to_its_canonical_id(tmp_path, cache_dir):
    committed = REPO / "results" / "smoke"
    source = sorted(committed.glob("*.json"))[0]
    data = json.loads(source.read_text())
    old_config = {**data["config"], "budget": "16384MiB"}
    old_id = cell_id_of({**defaults(), **old_config})
    assert old_id != data["cell_id"]
    folder = tmp_path / "results" / "smoke"
    folder.mkdir(parents=True)
    old = folder / f"{old_id}.json"
    old.write_text(json.dumps({**data, "config": old_config, "cell_id": old_id}))
    read(old)  # an old spelling's file is valid as it is; only its id is not the one the matrix asks for
    evaluation = {"kind": "evaluation", "schema_version": 1, "cell_id": old_id, "name": "x", "matrix": "smoke",
                  "task": "t", "status": "skipped", "reason": "r"}
    (folder / "evaluations" / old_id).mkdir(parents=True)
    (folder / "evaluations" / old_id / "t.json").write_text(json.dumps(evaluation))

    proc = run_vramlab("migrate", str(old), cwd=tmp_path, cache=cache_dir)
    assert proc.returncode == 0, proc.stderr
    assert "budget '16384MiB' is '16GiB'" in proc.stdout
    moved = folder / f"{data['cell_id']}.json"
    assert not old.exists() and read(moved).config["budget"] == "16GiB"
    assert read(moved).metrics == read(source).metrics
    assert json.loads((folder / "evaluations" / data["cell_id"] / "t.json").read_text())["cell_id"] == data["cell_id"]
    assert not (folder / "evaluations" / old_id).exists()
    assert respell(moved) is None  # a second migrate does nothing


def test_migrate_keeps_a_result_whose_canonical_file_is_already_there(tmp_path):
    source = sorted((REPO / "results" / "smoke").glob("*.json"))[0]
    data = json.loads(source.read_text())
    old_config = {**data["config"], "budget": 17179869184}
    old_id = cell_id_of({**defaults(), **old_config})
    old = tmp_path / f"{old_id}.json"
    old.write_text(json.dumps({**data, "config": old_config, "cell_id": old_id}))
    shutil.copy(source, tmp_path / source.name)
    found = respell(old)
    assert found is not None and found.new is None and old.exists()
    assert "two results of one cell" in found.describe()
