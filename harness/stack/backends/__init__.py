"""Model paths: Hugging Face transformers, or Unsloth. The `kernels` setting chooses: Unsloth's kernels come
with its own loader, adapters and checkpointing, so `kernels: unsloth` takes the Unsloth path and every other
level the Hugging Face one. This is the only place that decides."""

from __future__ import annotations

from typing import Any

from harness.stack.backends.huggingface import HuggingFaceBackend
from harness.stack.backends.unsloth import UnslothBackend
from harness.stack.contract import Backend


def name_for(settings: dict[str, Any]) -> str:
    return "unsloth" if settings["kernels"] == "unsloth" else "huggingface"


def for_settings(settings: dict[str, Any]) -> Backend:
    if name_for(settings) == "unsloth":
        return UnslothBackend()

    return HuggingFaceBackend()


__all__ = ["for_settings", "name_for"]
