"""Helpers for the Snakefile: which matrix to run by default, and the cells it expands to."""

from __future__ import annotations

DEFAULT_CPU_MATRIX = "smoke"
DEFAULT_GPU_MATRIX = "seed-16gb"


def default_matrix() -> tuple[str, str]:
    """The embedded default: the 16 GB matrix where a CUDA GPU is present, the CPU smoke matrix where not."""
    import torch

    if torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        return DEFAULT_GPU_MATRIX, f"a CUDA GPU is present ({name})"
    return DEFAULT_CPU_MATRIX, "no CUDA GPU is present, so the CPU smoke matrix runs (SmolLM2-135M)"
