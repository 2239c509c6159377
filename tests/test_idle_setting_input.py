"""A written setting that acts in no cell of its matrix (it would change the cells' ids, not what they measure) is
refused where the matrix is read: here the truncation policy on packed data, which is cut into full sequences and
has no preceding sections to truncate. An evaluation task that reads the cell's own truncation makes it act."""

from __future__ import annotations

import pytest

from harness.spec.matrix import MatrixError, expand_spec

BASE = {"model": "arch:tiny-llama", "device": "cpu", "context": 64, "steps": 1, "warmup_steps": 0, "lora_rank": 4,
        "lora_alpha": 8}
IDLE = ("fixed.truncation: truncation has no effect: it acts only in cells with data: grant-reports or text:, and no "
        "cell of this matrix has data: grant-reports or text:; remove it")


@pytest.mark.parametrize("written", [
    pytest.param({"data": "stdlib-docs", "truncation": "none"}, id="t11-048"),
    pytest.param({"data": "stdlib-docs", "truncation": "exp_decay", "truncation_decay": 0.9}, id="t11-053"),
    pytest.param({"data": "zipf", "truncation": "exp_decay"}, id="zipf")])
def test_truncation_on_packed_data_is_refused_as_acting_in_no_cell(written):
    with pytest.raises(MatrixError, match=IDLE):
        expand_spec("m", {"fixed": {**BASE, **written}, "axes": {"adapter": ["lora", "rslora"]}})


@pytest.mark.parametrize("extra", [
    pytest.param({"fixed": {**BASE, "data": "grant-reports", "truncation": "none"}}, id="documents-are-cut"),
    pytest.param({"fixed": {**BASE, "data": "stdlib-docs", "truncation": "none"},
                  "evaluation": {"tasks": ["workload_recall"], "documents": 1}}, id="recall-reads-the-cells-own"),
    pytest.param({"fixed": {**BASE, "data": "stdlib-docs", "truncation": "tail"}}, id="the-default-written"),
    pytest.param({"fixed": {**BASE},
                  "axes": {"data": ["stdlib-docs", "grant-reports"], "truncation": ["none", "tail"]}},
                 id="an-axis-acting-in-some-cells")])
def test_truncation_where_it_acts_or_asks_nothing_is_accepted(extra):
    spec = {"axes": {"adapter": ["lora", "rslora"]}, **extra}
    assert expand_spec("m", spec)
