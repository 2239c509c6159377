"""Device memory outside PyTorch's allocator: the CUDA context and the kernels libraries load.

Nothing in a model's shapes tells this: it is a property of the GPU, the driver, CUDA and the libraries
that run. So it is measured, and the numbers below are the measurements of the committed results, each
cell's whole-process device peak minus its allocator's reserved peak (the same difference the budget
keeps up to date while a cell runs, harness/core/budget.py). `derive` recomputes them from result files, and
a test checks that the constants below are what the committed results give, so they cannot drift from
the data silently.

What the committed cells show (NVIDIA H200, driver 580, CUDA 13.0, torch 2.11):
- at the end of loading, before training, every cell holds the same amount outside the allocator, tiny
  or 8B, whatever its settings: the CUDA context with torch's own kernels;
- training adds what loads lazily, by the attention kernel that ran (cuDNN's library is the largest,
  SDPA's flash kernel less, eager attention the least), and Unsloth's compiled kernels on top where its
  fused 4-bit LoRA kernels run (an NF4 cell on the Unsloth path).
One host figure is measured the same way: Unsloth pins a buffer of host memory while it loads (the load
phase of every Unsloth cell peaks at the same pinned size; Hugging Face cells pin nothing then).
Another GPU or CUDA version has another context size: these numbers are the H200's, and are only what
this estimate can know until cells measured on another card are committed.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

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
        for path in sorted(Path(folder).glob("*.json")):
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
