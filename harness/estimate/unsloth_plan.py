"""Unsloth's own memory plan: with offload_embedding left at its default ('auto'), Unsloth moves the input
embedding to host memory when the device lacks what it reserves for a training step. Why it is so: docs/estimate.md."""

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
