"""What a cell reads that its settings name but do not hold, the user's data and a local model folder, each as a
digest: a result records them, so that it can tell whether it was measured on what is there now
(harness/results/existing.py)."""

from __future__ import annotations

from typing import Any

from harness.data.training import input_digest
from harness.stack.models.facts import folder_digest


def recorded_input(settings: dict[str, Any]) -> dict[str, str]:
    """What a result records of the input it was measured on: the digest of the user's data and of a local model
    folder, where it has them."""
    found = {"data_sha256": input_digest(settings), "model_sha256": folder_digest(str(settings.get("model", "")))}
    return {key: digest for key, digest in found.items() if digest}
