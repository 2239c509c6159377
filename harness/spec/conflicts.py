"""Combinations of settings that cannot run together, each declared once with its reason.

A cell that matches a rule is kept in the matrix and recorded as `skipped` with the reason: it is
never altered into a different cell behind the researcher's back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Conflict:
    name: str
    reason: str
    applies: Callable[[dict[str, Any]], bool]


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
)


def first_conflict(settings: dict[str, Any]) -> Conflict | None:
    return next((c for c in CONFLICTS if c.applies(settings)), None)
