"""The tables and design a report is made from (reports/<matrix>/: cells.csv, steps.csv, design.json,
estimate.csv, environment.csv), checked as they are read. They are written by `vramlab aggregate`, but they are
files a person can open and edit: an emptied file, a dropped column, text in a number column, a status vramlab
never writes, or a design naming a cell the tables lack is one line naming the file and the fix, never a
traceback or a report that says something the results do not."""

from __future__ import annotations

import json
import math
import os
import typing
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import TypeAdapter, ValidationError

from harness.core.errors import UsageError, one_line
from harness.report.cell_groups import group_name
from harness.results import STEP_COLUMNS
from harness.results.model import Metrics, Status
from harness.spec.design import ReportDesign
from harness.spec.settings import SETTINGS

STATUSES = (*(s.value for s in Status), "pending")  # pending: a row of a partial table (aggregate --partial)
CELL_TEXT = ("order", "cell_id", "name", "status")  # every row has them
ESTIMATE_REQUIRED = ("cell_id", "name", "status", "measured_bytes", "predicted_bytes")


def _fix(folder: Path) -> str:
    return f"; run `vramlab aggregate {folder.name}` to write it again from the result files"


def _base_types(annotation: Any) -> set[Any]:
    """int | None -> {int, NoneType}; Annotated[int, ...] (a constrained number) counts as int."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _base_types(typing.get_args(annotation)[0])
    args = typing.get_args(annotation)
    return set().union(*map(_base_types, args)) if args else {annotation}


def _numeric_fields(model: Any) -> list[str]:
    """The fields of a result model that hold numbers (int or float, maybe None)."""
    return [name for name, field in model.model_fields.items()
            if (kinds := _base_types(field.annotation)) & {int, float} and not kinds & {str, bool}]


def table_there(path: Path) -> bool:
    """Whether the table at `path` is there; something else in its place (a folder) is said as what it is, since
    "does not exist" would send a person to `vramlab aggregate`, which cannot write over it."""
    if not os.path.lexists(path) or path.is_file():
        return path.is_file()
    what = "a folder" if path.is_dir() else "not a file"
    raise UsageError(f"{path} is {what}, in the place of a table vramlab writes; move it away, then run `vramlab "
                     f"aggregate {path.parent.name}` to write the table from the result files")


def _cut_short(path: Path) -> bool:
    """A table vramlab wrote ends with a line break (pandas ends every line with one): one that does not was cut
    short, perhaps inside its header, where it would still read as a table of no rows or fewer columns."""
    with open(path, "rb") as handle:
        if handle.seek(0, os.SEEK_END) == 0:
            return False  # empty: said as such by the reader
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def read_table(path: Path, required: tuple[str, ...] | list[str], numeric: list[str] | tuple[str, ...] = (),
               dtype: dict[str, Any] | None = None) -> pd.DataFrame:
    """A CSV table with its required columns, and numbers (or empty cells) in its numeric columns."""
    table_there(path)
    if _cut_short(path):
        raise UsageError(f"{path}: damaged, not a table vramlab wrote (it ends inside a line: cut short)"
                         f"{_fix(path.parent)}")
    try:
        # an empty field is a missing value, as aggregate writes one; "nan" or "NA" typed in is text, said below
        frame = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=[""])
    except pd.errors.EmptyDataError:
        raise UsageError(f"{path}: empty{_fix(path.parent)}") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise UsageError(f"{path}: not a table vramlab wrote ({one_line(err, 200)}){_fix(path.parent)}") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UsageError(f"{path}: no column {', '.join(missing)}{_fix(path.parent)}")
    for column in numeric:
        if column not in frame.columns:
            continue
        values = pd.to_numeric(frame[column], errors="coerce")
        # "nan" and "inf" read as numbers, but aggregate writes no such thing: a missing value is an empty field
        bad = frame[column].notna() & (values.isna() | values.isin([math.inf, -math.inf]))
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise UsageError(f"{path}: line {row + 2}, column {column}: {str(frame[column].iloc[row])[:60]!r} is not "
                             f"a number{_fix(path.parent)}")
        frame[column] = values
    return frame


def _metric_problem(cells: pd.DataFrame) -> tuple[int, str, str] | None:
    """The first (row, column, why) of a measurement no result can hold (a negative throughput, a fractional step
    count: the result model's own bounds), or an ok row without the device peak every ok result has."""
    for column in [c for c in Metrics.columns() if c in cells.columns]:
        check: TypeAdapter[Any] = TypeAdapter(Metrics.model_fields[column].annotation or Any)
        for row, value in enumerate(cells[column]):
            if pd.isna(value):
                continue
            try:
                check.validate_python(value)
            except ValidationError as err:
                return row, column, f"{value:g} is none a result can hold ({err.errors()[0]['msg'].lower()})"
    missing = (cells["status"] == "ok") & cells.get("peak_device_bytes", pd.Series(float("nan"), cells.index)).isna()
    if missing.any():
        return int(missing.to_numpy().nonzero()[0][0]), "peak_device_bytes", "empty on an ok row (every ok result " \
            "records its peak)"
    return None


def read_cells(folder: Path) -> pd.DataFrame:
    path = folder / "cells.csv"
    metrics = [c for c in _numeric_fields(Metrics) if c in Metrics.columns()]
    # settings that are plain numbers (not those that also take a word, as vocabulary's `native`)
    settings = [s.name for s in SETTINGS.values() if s.kind in (int, float) and not s.levels and not s.validate]
    numeric = ["order", *metrics, *settings]
    # hex ids and commits can read as numbers ("0123456", "12e4...") unless held as text
    cells = read_table(path, CELL_TEXT, numeric, dtype={"cell_id": str, "code_commit": str})
    if cells.empty:  # aggregate writes a row for every cell of the matrix (a pending one where it has no result)
        raise UsageError(f"{path}: damaged, not a table vramlab wrote (a header and no row){_fix(folder)}")
    for column in CELL_TEXT:
        empty = cells[column].isna()
        if empty.any():
            raise UsageError(f"{path}: line {int(empty.to_numpy().nonzero()[0][0]) + 2} has no {column}{_fix(folder)}")
    again = cells["cell_id"].duplicated()
    if again.any():  # aggregate writes each cell once: a repeated row would be counted twice in every summary
        row = int(again.to_numpy().nonzero()[0][0])
        first = int((cells["cell_id"] == cells["cell_id"].iloc[row]).to_numpy().nonzero()[0][0])
        raise UsageError(f"{path}: line {row + 2} repeats the cell {cells['cell_id'].iloc[row]} of line {first + 2}, "
                         f"and each cell has one row{_fix(folder)}")
    unknown = sorted(set(cells["status"].astype(str)) - set(STATUSES))
    if unknown:
        raise UsageError(f"{path}: status {unknown[0]!r} is none vramlab writes ({', '.join(STATUSES)}){_fix(folder)}")
    problem = _metric_problem(cells)
    if problem is not None:
        row, column, why = problem
        raise UsageError(f"{path}: line {row + 2}, column {column}: {why}{_fix(folder)}")
    return cells


def read_steps(folder: Path, cells: pd.DataFrame) -> pd.DataFrame:
    """steps.csv, with the steps of every ok cell that measured some: a cell without its steps would be drawn and
    compared without its loss, without a word."""
    path = folder / "steps.csv"
    steps = read_table(path, STEP_COLUMNS, ("step", "seconds", "loss"), dtype={"cell_id": str})
    trained = cells[(cells["status"] == "ok") & (cells.get("measured_steps", pd.Series(0, cells.index)).fillna(0) > 0)]
    without = trained[~trained["cell_id"].isin(set(steps["cell_id"]))]
    if len(without):
        first = without.iloc[0]
        raise UsageError(f"{path}: no step of the ok cell {first['name']} ({first['cell_id']}), which "
                         f"{folder / 'cells.csv'} says measured {int(first['measured_steps'])} steps "
                         f"({len(without)} of its {len(trained)} trained cells have none){_fix(folder)}")
    return steps


def read_estimate(folder: Path) -> pd.DataFrame | None:
    """estimate.csv, where the aggregate step wrote one; an empty text field reads as ""."""
    path = folder / "estimate.csv"
    if not table_there(path):
        return None  # tables aggregated before estimate.csv existed
    text = ["cell_id", "name", "status", "peak_moment", "unpredicted"]
    numbers = ["measured_bytes", "predicted_bytes", "measured_allocated_bytes", "predicted_allocated_bytes"]
    estimate = read_table(path, ESTIMATE_REQUIRED, numbers, dtype=dict.fromkeys(text, str))
    return estimate.fillna(dict.fromkeys(text, ""))


def read_environment(folder: Path) -> pd.DataFrame:
    """environment.csv: methods.md is written from it, so without it the report would say no environment was
    recorded although every result file records one."""
    path = folder / "environment.csv"
    if not table_there(path):
        raise UsageError(f"{path} does not exist{_fix(folder)}")
    return read_table(path, ("cells",), ("cells", "cpu_count", "gpu_memory_bytes"), dtype=str)


def read_design(folder: Path, cells: pd.DataFrame) -> ReportDesign:
    """design.json, whose every group is one of cells.csv's (a design written for other names than the tables'
    would compare cells that are not there)."""
    path = folder / "design.json"
    try:
        design = ReportDesign.read(path)
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        kind = "not valid JSON" if isinstance(err, json.JSONDecodeError) else f"not a design vramlab wrote " \
            f"({type(err).__name__}: {one_line(err, 120)})"
        raise UsageError(f"{path}: {kind}{_fix(folder)}") from None
    groups = {group_name(str(n)) for n in cells["name"]}
    named = [design.baseline, *design.deltas, *design.changes, *(g for line in design.sweep for g in line.cells)]
    stray = next((g for g in named if g not in groups), None)
    if stray is not None:
        raise UsageError(f"{path}: names the cell {stray!r}, which {folder / 'cells.csv'} has no row of (the two "
                         f"were written for different names){_fix(folder)}")
    return design
