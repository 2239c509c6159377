"""A host budget: none by default (ids unchanged), a binary size otherwise, judged on the host memory no file
backs, as the device budget is judged on the whole process's device memory."""

from __future__ import annotations

from harness.core.budget import Budget
from harness.spec.cells import cell_id_of
from harness.spec.matrix import MatrixError, expand_spec
from harness.spec.settings import defaults

GIB = 2**30


def test_no_host_budget_by_default_and_ids_stay():
    budget = Budget.from_settings(defaults(), cuda=False)
    assert budget.host_limit_bytes is None and budget.judge_host(500 * GIB) is None
    assert cell_id_of({**defaults(), "host_budget": "none"}) == cell_id_of(defaults())
    assert cell_id_of({**defaults(), "host_budget": "32GiB"}) != cell_id_of(defaults())


def test_the_host_peak_is_judged_against_the_host_budget():
    budget = Budget.from_settings({**defaults(), "host_budget": "32GiB"}, cuda=True)
    assert budget.judge_host(31 * GIB) is None and budget.judge_host(None) is None
    assert "33.00 GiB, over the 32.00 GiB host budget" in budget.judge_host(33 * GIB)
    assert budget.as_dict()["host_limit_bytes"] == 32 * GIB


def test_a_host_budget_in_decimal_units_is_refused():
    try:
        expand_spec("t", {"fixed": {"host_budget": "32GB"}, "axes": {"adapter": ["lora"]}}, source="m.yaml")
    except MatrixError as err:
        assert "m.yaml: fixed.host_budget: '32GB' is in decimal units" in str(err)
    else:
        raise AssertionError("32GB was accepted as a host budget")


def test_a_host_budget_past_any_machine_is_refused():
    from harness.core.budget import host_budget_problem

    assert "the most a host budget may be" in host_budget_problem("100TiB")
    assert host_budget_problem("64TiB") is None and host_budget_problem("none") is None
