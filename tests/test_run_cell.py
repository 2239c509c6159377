"""A cell end to end in a fresh process, on a tiny real model (random weights, real stack), on the CPU."""

from __future__ import annotations

import json

import pytest

from tests.conftest import TINY, run_vramlab, write_matrix


def run_one(tmp_path, cache_dir, cell: str, address_space: int | None = None) -> dict:
    matrix = write_matrix(tmp_path, TINY.format(cells=f"  - {cell}"))
    listed = run_vramlab("cells", str(matrix), "--json", cwd=tmp_path, cache=cache_dir)
    assert listed.returncode == 0, listed.stderr
    cell_id = json.loads(listed.stdout.splitlines()[0])["cell_id"]
    done = run_vramlab("run-cell", "--matrix", str(matrix), "--cell", cell_id, cwd=tmp_path, cache=cache_dir,
                       address_space=address_space)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "results" / "m" / f"{cell_id}.json").read_text())
    assert result["cell_id"] == cell_id
    return result


@pytest.mark.slow
def test_a_cell_trains_and_records_the_contract(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: plain, context: 64, checkpointing: 'on', adapter: rslora}")
    assert result["status"] == "ok", result.get("traceback") or result["reason"]
    assert result["schema_version"] == 3 and "quality" not in result  # quality has its own files
    metrics = result["metrics"]
    assert len(metrics["step_seconds"]) == 3 and len(metrics["loss"]) == 3
    assert all(s > 0 for s in metrics["step_seconds"])
    assert metrics["tokens_per_step"] == 2 * 64
    assert metrics["tokens_per_second"] == pytest.approx(128 / metrics["median_step_seconds"])
    assert metrics["peak_device_bytes"] > 50 * 2**20  # a CPU run's device memory is its resident set
    assert metrics["peak_allocated_bytes"] is None  # no allocator statistics on the CPU
    # the file-backed part (libraries, mapped weights) is resident but not "unmapped"
    assert 50 * 2**20 < metrics["peak_host_unmapped_bytes"] < metrics["peak_host_bytes"]
    assert metrics["peak_host_pinned_bytes"] is None  # no pinned host memory without CUDA
    assert metrics["load_seconds"] > 0
    assert 0 < metrics["mfu"] < 1
    # where the process's time went: the parts add up, the steps are those measured, the start is real
    time_by_phase = metrics["time_by_phase"]
    parts = {k: v for k, v in time_by_phase.items() if k != "total"}
    assert sum(parts.values()) == pytest.approx(time_by_phase["total"])
    assert time_by_phase["measured_steps"] == pytest.approx(sum(metrics["step_seconds"][1:]))
    assert time_by_phase["compile_and_first_steps"] == pytest.approx(metrics["step_seconds"][0])
    assert time_by_phase["load"] == metrics["load_seconds"] and time_by_phase["start_and_imports"] > 0.5
    # the recipe's phases, each timed: the model found in the cache, the techniques applied, the trainer made
    assert set(metrics["phases"]) == {"prepare", "build", "load", "adapt", "trainer", "train"}
    assert time_by_phase["adapt"] == metrics["phases"]["adapt"]["seconds"] > 0
    assert time_by_phase["trainer_init"] == metrics["phases"]["trainer"]["seconds"] > 0
    assert time_by_phase["device_setup"] >= 0 and time_by_phase["setup_and_teardown"] >= 0
    records = result["records"]
    assert records["adapter"]["kind"] == "rslora" and records["adapter"]["scaling"] == pytest.approx(4.0)
    assert records["checkpointing"]["checkpointed_modules"] == 2
    # every layer forward of every micro-batch went through the function this harness installed
    config = result["config"]
    layer_forwards = 2 * (config["steps"] + config["warmup_steps"]) * config["grad_accum"]
    assert records["checkpointing"]["checkpointed_calls"] == layer_forwards
    assert records["checkpointing"]["function_kept"] is True
    assert result["trainer"]["gradient_checkpointing"] is False  # the trainer never re-enables it
    assert records["attention"]["kernel"] in ("flash", "math")
    assert result["trainer"]["loss_type"] == "nll"
    assert result["model"]["random_weights"] is True
    env = result["environment"]
    assert env["versions"]["torch"] and env["versions"]["trl"] and env["python"]
    assert result["config"]["context"] == 64


@pytest.mark.slow
def test_offloaded_checkpointing_and_vocabulary_slicing(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: slim, context: 256, checkpointing: offload, vocabulary: 300}")
    assert result["status"] == "ok", result.get("traceback") or result["reason"]
    vocab = result["records"]["vocabulary"]
    assert vocab["size"] == 300 and vocab["native_size"] == 2048
    # 1,536 Zipf-distributed training tokens hold more than 300 distinct ids: the rarest fall outside,
    # and the kept most frequent ones still cover most of the data
    assert 0 < vocab["outside_share"] < 0.5
    assert vocab["distinct_training_tokens"] <= 300
    assert result["records"]["checkpointing"]["offloaded_modules"] == 2
    assert result["records"]["checkpointing"]["function_kept"] is True
    assert result["records"]["checkpointing"]["checkpointed_calls"] > 0


@pytest.mark.slow
def test_eager_attention_is_recorded_as_such(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: eager, context: 32, attention: eager}")
    assert result["status"] == "ok"
    assert result["records"]["attention"]["kernel"] == "eager"
    assert result["records"]["checkpointing"] == {"mode": "off", "active_after_train": False}


@pytest.mark.slow
def test_a_real_allocation_failure_is_an_oom_result(tmp_path, cache_dir):
    # eager attention at 64k tokens asks for a 4 x 65536^2 fp32 score matrix (64 GiB). The child's address
    # space is capped at 6 GiB, so the refusal comes at once on any machine, not after the masks and
    # partial buffers have filled a laptop's memory (unbounded, this test once peaked at 21.5 GB).
    result = run_one(tmp_path, cache_dir, "{name: huge, context: 65536, attention: eager, grad_accum: 1}",
                     address_space=6 * 2**30)
    assert result["status"] == "oom", result.get("traceback")
    assert "allocate" in result["reason"]
    assert result["metrics"]["peak_device_bytes"] > 0
    assert result["metrics"]["phases"]["load"]["seconds"] > 0


@pytest.mark.slow
def test_going_over_the_budget_is_an_oom_result_with_the_figures(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: small-card, context: 32, budget: 64MiB}")
    assert result["status"] == "oom"
    assert "over the 64.0 MiB budget" in result["reason"]
    assert result["metrics"]["tokens_per_second"] > 0  # it trained; it just would not fit


@pytest.mark.slow
def test_going_over_the_host_budget_is_an_oom_result_with_the_figures(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: small-desktop, context: 32, host_budget: 64MiB}")
    assert result["status"] == "oom" and "over the 0.06 GiB host budget" in result["reason"]
    assert result["budget"]["host_limit_bytes"] == 64 * 2**20


@pytest.mark.slow
def test_any_other_failure_is_an_error_result_with_the_traceback(tmp_path, cache_dir):
    # a model folder whose config validates but whose weight file is no safetensors fails only when loaded
    folder = tmp_path / "bad-weights"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 2048,
                                                    "max_position_embeddings": 4096}))
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    (folder / "tokenizer.json").write_text("{}")
    result = run_one(tmp_path, cache_dir, f"{{name: broken, model: {folder}}}")
    assert result["status"] == "error"
    assert "Traceback" in result["traceback"]
    assert result["reason"]


@pytest.mark.slow
def test_a_technique_this_machine_cannot_run_is_skipped_with_the_reason(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: nf4, quantization: nf4}")
    assert result["status"] == "skipped"
    assert "CUDA" in result["reason"]


@pytest.mark.slow
def test_a_declared_conflict_is_skipped_without_loading_anything(tmp_path, cache_dir):
    result = run_one(tmp_path, cache_dir, "{name: both, kernels: liger+unsloth}")
    assert result["status"] == "skipped"
    assert "unsloth-with-liger" in result["reason"]
    assert result["metrics"]["step_seconds"] == []
