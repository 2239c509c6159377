"""concurrent_cells shares one GPU between cells; on a matrix whose cells all run on the CPU it would share nothing
and only record every cell's speed as not measured, so it is refused where the matrix is read; so is
predicted_oom: skip, which skips only GPU cells."""

from __future__ import annotations

import pytest

from harness.spec.matrix import MatrixError, expand_spec

BASE = {"model": "arch:tiny-llama", "context": 64, "steps": 1, "warmup_steps": 0, "lora_rank": 4, "lora_alpha": 8}


def matrix(device: str, concurrent: int, **more: object) -> dict:
    return {"fixed": {**BASE, "device": device}, "axes": {"adapter": ["lora", "rslora"]},
            "concurrent_cells": concurrent, **more}


# t11-030
def test_concurrent_cells_on_a_cpu_matrix_is_refused():
    with pytest.raises(MatrixError, match="concurrent_cells: 2 cells per GPU, but every cell of this matrix runs on "
                                          r"the CPU \(device: cpu\), where no GPU is shared"):
        expand_spec("m", matrix("cpu", 2))


@pytest.mark.parametrize(("device", "concurrent"), [("cpu", 1), ("auto", 2), ("cuda", 4)])
def test_concurrent_cells_where_a_gpu_may_be_shared_is_accepted(device, concurrent):
    assert len(expand_spec("m", matrix(device, concurrent), check_model=False)) == 2


def test_a_matrix_with_one_gpu_cell_among_cpu_cells_keeps_its_concurrent_cells():
    spec = matrix("cpu", 2)
    del spec["fixed"]["device"]
    spec["axes"]["device"] = ["cpu", "auto"]
    assert len(expand_spec("m", spec, check_model=False)) == 4


# t19-011: predicted_oom: skip on a matrix whose cells all run on the CPU passed validate; it skips only GPU cells
# predicted over their budget, so there it skips nothing, and is refused as concurrent_cells is
def test_predicted_oom_skip_on_a_cpu_matrix_is_refused():
    with pytest.raises(MatrixError, match=r"predicted_oom: skip has no effect: it skips GPU cells predicted not to fit "
                                          r"their budget, but every cell of this matrix runs on the CPU"):
        expand_spec("m", matrix("cpu", 1, predicted_oom="skip"))
    assert len(expand_spec("m", matrix("auto", 1, predicted_oom="skip"), check_model=False)) == 2
