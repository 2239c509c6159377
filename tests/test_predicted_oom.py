"""`predicted_oom: skip`: a GPU cell the estimate says cannot fit is recorded as skipped, with the figure,
before anything is loaded; a cell that fits, a CPU cell, and every cell under `run` go on to be measured."""

from __future__ import annotations

import pytest

from harness.core.runtime import Runtime
from harness.results import Status, read
from harness.run import measure as run_cell
from harness.spec.cells import Cell
from harness.spec.matrix import matrix_options
from harness.spec.settings import defaults

# plain-8k of seed-16gb: bf16 Qwen3-8B without checkpointing, which ran out of memory while loading
PLAIN_8K = {"model": "arch:qwen3-8b", "context": 8192, "attention": "sdpa", "device": "cuda"}
SEED_20K = {**PLAIN_8K, "context": 20480, "quantization": "nf4", "checkpointing": "offload", "kernels": "unsloth",
            "optimizer": "paged_adamw_8bit", "attention": "flash_attention_2"}


class Measured(Exception):
    """Raised instead of measuring: the cell was not skipped."""


@pytest.fixture
def on_a_gpu(monkeypatch):
    monkeypatch.setattr(run_cell.Runtime, "resolve", classmethod(lambda cls, s: Runtime("cuda", "bfloat16")))

    def measure(*args, **kwargs):
        raise Measured

    monkeypatch.setattr(run_cell, "_measure", measure)


def cell(**settings) -> Cell:
    return Cell(matrix="t", name="c", settings={**defaults(), **settings})


def test_a_cell_predicted_over_its_budget_is_skipped_with_the_figure(tmp_path, on_a_gpu):
    out = tmp_path / "r.json"
    run_cell.run(cell(**PLAIN_8K), out, predicted_oom="skip")
    result = read(out)
    assert result.status is Status.skipped
    assert "predicted not to fit" in result.reason and "over the 16.00 GiB budget" in result.reason


def test_a_cell_that_fits_and_every_cell_under_run_are_measured(tmp_path, on_a_gpu):
    with pytest.raises(Measured):
        run_cell.run(cell(**SEED_20K), tmp_path / "a.json", predicted_oom="skip")
    with pytest.raises(Measured):
        run_cell.run(cell(**PLAIN_8K), tmp_path / "b.json", predicted_oom="run")


def test_a_card_budget_is_what_the_cell_is_judged_against(tmp_path, on_a_gpu):
    # the seed's stack at 20k fits an RTX 4080, not what a 7 GiB display reserve leaves of it (with that little,
    # Unsloth moves the input embedding to the host, and 9.8 GiB still do not fit 8.6)
    with pytest.raises(Measured):
        run_cell.run(cell(**SEED_20K, budget="rtx4080"), tmp_path / "a.json", predicted_oom="skip")
    run_cell.run(cell(**SEED_20K, budget={"card": "rtx4080", "display_reserve": "7GiB"}), tmp_path / "b.json",
                 predicted_oom="skip")
    assert read(tmp_path / "b.json").status is Status.skipped


def test_the_option_is_read_from_the_matrix(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("axes: {adapter: [lora]}\n")
    assert matrix_options(str(path))["predicted_oom"] == "run"
    path.write_text("axes: {adapter: [lora]}\npredicted_oom: skip\n")
    assert matrix_options(str(path))["predicted_oom"] == "skip"


def test_a_cell_whose_offloaded_inputs_alone_exceed_the_host_budget_is_skipped(tmp_path, on_a_gpu):
    # the seed's stack at 20k pins 36 x 256 MiB = 9 GiB of layer inputs on the host
    run_cell.run(cell(**SEED_20K, host_budget="8GiB"), tmp_path / "a.json", predicted_oom="skip")
    result = read(tmp_path / "a.json")
    assert result.status is Status.skipped and "over the 8.00 GiB host budget" in result.reason
    with pytest.raises(Measured):
        run_cell.run(cell(**SEED_20K, host_budget="16GiB"), tmp_path / "b.json", predicted_oom="skip")
