"""What the current code gives on this machine for a cell's settings, each component of its behaviour fingerprint
computed again (no GPU: the model file, the tokenizer, the kept token set, the training data, each evaluation's
data), for `vramlab check --fresh` to judge a result by (harness/results/freshness.py). Computed from settings and
the matrix file alone, so it lies beside the matrix specification, below the result files it is compared with.
Why it is so: docs/freshness.md."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.data import training as data_module
from harness.spec.matrix import MatrixError, evaluation_plan
from harness.spec.settings import SETTINGS
from harness.stack.fingerprint import FINGERPRINT_VERSION, ids_digest, model_digest, tokenizer_digest
from harness.stack.models.facts import ModelSourceError, facts
from harness.stack.models.parts import SPLIT_GGUF
from harness.stack.models.sources import PackageModelError, planned, source_tokenizer
from harness.stack.techniques.vocabulary import sliced_training
from harness.tasks.catalog import PROJECT_TASKS, task_parameters, write_records
from harness.tasks.plan import EvaluationPlan

# what shapes no training sequence: how a cell trains and is measured, not on what (a setting not named here is
# part of the training data's key, so a new one is never wrongly shared)
_NOT_DATA_SETTINGS = {"learning_rate", "loss", "budget", "host_budget", "dtype", "device"}
_NOT_DATA_OWNERS = {"kernels", "loss_path", "quantization", "attention", "tiled_mlp", "checkpointing", "adapter",
                    "optimizer"}
# what makes a model's files or tokenizer unavailable here, said as the reason it cannot be told
_UNAVAILABLE = (PackageModelError, FileNotFoundError, ModelSourceError, OSError, ValueError)


class CannotTell(Exception):
    """A component that cannot be computed on this machine; the message says why, in one line."""


class Current:
    """What the current code gives on this machine, each component computed once per (source, settings) it depends
    on and kept for the run (a failure too, so that a model that is not here is looked for once)."""

    # the fingerprint version this code computes; a result recorded under another is compared with none of it
    version = FINGERPRINT_VERSION

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Any] = {}

    def _once(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            try:
                self._memo[key] = compute()
            except CannotTell as err:
                self._memo[key] = err
            except _UNAVAILABLE as err:
                self._memo[key] = CannotTell(" ".join(str(err).split())[:300] or type(err).__name__)
        found = self._memo[key]
        if isinstance(found, CannotTell):
            raise found
        return found

    @staticmethod
    def _model_key(settings: dict[str, Any]) -> tuple[str, int | None]:
        source = str(settings["model"])
        return source, settings["seed"] if source.startswith("arch:") else None  # random weights are drawn per seed

    def model(self, settings: dict[str, Any]) -> str:
        source, seed = self._model_key(settings)

        def compute() -> str:
            try:
                digest = model_digest(planned(source, seed or 0))
            except PackageModelError:
                pinned = SPLIT_GGUF.get(source.removeprefix("package:"))
                if pinned is None:
                    raise
                digest = pinned.gguf_sha256  # the assembled file is checked against the sha256 the code pins
            if digest is None:
                raise CannotTell(f"{source!r} is a hub id, whose files transformers fetches")
            return digest

        return self._once(("model", source, seed), compute)

    def tokenizer(self, settings: dict[str, Any]) -> Any:
        source, seed = self._model_key(settings)
        return self._once(("tokenizer", source, seed), lambda: source_tokenizer(source, seed or 0))

    def tokenizer_digest(self, settings: dict[str, Any]) -> tuple[str, int, int]:
        return self._once(("tokenizer digest", *self._model_key(settings)),
                          lambda: tokenizer_digest(self.tokenizer(settings)))

    def _native_size(self, settings: dict[str, Any]) -> int:
        known = facts(str(settings["model"]))
        if known is None or known.vocab_size is None:
            raise CannotTell(f"the vocabulary size of {settings['model']!r} is not known here")
        return known.vocab_size

    @staticmethod
    def _data_key(settings: dict[str, Any]) -> str:
        shaping = {name: settings.get(name) for name, setting in SETTINGS.items()
                   if name not in _NOT_DATA_SETTINGS and setting.owner not in _NOT_DATA_OWNERS}
        return json.dumps(shaping, sort_keys=True, default=str)

    def _built(self, settings: dict[str, Any]) -> Any:
        """The training data as the tokenizer gives it, before any vocabulary slicing."""
        source, seed = self._model_key(settings)

        def compute() -> Any:
            return data_module.build_for(settings, self.tokenizer(settings), self._native_size(settings),
                                         random_weights=planned(source, seed or 0).random_weights)

        return self._once(("training", *self._model_key(settings), self._data_key(settings)), compute)

    def _sliced(self, settings: dict[str, Any]) -> tuple[Any, set[int], Any, Any]:
        return self._once(("sliced", *self._model_key(settings), self._data_key(settings)),
                          lambda: sliced_training(self.tokenizer(settings), settings, self._built(settings),
                                                  self._native_size(settings)))

    def training(self, settings: dict[str, Any]) -> Any:
        """The data the cell trains on: made again in the kept tokens where its vocabulary is sliced."""
        return self._built(settings) if settings.get("vocabulary") == "native" else self._sliced(settings)[3]

    def kept(self, settings: dict[str, Any]) -> tuple[list[int], set[int]]:
        kept, protected, _, _ = self._sliced(settings)
        return kept.ids, protected

    def kept_digest(self, settings: dict[str, Any]) -> str:
        return ids_digest(self.kept(settings)[0])

    @staticmethod
    def project_task(task: str) -> bool:
        """A task whose data vramlab writes (harness/tasks/catalog.py), so that its digest can be computed here."""
        return task in PROJECT_TASKS

    @staticmethod
    def evaluation_parameters(matrix: str, settings: dict[str, Any], task: str) -> dict[str, Any] | None:
        """A project task's parameters as the evaluate stage records them (a `_fixed` task: under the plan's shared
        condition, not the cell's)."""
        return task_parameters(task, settings, _plan(matrix))

    def evaluation_data(self, matrix: str, settings: dict[str, Any], task: str) -> tuple[dict[str, Any] | None, str]:
        """A project task's parameters and the sha256 of its data file, as the evaluate stage writes them."""
        definition, plan = PROJECT_TASKS[task], _plan(matrix)
        parameters = task_parameters(task, settings, plan)

        def compute() -> str:
            records = definition.records(definition.context(settings, plan, self.tokenizer(settings)))
            with tempfile.TemporaryDirectory(prefix="vramlab-fresh-") as folder:
                return hashlib.sha256(write_records(records, Path(folder) / f"{task}.jsonl").read_bytes()).hexdigest()

        key = ("evaluation", task, *self._model_key(settings), json.dumps(parameters, sort_keys=True))
        return parameters, self._once(key, compute)


def _plan(matrix: str) -> EvaluationPlan:
    try:
        return evaluation_plan(matrix)
    except MatrixError as err:
        raise CannotTell(f"the matrix {matrix!r} cannot be read here ({' '.join(str(err).split())[:200]})") from None
