"""Budgets named after real cards: what each allows, and that plain sizes keep their meaning and ids."""

from __future__ import annotations

import pytest

from harness.core.budget import budget_bytes, budget_card, budget_problem
from harness.core.gpu_cards import CARDS
from harness.spec.cells import cell_id_of
from harness.spec.settings import defaults

MIB = 2**20


def test_a_card_allows_its_reported_memory_less_the_driver_reservation_and_the_display():
    assert budget_bytes("rtx4090") == 24564 * MIB
    assert budget_bytes("rtx4080") == (16376 - 434) * MIB
    assert budget_bytes({"card": "rtx4080", "display_reserve": "512MiB"}) == (16376 - 434 - 512) * MIB
    assert budget_bytes("16GiB") == 16 * 2**30 and budget_card("16GiB") is None


def test_every_16_gb_card_gives_less_than_16_gib_and_every_card_names_its_source():
    for key, card in CARDS.items():
        assert card.source and card.name.startswith("NVIDIA"), key
        if card.total_mib < 17_000:
            assert budget_bytes(key) < 16 * 2**30


def test_budget_values_are_checked():
    assert budget_problem("rtx4080") is None and budget_problem({"card": "rtx3090"}) is None
    assert "did you mean 'rtx4090'" in budget_problem("rtx490")
    assert "names its card" in budget_problem({"display_reserve": "1GiB"})
    assert "decimal units" in budget_problem({"card": "rtx4090", "display_reserve": "1GB"})


def test_a_card_budget_makes_another_cell_and_the_default_keeps_its_id():
    base = defaults()
    assert cell_id_of(base) == cell_id_of({**base, "budget": "16GiB"})
    assert cell_id_of({**base, "budget": "rtx4080"}) != cell_id_of(base)


@pytest.mark.slow
def test_a_card_without_a_display_reserve_is_the_same_cell_as_the_card_by_name():
    from harness.spec.matrix import MatrixError, expand_spec

    def cell(budget):
        return expand_spec("m", {"design": "list", "cells": [{"name": "a", "budget": budget}]}, source="test")[0]

    named, spelled, reserved = cell("rtx4080"), cell({"card": "rtx4080"}), cell({"card": "rtx4080",
                                                                                  "display_reserve": "0.5GiB"})
    assert named.cell_id == spelled.cell_id != reserved.cell_id
    assert spelled.settings["budget"] == "rtx4080"
    # and in one matrix the two spellings are the one cell they are
    with pytest.raises(MatrixError, match="same settings"):
        expand_spec("m", {"design": "list", "cells": [{"name": "a", "budget": "rtx4080"},
                                                      {"name": "b", "budget": {"card": "rtx4080"}}]}, source="t")
