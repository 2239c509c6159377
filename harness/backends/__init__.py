"""Model paths: Hugging Face transformers, or Unsloth. The `kernels` setting chooses: Unsloth's kernels come
with its own loader, adapters and checkpointing, so `kernels: unsloth` takes the Unsloth path and every other
level the Hugging Face one. This is the only place that decides."""

from __future__ import annotations

from typing import Any

from harness.backends.base import AdapterSpec, Backend, LoadRequest


def name_for(settings: dict[str, Any]) -> str:
    return "unsloth" if settings["kernels"] == "unsloth" else "huggingface"


def for_settings(settings: dict[str, Any]) -> Backend:
    if name_for(settings) == "unsloth":
        from harness.backends.unsloth import UnslothBackend

        return UnslothBackend()
    from harness.backends.huggingface import HuggingFaceBackend

    return HuggingFaceBackend()


__all__ = ["AdapterSpec", "Backend", "LoadRequest", "for_settings", "name_for"]
