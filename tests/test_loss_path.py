"""The loss-path axis (harness/stack/techniques/loss_path.py): who computes the loss from the last hidden states."""

from __future__ import annotations

import json

import pytest

from harness.spec.matrix import expand
from tests.conftest import TINY, run_vramlab, write_matrix


@pytest.mark.slow
def test_the_model_computes_the_same_loss_as_trls_chunked_head(tmp_path, cache_dir):
    # same data, weights, adapters and seed: the loss of every logged step must agree, gradient accumulation
    # included (the model divides by the batch's token count, TRL by its own)
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: trl, context: 96}\n"
                                                      "  - {name: model, context: 96, loss_path: full-logits}"))
    results = {}
    for cell in expand(str(matrix)):
        done = run_vramlab("run-cell", "--matrix", str(matrix), "--cell", cell.cell_id, cwd=tmp_path, cache=cache_dir)
        assert done.returncode == 0, done.stderr[-3000:]
        results[cell.name] = json.loads((tmp_path / "results" / "m" / f"{cell.cell_id}.json").read_text())
    trl, model = results["trl"], results["model"]
    assert trl["status"] == model["status"] == "ok"
    assert model["metrics"]["loss"] == pytest.approx(trl["metrics"]["loss"], rel=1e-4)
    assert trl["records"]["loss_path"] == {"level": "trl-chunked"}
    record = model["records"]["loss_path"]
    assert record["forward"].startswith("transformers.models.llama.modeling_llama.LlamaForCausalLM")
    assert record["model_loss_calls"] == 3 * 2  # (warm-up + measured steps) x micro-batches


@pytest.mark.parametrize(("cell", "rule"), [
    ("{name: c, loss_path: unsloth-fused-ce}", "unsloth-fused-ce-needs-unsloth"),
    ("{name: c, loss_path: liger-flce, kernels: unsloth}", "liger-flce-needs-liger"),
    ("{name: c, loss_path: full-logits, kernels: unsloth}", "unsloth-always-fuses-its-loss"),
    ("{name: c, loss_path: full-logits, loss: dft}", "dft-needs-trl-chunked"),
])
def test_loss_paths_that_cannot_run_are_declared_skips(tmp_path, cell, rule):
    (only,) = expand(str(write_matrix(tmp_path, TINY.format(cells=f"  - {cell}"))))
    assert only.conflict is not None and only.conflict.name == rule


def test_the_default_loss_path_leaves_committed_cell_ids_alone(tmp_path):
    (cell,) = expand(str(write_matrix(tmp_path, TINY.format(cells="  - {name: c, context: 96}"))))
    (same,) = expand(str(write_matrix(tmp_path, TINY.format(cells="  - {name: c, context: 96, "
                                                                  "loss_path: trl-chunked}"), name="n")))
    assert cell.cell_id == same.cell_id
    assert {c.cell_id for c in expand("seed-16gb")} >= {"3232155d81f9", "b6c7834faef4"}
