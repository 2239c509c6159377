"""The interface every technique implements, and the plan they fill in together.

The recipe (harness/recipe.py) calls each hook of every technique in the order of the registry, so a
cell is always built the same way and differs from another only by the levels its settings name.
A technique declares its own settings, reads its own level, says what it needs through the plan's load
request, and changes the model only through the backend (harness/backends), which knows how the model
path in use (Hugging Face, Unsloth) does each thing. It never changes another setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.backends.base import Backend, LoadRequest
    from harness.core.runtime import Runtime
    from harness.core.setting import Setting
    from harness.data.training import TrainingData
    from harness.token_map import TokenMap


class Unavailable(Exception):
    """This technique cannot run on this machine (no CUDA, a package missing): the cell is skipped."""


@dataclass
class Plan:
    settings: dict[str, Any]
    runtime: Runtime
    backend: Backend
    load: LoadRequest
    trainer_kwargs: dict[str, Any] = field(default_factory=dict)   # extra SFTConfig fields
    trainer_class: type | None = None  # an SFTTrainer subclass that takes the loss another way; None: SFTTrainer
    records: dict[str, Any] = field(default_factory=dict)          # what each technique reports
    training: TrainingData | None = None                           # the cell's training data, token ids
    tokenizer: Any = None
    token_map: TokenMap | None = None  # a sliced vocabulary's map from the tokenizer's ids to the model's rows

    @property
    def device(self) -> str:
        return self.runtime.device

    def level(self, axis: str) -> Any:
        return self.settings[axis]


class Technique:
    axis: str = ""
    settings: tuple[Setting, ...] = ()  # the settings this technique owns, its axis first
    cuda_levels: tuple[str, ...] = ()  # levels of its axis that run only on a CUDA GPU

    def check(self, plan: Plan) -> None:
        """Raise Unavailable when this level cannot run here; called before anything is loaded."""

    def before_load(self, plan: Plan) -> None:
        """Fill the load request (quantization, attention) and the trainer settings."""

    def after_load(self, model: Any, plan: Plan) -> Any:
        """Change the loaded model (slice, patch, wrap) through the backend; return the model to train."""
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
