"""vramlab from Python (a notebook, a script): the matrices there are, a matrix's results as a pandas DataFrame, and
the memory estimate of any configuration, with no GPU and no weights. The same functions the commands use; these
docstrings are the reference, and docs/python-api.md shows them at work.

    from harness import api

    api.matrices()                                   # ['ceiling-16gb', 'claims', ..., 'smoke', 'vocab-16gb']
    cells = api.results("seed-16gb")                 # one row a cell: settings, peaks, tokens/s, MFU, status
    fit = api.estimate(model="arch:qwen3-8b", context=20480, quantization="nf4", kernels="unsloth",
                       checkpointing="offload")
    fit.fits, fit.total_gib                          # (True, 11.47...)

Bad input raises harness.core.errors.UsageError (a ValueError) with the one line the commands would print.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.core.budget import budget_bytes
from harness.core.errors import UsageError
from harness.estimate import host_budget_exceeded
from harness.estimate.table import cell_estimate, render
from harness.report.aggregate import load_results, tables
from harness.results.results_dir_mistakes import results_dir_mistake
from harness.spec.cells import Cell
from harness.spec.matrix import available_matrices, expand, expand_spec

GIB = 2**30
__all__ = ["Fit", "cells", "estimate", "estimates", "matrices", "results", "steps"]


def matrices() -> list[str]:
    """The names of the matrices found here (ablations/ of this checkout or of the installed package), sorted; any
    of them, or the path of a matrix file, is what the other functions take as `matrix`."""
    return available_matrices()


def cells(matrix: str) -> pd.DataFrame:
    """A matrix's cells, in its order: `cell_id`, `name`, and one column per setting (the defaults filled in)."""
    return pd.DataFrame([{"cell_id": c.cell_id, "name": c.name, **c.settings}
                         for c in expand(_one_matrix("cells", matrix))])


def results(matrix: str, results_dir: str | Path = "results", partial: bool = True) -> pd.DataFrame:
    """A matrix's results as one row a cell, the columns of `reports/<matrix>/cells.csv`: the settings, the status
    (ok, oom, skipped, error, timeout) and reason, the peaks in bytes (`peak_device_bytes`, `peak_allocated_bytes`,
    ...), `tokens_per_second`, `mfu`, the first and final loss. Read from `results_dir/<matrix>/<cell_id>.json`
    (every file validated as `vramlab check` does). With `partial` (the default), a cell without a result yet is a
    row of status `pending`; without it, a missing result raises. A `results_dir` that does not exist raises: every
    cell would be pending, which reads as a matrix not run rather than a folder named wrong."""
    if not isinstance(partial, bool):  # partial="no" would be true
        raise UsageError(f"results: partial={partial!r}; give True or False")
    return tables(_load("results", matrix, results_dir, partial))[0]


def _load(function: str, matrix: Any, results_dir: str | Path, partial: bool) -> list[tuple[Cell, Any]]:
    """The matrix's cells with their results, once the matrix (read first, so that a name misspelt is told as such)
    and the results folder are known to be ones that hold them."""
    matrix = _one_matrix(function, matrix)
    folder = _results_folder(results_dir, function)
    found = load_results(matrix, folder, partial=True)
    mistake = results_dir_mistake(folder, found[0][0].matrix, str(results_dir)) if found else None
    if mistake:
        raise UsageError(f"{function}: {mistake}")
    if not partial and any(result is None for _, result in found):
        load_results(matrix, folder, partial=False)  # raises, naming the first cell without a result
    return found


def _one_matrix(function: str, matrix: Any) -> str:
    # a list or None would reach pathlib and fail there with a TypeError about os.fspath, naming nothing of ours
    if isinstance(matrix, str | os.PathLike) and str(matrix).strip():
        return str(os.fspath(matrix))
    raise UsageError(f"{function}: matrix={matrix!r}; give one matrix: its name (api.matrices() lists them) or the "
                     "path of its YAML file")


def _results_folder(results_dir: str | Path, function: str) -> Path:
    if not isinstance(results_dir, str | os.PathLike):
        raise UsageError(f"{function}: results_dir={results_dir!r}; give the folder that holds "
                         "<matrix>/<cell_id>.json, such as the checkout's results")
    folder = Path(results_dir)
    if not folder.is_dir():
        where = "" if folder.is_absolute() else f" (from {Path.cwd()})"
        raise UsageError(f"{function}: results_dir {str(results_dir)!r}{where} is not a folder; give the folder that "
                         "holds <matrix>/<cell_id>.json, such as the checkout's results")
    return folder


def steps(matrix: str, results_dir: str | Path = "results") -> pd.DataFrame:
    """Every optimizer step of the matrix's cells that have a result: `cell_id`, `name`, `step`, `seconds`, `loss`,
    and `warmup` (the steps left out of the timings). No result there of any cell is said with a warning, as an
    empty frame alone reads the same as a folder named wrong."""
    found = tables(_load("steps", matrix, results_dir, partial=True))[1]
    if found.empty:
        warnings.warn(f"steps: no cell of {matrix!r} has a result under {Path(results_dir)}; the frame is empty",
                      stacklevel=2)
    return found


@dataclass(frozen=True)
class Fit:
    """The predicted device memory of one configuration (harness/estimate/memory_model.py) against its budget.
    `str(fit)` is what `vramlab estimate` prints for it."""

    cell: Cell
    total_bytes: int
    budget_bytes: int
    peak_moment: str  # when the peak happens: "backward through the LM head and loss", ...
    components: pd.DataFrame  # one row a component: name, bytes, GiB, detail
    notes: list[str] = field(default_factory=list)
    text: str = ""
    host_fits: bool = True  # False where offloaded checkpointing pins more than the cell's host budget

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.budget_bytes and self.host_fits

    @property
    def total_gib(self) -> float:
        return self.total_bytes / GIB

    def __str__(self) -> str:
        return self.text


def estimate(**settings: Any) -> Fit:
    """The estimate of one cell with these settings over the defaults (`vramlab settings` lists them all), e.g.
    `estimate(model="arch:qwen3-8b", context=20480, quantization="nf4")`. The model may be any source whose shapes
    can be read here: an arch: preset, a GGUF file or package, a folder with config.json, a hub id in the hub cache.
    Raises UsageError for a setting that is no setting or a value it cannot take, or where the estimate has nothing
    to say (a declared conflict, shapes not known here)."""
    # a number from a frame (api.cells, api.results) is a numpy scalar: it is the number it holds; a model given as
    # a Path is the path it holds, as api.results takes its folder
    given = {key: value.item() if isinstance(value, np.generic) else os.fspath(value)
             if isinstance(value, os.PathLike) else value for key, value in settings.items()}
    (cell,) = expand_spec("estimate", {"design": "list", "cells": [{"name": "cell", **given}]}, source="api")
    found, why_not = cell_estimate(cell)
    if found is None:
        raise UsageError(f"no estimate: {why_not}")
    components = pd.DataFrame([{"name": c.name, "bytes": c.bytes, "GiB": c.bytes / GIB, "detail": c.detail}
                               for c in found.components])
    return Fit(cell, found.total_bytes, budget_bytes(cell.settings["budget"]), found.peak_moment, components,
               list(found.notes), render(cell, found, None), host_budget_exceeded(cell.settings, found) is None)


def estimates(matrix: str) -> pd.DataFrame:
    """The estimate of every cell of a matrix: `cell_id`, `name`, `predicted_bytes`, `budget_bytes`, `fits` (its
    device budget and its host budget both), and
    `why_not` where there is none (a declared conflict, shapes not known here)."""
    rows = []
    for cell in expand(_one_matrix("estimates", matrix)):
        found, why_not = cell_estimate(cell)
        budget = budget_bytes(cell.settings["budget"])
        rows.append({"cell_id": cell.cell_id, "name": cell.name,
                     "predicted_bytes": found.total_bytes if found else None, "budget_bytes": budget,
                     "fits": (found.total_bytes <= budget and host_budget_exceeded(cell.settings, found) is None
                              if found else None), "why_not": why_not})
    return pd.DataFrame(rows).astype({"predicted_bytes": "Int64"})
