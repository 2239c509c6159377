"""Combinations of settings that cannot run together, each declared once with its reason.

A cell that matches a rule is kept in the matrix and recorded as `skipped` with the reason: it is
never altered into a different cell behind the researcher's back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.stack.techniques import TECHNIQUES


@dataclass(frozen=True)
class Conflict:
    name: str
    reason: str
    applies: Callable[[dict[str, Any]], bool]
    # what of the cell's own settings the reason is about, where the rule covers several levels
    names: Callable[[dict[str, Any]], str] | None = None

    def why(self, settings: dict[str, Any]) -> str:
        """The reason, for a cell of these settings."""
        return f"{self.names(settings)} {self.reason}" if self.names else self.reason


def _cuda_only_levels(settings: dict[str, Any]) -> list[str]:
    """The levels of these settings that run only on a CUDA GPU (each technique's `cuda_levels`)."""
    return [f"{t.axis}: {settings.get(t.axis)}" for t in TECHNIQUES if settings.get(t.axis) in t.cuda_levels]

CONFLICTS: tuple[Conflict, ...] = (
    Conflict(
        "unsloth-with-liger",
        "Unsloth and Liger-Kernel both replace the same modules (RMSNorm, RoPE, SwiGLU MLP, cross-entropy "
        "on the LM head); the second patch would silently undo or wrap the first, so which kernels ran "
        "could not be told",
        lambda s: s["kernels"] == "liger+unsloth",
    ),
    Conflict(
        "unsloth-eager-attention",
        "Unsloth replaces the attention forward with its own (SDPA-based) path, so 'eager' cannot be "
        "honoured; measure eager attention without Unsloth",
        lambda s: s["kernels"] == "unsloth" and s["attention"] == "eager",
    ),
    Conflict(
        "tiled-mlp-needs-unsloth",
        "the tiled MLP is an option of Unsloth's loader (harness/stack/techniques/tiled_mlp.py); the Hugging Face "
        "path has no tiling wired in, so the cell would run untiled under a tiled name",
        lambda s: s["tiled_mlp"] != "off" and s["kernels"] != "unsloth",
    ),
    Conflict(
        "unsloth-fused-ce-needs-unsloth",
        "Unsloth's fused cross-entropy is its model forward's; only the Unsloth path has it",
        lambda s: s["loss_path"] == "unsloth-fused-ce" and s["kernels"] != "unsloth",
    ),
    Conflict(
        "liger-flce-needs-liger",
        "Liger's fused linear cross-entropy is one of Liger's patches; without Liger's kernels the cell would "
        "differ from its Liger-free baseline in two ways at once",
        lambda s: s["loss_path"] == "liger-flce" and s["kernels"] != "liger",
    ),
    Conflict(
        "unsloth-always-fuses-its-loss",
        "Unsloth's model forward computes its fused cross-entropy whenever it is given labels, so the whole "
        "logits cannot be asked of it",
        lambda s: s["loss_path"] == "full-logits" and s["kernels"] == "unsloth",
    ),
    Conflict(
        "dft-needs-trl-chunked",
        "the DFT loss weights TRL's per-token log-probabilities; a model's own forward computes only the "
        "mean cross-entropy",
        lambda s: s["loss"] == "dft" and s["loss_path"] != "trl-chunked",
    ),
    Conflict(
        "flash-attention-fp32",
        "FlashAttention kernels run only in 16-bit floating point; with float32 compute the math kernel "
        "would run instead, which is a different cell",
        lambda s: s["attention"] == "flash_attention_2" and s["dtype"] == "float32",
    ),
    Conflict(
        "vocabulary-source-needs-slicing",
        "vocabulary_source says where the kept tokens' frequencies come from; with `vocabulary: native` no token "
        "is cut, so the source would have no effect and the cell would repeat the native one under another id",
        lambda s: s["vocabulary"] == "native" and s.get("vocabulary_source", "training") != "training",
    ),
    # last, so that a cell matching an earlier rule keeps the reason it was recorded with; `device: cuda` (or auto)
    # on a machine without a GPU is no conflict: that depends on the machine, and the run records it as skipped
    Conflict(
        "cuda-level-on-cpu",
        "runs only on a CUDA GPU, and `device: cpu` is asked, so the cell could never run as written on any machine; "
        "set device: auto (a GPU where present) or cuda, or choose a level that runs on the CPU",
        lambda s: s.get("device") == "cpu" and bool(_cuda_only_levels(s)),
        names=lambda s: " and ".join(_cuda_only_levels(s)),
    ),
)


def first_conflict(settings: dict[str, Any]) -> Conflict | None:
    return next((c for c in CONFLICTS if c.applies(settings)), None)
