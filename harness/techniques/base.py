"""The interface every technique implements, and the plan they fill in together.

The recipe (harness/recipe.py) calls each hook of every technique in the order of the registry, so a
cell is always built the same way and differs from another only by the levels its settings name.
A technique reads its own level and writes into the plan; it never changes another setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Unavailable(Exception):
    """This technique cannot run on this machine (no CUDA, a package missing): the cell is skipped."""


@dataclass
class Plan:
    settings: dict[str, Any]
    device: str                       # "cuda" or "cpu"
    dtype: Any                        # torch.dtype of compute
    loader: str = "transformers"      # or "unsloth": who loads the model and attaches adapters
    load_kwargs: dict[str, Any] = field(default_factory=dict)
    trainer_kwargs: dict[str, Any] = field(default_factory=dict)   # extra SFTConfig fields
    unsloth_checkpointing: bool | str = False
    records: dict[str, Any] = field(default_factory=dict)          # what each technique reports
    sequences: list[list[int]] = field(default_factory=list)       # training data, token ids
    tokenizer: Any = None

    def level(self, axis: str) -> Any:
        return self.settings[axis]


class Technique:
    axis: str = ""

    def check(self, plan: Plan) -> None:
        """Raise Unavailable when this level cannot run here; called before anything is loaded."""

    def before_load(self, plan: Plan) -> None:
        """Imports that must precede transformers' (Unsloth), load arguments."""

    def after_load(self, model: Any, plan: Plan) -> Any:
        """Change the loaded model (slice, patch, wrap); return the model to train."""
        return model

    def before_train(self, model: Any, plan: Plan) -> None:
        """Last look at the model and the trainer settings."""

    def after_train(self, model: Any, plan: Plan) -> None:
        """Record what actually ran."""


def require_cuda(plan: Plan, what: str) -> None:
    if plan.device != "cuda":
        raise Unavailable(f"{what} needs a CUDA GPU; this cell runs on the CPU")


def require_package(module: str, what: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise Unavailable(f"{what} needs the Python package {module!r}, which is not installed "
                          "(pip install 'vramlab[gpu]')")
