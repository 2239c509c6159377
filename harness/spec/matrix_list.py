"""The matrices vramlab knows (`vramlab matrices`): each one's description, its cells, and what running it needs on
this machine, told from the matrix file alone (no model is loaded, nothing is built)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.spec.design import random_weights
from harness.spec.matrix import MatrixError, available_matrices, expand, load_matrix, matrix_path
from harness.stack.models.sources import install_problem
from harness.stack.techniques import needs_cuda


@dataclass(frozen=True)
class MatrixEntry:
    name: str
    description: str
    cells: int = 0
    skipped: int = 0  # by a declared conflict: listed, never run
    gpu_cells: int = 0  # of the cells run, those that only a CUDA GPU can measure
    # each model its cells load, with what this machine lacks to load it (one line naming the pip line), or None
    models: tuple[tuple[str, str | None], ...] = ()
    problem: str | None = None  # a matrix file that cannot be expanded: why

    def device(self) -> str:
        run = self.cells - self.skipped
        if self.gpu_cells == 0:
            return "CPU"
        return "CUDA GPU" if self.gpu_cells == run else f"CUDA GPU for {self.gpu_cells} of {run} cells"

    def needs(self) -> str:
        """One line: the device, the GPU extra where a cell needs CUDA, and each model with whether it is here."""
        if self.problem:
            return f"cannot be read: {self.problem}"
        said = [self.device() + (" (pip install -e '.[gpu]')" if self.gpu_cells else "")]
        for model, problem in self.models:
            kind = "random weights, built here" if random_weights(model) else problem or "installed"
            said.append(f"{model} ({kind})")
        return "; ".join(said)

    def as_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "cells": self.cells, "skipped": self.skipped,
                "device": None if self.problem else self.device(), "needs": self.needs(), "problem": self.problem,
                "models": {model: problem or "here" for model, problem in self.models},
                "file": str(matrix_path(self.name))}


def entry(name: str) -> MatrixEntry:
    try:
        _, spec = load_matrix(name)
        cells = expand(name, check_model=False)
    except MatrixError as err:
        return MatrixEntry(name, "", problem=str(err))
    description = str(spec.get("description", "")) if isinstance(spec, dict) else ""
    run = [c for c in cells if c.conflict is None]
    models = tuple((model, install_problem(model)) for model in dict.fromkeys(str(c.settings["model"]) for c in run))
    return MatrixEntry(name, " ".join(description.split()), len(cells), len(cells) - len(run),
                       sum(needs_cuda(c.settings) for c in run), models)


def matrix_entries() -> list[MatrixEntry]:
    return [entry(name) for name in available_matrices()]
