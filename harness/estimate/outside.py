"""Device memory outside PyTorch's allocator: the CUDA context and the kernels libraries load.
Why it is so: docs/estimate.md."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from harness.results.store import result_files

MIB = 2**20

# median over the committed ok cells, in MiB (see `derive`); keys as `_group` makes them
CONTEXT_AT_LOAD_MIB = 676
DURING_TRAINING_MIB = {
    "eager": 66,
    "flash": 78,
    "cudnn": 100,
}
UNSLOTH_NF4_KERNELS_MIB = 68
UNSLOTH_PINNED_AT_LOAD_MIB = 50


def attention_kernel(settings: dict[str, Any], hopper: bool = True) -> str:
    """The kernel the attention level runs: SDPA picks cuDNN's on a Hopper GPU (recorded by the harness's
    probe in the committed results) and its flash kernel before Hopper, where its cuDNN kernel is not
    chosen; 'flash_attention_2' without flash-attn restricts SDPA to its flash kernel. On the Hugging Face
    path flash and cuDNN store the same tensors; on Unsloth's, cuDNN's are padded and its output is copied
    (harness/estimate/activations.py: UNSLOTH_CUDNN_SAVED)."""
    sdpa = "cudnn" if hopper else "flash"
    return {"eager": "eager", "sdpa": sdpa, "flash_attention_2": "flash"}[settings["attention"]]


def unsloth_nf4(settings: dict[str, Any]) -> bool:
    return settings["kernels"] == "unsloth" and settings["quantization"] == "nf4"


def outside_bytes(settings: dict[str, Any], hopper: bool = True) -> tuple[int, str]:
    """Predicted device memory outside the allocator at the peak, and how it is made up."""
    kernel = attention_kernel(settings, hopper)
    parts = [f"CUDA context {CONTEXT_AT_LOAD_MIB} MiB", f"{kernel} attention and cuBLAS kernels "
                                                       f"{DURING_TRAINING_MIB[kernel]} MiB"]
    total = CONTEXT_AT_LOAD_MIB + DURING_TRAINING_MIB[kernel]
    if unsloth_nf4(settings):
        parts.append(f"Unsloth 4-bit LoRA kernels {UNSLOTH_NF4_KERNELS_MIB} MiB")
        total += UNSLOTH_NF4_KERNELS_MIB
    return total * MIB, " + ".join(parts) + " (measured on the H200)"


def _outside_at(metrics: dict[str, Any]) -> int | None:
    device, reserved = metrics.get("peak_device_bytes"), metrics.get("peak_reserved_bytes")
    return device - reserved if device is not None and reserved is not None else None


def derive(results_dirs: list[Path]) -> dict[str, Any]:
    """The constants above, recomputed (in MiB, rounded) from the ok CUDA cells under `results_dirs`.
    Each cell's training-time extra is attributed to its attention kernel; Unsloth NF4 cells are compared
    with the Hugging Face cells of the same kernel."""
    at_load: list[int] = []
    training: dict[str, list[int]] = {}
    unsloth: dict[str, list[int]] = {}
    pinned_at_load: list[int] = []
    for folder in results_dirs:
        for path in result_files(folder):
            data = json.loads(path.read_text())
            metrics = data.get("metrics") or {}
            if data.get("status") != "ok" or (data.get("environment") or {}).get("cuda_available") is not True:
                continue
            load_phase = (metrics.get("phases") or {}).get("load") or {}
            if data["config"]["kernels"] == "unsloth" and load_phase.get("peak_host_pinned_bytes") is not None:
                pinned_at_load.append(load_phase["peak_host_pinned_bytes"])
            load = _outside_at(load_phase)
            peak = _outside_at(metrics)
            if load is None or peak is None:
                continue
            at_load.append(load)
            kernel = (data.get("records") or {}).get("attention", {}).get("kernel")
            group = unsloth if unsloth_nf4(data["config"]) else training
            group.setdefault(kernel, []).append(peak - load)
    context = statistics.median(at_load)
    during = {kernel: statistics.median(values) for kernel, values in training.items()}
    extra = [statistics.median(values) - during[kernel] for kernel, values in unsloth.items() if kernel in during]
    return {"context_at_load_mib": round(context / MIB),
            "during_training_mib": {k: round(v / MIB) for k, v in sorted(during.items())},
            "unsloth_nf4_kernels_mib": round(statistics.median(extra) / MIB) if extra else None,
            "unsloth_pinned_at_load_mib": round(statistics.median(pinned_at_load) / MIB) if pinned_at_load else None}
