"""Unsloth's own memory plan: with offload_embedding left at its default ('auto'), Unsloth moves the input
embedding to host memory when the device lacks what it reserves for a training step.

unsloth/models/_utils.py (offload_embedding_if_tight) asks twice, after the load and again when the adapters
are attached, whether the memory this process can still allocate (free within the per-process cap, which
is how a budget is emulated, less what is allocated) covers unsloth_zoo/block_swap.py's step reserve:

    reserve = (tokens x hidden x 48 + min(tokens, 2048) x vocabulary x 4 + trainable x 16) x (1 + 1/16) + 256 MiB

(activations at 48 bytes per token and hidden unit, fp32 logits of 2,048 rows, and at the second check the
trainable parameters with their gradients and two fp32 Adam moments). If not, the embedding leaves the
device, and only the LM head stays. For Qwen3-8B under 16 GiB that happens from about 37k tokens: the
committed probes hold 2,375 MiB of embedding and LM head at 32,768 tokens and 1,188 MiB at 40,960
(`run-cell --memory-history`). A tied model keeps its one matrix, since the LM head needs it.
"""

from __future__ import annotations

from typing import Any

from harness.estimate.activations import FP32
from harness.stack.models.facts import ModelFacts

MIB = 2**20
ACTIVATION_BYTES_PER_TOKEN_HIDDEN = 48
LOGIT_ROWS = 2048
TRAINABLE_BYTES = 4 + 12  # the parameter and, as the reserve counts them, its gradient and Adam's two moments
FRAGMENTATION = 1 / 16
SAFETY = 256 * MIB


def step_reserve(m: ModelFacts, tokens: int, vocabulary: int, trainable: int) -> int:
    base = (tokens * m.hidden_size * ACTIVATION_BYTES_PER_TOKEN_HIDDEN + min(tokens, LOGIT_ROWS) * vocabulary
            * FP32 + trainable * TRAINABLE_BYTES)
    return int(base + base * FRAGMENTATION + SAFETY)


def embedding_leaves_device(settings: dict[str, Any], m: ModelFacts, cap: int, resident_at_load: int,
                            trainable: int, rows: int) -> str | None:
    """Why Unsloth moves the input embedding to host memory in this cell, or None where it stays.
    `cap`: what the allocator may hold; `resident_at_load`: weights, embedding and LM head."""
    if settings["kernels"] != "unsloth" or m.tied_embeddings:
        return None
    tokens = settings["batch_size"] * settings["context"]
    checks = (("after the load", step_reserve(m, tokens, m.vocab_size, 0), cap - resident_at_load),
              ("when the adapters are attached", step_reserve(m, tokens, rows, trainable),
               cap - resident_at_load - FP32 * trainable))  # the adapter's weights, fp32 as peft keeps them
    for when, reserve, usable in checks:
        if usable < reserve:
            return (f"Unsloth moved the input embedding to host memory {when}: its step reserve "
                    f"({reserve / 2**30:.2f} GiB) exceeded the {max(usable, 0) / 2**30:.2f} GiB left to allocate")
    return None
