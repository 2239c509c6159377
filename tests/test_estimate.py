"""The memory estimate: its formulas behave as the physics says, and it predicts every committed GPU cell."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.budget import budget_bytes
from harness.estimate import estimate_cell
from harness.estimate.calibration import TOLERANCE, rows, summary
from harness.estimate.outside import (
    CONTEXT_AT_LOAD_MIB,
    DURING_TRAINING_MIB,
    UNSLOTH_NF4_KERNELS_MIB,
    UNSLOTH_PINNED_AT_LOAD_MIB,
    derive,
)
from harness.report.calibration import table
from harness.spec.settings import defaults

REPO = Path(__file__).resolve().parent.parent
GPU_MATRICES = ["seed-16gb", "gpu-check", "quality-smollm2", "ceiling-16gb", "loss-path-16gb", "memory-history"]
GPU_RESULTS = [REPO / "results" / name for name in GPU_MATRICES]
# the committed calibration covers every GPU folder; the constants above are derived from the first six only.
# quality-qwen's whole-process peaks are predicted up to 20% low (docs/will-it-fit.md): there the
# allocated peaks are held to the tolerance
CALIBRATED = [*GPU_MATRICES, "vocab-16gb", "quality-qwen", "claims", "claims-context"]
CALIBRATED_RESULTS = [REPO / "results" / name for name in CALIBRATED]
DEVICE_PEAK_MISSED = {"quality-qwen"}
GIB = 2**30
# the seed's stack (docs/results-seed-16gb.md): NF4, RS-LoRA r16 on all linear layers, paged 8-bit AdamW, flash,
# offload, Unsloth
SEED = {"model": "arch:qwen3-8b", "context": 20480, "quantization": "nf4", "adapter": "rslora",
        "optimizer": "paged_adamw_8bit", "attention": "flash_attention_2", "checkpointing": "offload",
        "kernels": "unsloth"}


def cell(**changes) -> dict:
    return {**defaults(), **SEED, **changes}


def component(est, name: str) -> int:
    return next(c.bytes for c in est.components if c.name == name)


def test_components_add_up_to_the_total_and_the_allocated_part():
    est = estimate_cell(cell())
    assert est.total_bytes == sum(c.bytes for c in est.components)
    outside = component(est, "CUDA context and kernels") + component(est, "allocator fragmentation")
    assert est.allocated_bytes == est.total_bytes - outside


@pytest.mark.parametrize("changes", [{}, {"kernels": "liger"}, {"kernels": "none", "checkpointing": "on"},
                                     {"attention": "eager", "kernels": "none", "checkpointing": "off"}])
def test_more_context_never_needs_less_memory(changes):
    totals = [estimate_cell(cell(context=c, **changes)).total_bytes for c in (1024, 4096, 8192, 16384, 32768)]
    assert totals == sorted(totals) and len(set(totals)) == len(totals)


def test_nf4_weights_are_about_a_quarter_of_bf16():
    nf4 = component(estimate_cell(cell()), "decoder weights")
    bf16 = component(estimate_cell(cell(quantization="none")), "decoder weights")
    # 4 bits + 1 byte per 64 + 4 bytes per 16,384 against 16 bits: 0.258 of bf16 for the linear weights
    assert 0.25 < nf4 / bf16 < 0.27


def test_slicing_the_vocabulary_removes_its_rows_from_embedding_and_head():
    full = component(estimate_cell(cell(model="arch:llama-3.1-8b")), "embedding and LM head")
    sliced = component(estimate_cell(cell(model="arch:llama-3.1-8b", vocabulary=100_000)), "embedding and LM head")
    assert full - sliced == (128_256 - 100_000) * 4096 * 2 * 2


def test_tied_embeddings_are_counted_once():
    est = estimate_cell(cell(model="arch:tiny-qwen3", context=1024))
    assert component(est, "embedding and LM head") == 2048 * 64 * 2


def test_checkpointing_orders_the_activations():
    activations = {mode: component(estimate_cell(cell(checkpointing=mode)), "activations")
                   for mode in ("off", "on", "offload")}
    assert activations["offload"] < activations["on"] < activations["off"]


def test_optimizer_state_on_the_device():
    adamw = component(estimate_cell(cell(optimizer="adamw_torch")), "optimizer state on the device")
    eight = component(estimate_cell(cell(optimizer="adamw_8bit")), "optimizer state on the device")
    paged = component(estimate_cell(cell()), "optimizer state on the device")
    assert adamw == 8 * 43_646_976 and 0.25 < eight / adamw < 0.26
    # paged: only the states of LoRA matrices under 100,000 elements are on the device, with every block absmax;
    # per Qwen3-8B layer at rank 16 those are the A of q, k, v, o, gate and up and the B of q, k, v, o and down
    small = 16 * (6 * 4096 + 3 * 4096 + 2 * 1024)
    assert paged == 36 * 2 * small + 2 * 4 * 43_646_976 // 256


def test_the_peak_moment_of_a_tiny_model_is_the_lm_head_tile():
    # 2,048-token vocabulary, 64 hidden: the 1,024 x 32,768 logits tile of TRL's chunked LM head dominates
    est = estimate_cell(cell(model="arch:tiny-llama", context=1024, quantization="none", kernels="none",
                             checkpointing="off"))
    assert "LM head" in est.peak_moment and component(est, "adapter gradients") == 0


def test_the_outside_allocator_constants_are_what_the_committed_results_give():
    assert derive(GPU_RESULTS) == {"context_at_load_mib": CONTEXT_AT_LOAD_MIB,
                                   "during_training_mib": DURING_TRAINING_MIB,
                                   "unsloth_nf4_kernels_mib": UNSLOTH_NF4_KERNELS_MIB,
                                   "unsloth_pinned_at_load_mib": UNSLOTH_PINNED_AT_LOAD_MIB}


def test_every_committed_ok_gpu_cell_is_predicted_within_tolerance():
    found = rows(GPU_RESULTS)
    # 14 ok cells of seed-16gb, 12 of gpu-check, 37 of quality-smollm2, 35 ok probes of ceiling-16gb (7 of them
    # fit only under the emulated card), 2 ok cells of loss-path-16gb, 2 probes recorded with the allocator's history
    assert len(found) == 102
    misses = [f"{r.matrix}/{r.name}: {r.error:+.1%}" for r in found if abs(r.error) > TOLERANCE]
    assert misses == [], misses


def test_accumulated_adapter_gradients_are_held_at_the_lm_head():
    # from the second micro-batch of a step on, the Trainer's gradients of the earlier ones exist while the
    # LM head's backward runs; committed: quality-smollm2's r64 cells (grad_accum 4) allocate 2.39 GiB, 0.07
    # GiB of them those gradients
    settings = {"model": "arch:tiny-llama", "context": 1024, "quantization": "none", "kernels": "none",
                "checkpointing": "off"}
    one, four = estimate_cell(cell(**settings, grad_accum=1)), estimate_cell(cell(**settings, grad_accum=4))
    assert "LM head" in one.peak_moment and "LM head" in four.peak_moment
    assert component(one, "adapter gradients") == 0
    assert component(four, "adapter gradients") == component(four, "adapter weights") > 0
    assert four.allocated_bytes - one.allocated_bytes == component(four, "adapter gradients")


def test_unsloth_on_cudnn_attention_pads_the_sequence_and_keeps_the_attention_output_twice():
    settings = {"model": "arch:tiny-llama", "context": 2048, "quantization": "none", "checkpointing": "off"}
    flash = estimate_cell(cell(**settings, attention="flash_attention_2"))
    cudnn = estimate_cell(cell(**settings, attention="sdpa"))
    layers, q, kv = 2, 4 * 16, 2 * 16  # tiny-llama: 2 layers, 4 heads and 2 KV heads of 16
    padded = 2048 + 128  # a multiple of Unsloth's 128-token bucket gains a whole bucket
    extra = layers * 2 * ((q + kv + kv + q) * (padded - 2048) + q * 2048)
    assert component(cudnn, "activations") - component(flash, "activations") == extra
    # before Hopper SDPA runs its flash kernel and nothing is padded; the Hugging Face path never pads
    ada = estimate_cell(cell(**settings, attention="sdpa", budget="rtx4080"))
    assert component(ada, "activations") == component(flash, "activations")
    liger = {**settings, "kernels": "liger"}
    assert component(estimate_cell(cell(**liger, attention="sdpa")), "activations") == \
        component(estimate_cell(cell(**liger, attention="flash_attention_2")), "activations")


def test_the_committed_calibration_table_is_generated_from_the_committed_results():
    committed = (REPO / "reports" / "estimate" / "calibration.md").read_text()
    assert committed == table(rows(CALIBRATED_RESULTS), [Path("results") / name for name in CALIBRATED]) + "\n"


def test_the_docs_state_the_generated_calibration_result():
    assert summary(rows(CALIBRATED_RESULTS)) in (REPO / "docs" / "will-it-fit.md").read_text()


def test_the_later_gpu_folders_are_predicted_within_tolerance_on_the_peak_the_model_explains():
    found = [r for r in rows(CALIBRATED_RESULTS) if r.matrix not in GPU_MATRICES]
    assert len(found) == 99  # 4 cells of vocab-16gb, 54 of quality-qwen, 10 of claims, 31 probes of claims-context
    misses = [f"{r.matrix}/{r.name}: {r.error:+.1%}" for r in found
              if r.matrix not in DEVICE_PEAK_MISSED and abs(r.error) > TOLERANCE]
    misses += [f"{r.matrix}/{r.name}: allocated {r.allocated_error}" for r in found if r.matrix in DEVICE_PEAK_MISSED
               and (r.allocated_error is None or abs(r.allocated_error) > TOLERANCE)]
    assert misses == [], misses


def test_the_seed_stack_is_predicted_closely():
    row = next(r for r in rows(GPU_RESULTS) if r.name == "seed-stack")
    assert abs(row.error) < 0.03 and abs(row.allocated_error) < 0.03


def test_pinned_host_memory_of_every_committed_fixed_length_cell_is_predicted_within_2_mib():
    # the layer inputs offloaded checkpointing pins, each rounded up to a power of two, and Unsloth's buffer;
    # with sequences of varying length (quality-smollm2's sections) the one offloading cell pins 180 MiB
    # where 120 MiB are predicted, which the model does not explain
    for folder in GPU_RESULTS:
        for path in sorted(folder.glob("*.json")):
            result = json.loads(path.read_text())
            if result["status"] == "ok" and result["config"]["data"] == "zipf":
                measured = result["metrics"]["peak_host_pinned_bytes"]
                assert abs(estimate_cell(result["config"]).host_pinned_bytes - measured) < 2 * 2**20, path.name


def test_committed_cells_that_ran_out_of_memory_are_predicted_over_their_budget():
    for path in sorted((REPO / "results" / "seed-16gb").glob("*.json")):
        result = json.loads(path.read_text())
        if result["status"] == "oom":
            assert estimate_cell(result["config"]).total_bytes > budget_bytes(result["config"]["budget"]), path.name


def test_a_card_budget_changes_the_workspace_and_the_attention_kernel():
    hopper = estimate_cell(cell(attention="sdpa"))
    ada = estimate_cell(cell(attention="sdpa", budget="rtx4080"))
    assert component(ada, "cuBLAS workspaces") < component(hopper, "cuBLAS workspaces")
    assert "cudnn" in hopper.components[0].detail and "flash" in ada.components[0].detail
    assert any("RTX 4080" in note for note in ada.notes)


def test_vramlab_estimate_prints_every_cell_of_the_seed_matrix_quickly(capsys):
    started = time.perf_counter()
    assert main(["estimate", "seed-16gb"]) == 0
    assert time.perf_counter() - started < 1.0
    out = capsys.readouterr().out
    assert out.count("  total ") == 17 and "skipped: declared conflict 'unsloth-with-liger'" in out
    assert "does not fit" in out and "fits (" in out


def test_vramlab_estimate_draws_the_components_of_a_matrix(tmp_path, capsys):
    assert main(["estimate", "gpu-check", "--chart", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_vramlab_estimate_of_one_cell_from_settings(capsys):
    assert main(["estimate", "--json", "--set", "model=arch:llama-3.1-8b", "--set", "context=32768",
                 "--set", "budget={card: rtx4090, display_reserve: 1GiB}"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["budget_bytes"] == (24564 - 1024) * 2**20
    assert record["total_bytes"] == sum(c["bytes"] for c in record["components"])


def test_a_config_json_folder_is_estimated_as_its_preset(tmp_path):
    from harness.stack.models.presets import PRESETS

    (tmp_path / "config.json").write_text(json.dumps(PRESETS["llama-3.1-8b"]))
    from_folder = estimate_cell(cell(model=str(tmp_path)))
    assert from_folder.total_bytes == estimate_cell(cell(model="arch:llama-3.1-8b")).total_bytes


def test_vramlab_estimate_refuses_a_bad_setting(capsys):
    assert main(["estimate", "--set", "kernels=ungloth"]) == 2
    assert "did you mean 'unsloth'?" in capsys.readouterr().err


def test_unsloth_moves_the_input_embedding_to_the_host_when_its_step_reserve_does_not_fit():
    # measured (run-cell --memory-history): 2,375 MiB of embedding and LM head at 32,768 tokens, 1,188 at 40,960
    head_and_embedding = 2 * 151_936 * 4096 * 2
    kept = component(estimate_cell(cell(context=32768)), "embedding and LM head")
    moved = estimate_cell(cell(context=40960))
    assert kept == head_and_embedding
    assert component(moved, "embedding and LM head") == head_and_embedding // 2
    assert "Unsloth moved the input embedding" in next(c.detail for c in moved.components
                                                       if c.name == "embedding and LM head")
    # the Hugging Face path has no such plan, and a larger budget leaves room for the reserve
    assert component(estimate_cell(cell(context=40960, kernels="liger")), "embedding and LM head") == head_and_embedding
    assert component(estimate_cell(cell(context=40960, budget="24GiB")), "embedding and LM head") == head_and_embedding


def test_a_tiled_mlp_keeps_no_intermediate_wide_tensor_of_the_whole_sequence():
    # measured under 16 GiB: the tiled MLP fits up to 69,632 tokens, the untiled one up to 54,272
    plain, tiled = estimate_cell(cell(context=65536)), estimate_cell(cell(context=65536, tiled_mlp="arctic"))
    assert tiled.total_bytes < 16 * GIB < plain.total_bytes
    assert "attention" in tiled.peak_moment
    # its largest full-length tensor is FlashAttention's fp32 dq accumulator, not an intermediate-size activation
    fragmentation = component(tiled, "allocator fragmentation")
    assert 4 * 4096 * 65536 <= fragmentation < 2 * 12288 * 65536


def test_unsloth_serves_trls_lm_head_with_its_own_kernel():
    # committed gpu-check: the same tiny cell allocates 135 MiB on the Hugging Face path, TRL's 1,024 x 32,768
    # bf16 tile among them, and 85 MiB on Unsloth's, whose kernel holds one fp32 chunk of the 2,048-entry vocabulary
    settings = {"model": "arch:tiny-llama", "context": 1024, "quantization": "none", "checkpointing": "off"}
    hf, unsloth = estimate_cell(cell(**settings, kernels="none")), estimate_cell(cell(**settings, kernels="unsloth"))
    hidden, tokens = 64, 1024
    logits_chunk = 4 * tokens * 2048
    assert component(unsloth, "working tensors at the peak") == 4 * 2 * hidden * tokens + logits_chunk + 4 * 8 * tokens
    assert "unsloth_zoo" in next(c.detail for c in unsloth.components if c.name == "working tensors at the peak")
    assert component(hf, "working tensors at the peak") > tokens * 32768 * 2
    # the model's own forward on the Unsloth path keeps its fused cross-entropy (the loss_path axis)
    fused = estimate_cell(cell(**settings, kernels="unsloth", loss_path="unsloth-fused-ce"))
    assert "unsloth_zoo" not in next(c.detail for c in fused.components if c.name == "working tensors at the peak")

