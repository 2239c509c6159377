"""A report of one matrix is set from its tables (reports/<matrix>/cells.csv and the rest), which `aggregate` makes
from the result files. A table edited by hand, or made from results since changed, would be published as measured:
before a report is set, its tables are made again from the result files (into a folder of their own) and must be
what the reports folder holds."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd

from harness.core.errors import UsageError
from harness.report.aggregate import aggregate
from harness.report.rebuild import partial, source_matrix
from harness.spec.matrix import matrix_path

# what aggregate writes and the report reads: every one of them must agree. The report's reader itself names one
# of the first five missing; the others are read only where they are, so one missing would go unsaid
ALWAYS_READ = ("cells.csv", "steps.csv", "estimate.csv", "environment.csv", "design.json")
TABLES = (*ALWAYS_READ, "freshness.csv", "quality.csv", "items.csv", "comparisons.csv")


def first_difference(held: Path, made: Path) -> str:
    """Where two versions of a CSV table first differ, in words: a row's key and column, or their shapes."""
    try:
        old, new = (pd.read_csv(path, dtype=str, keep_default_na=False) for path in (held, made))
    except (ValueError, OSError, pd.errors.ParserError):
        return "it cannot be read as a table"
    if list(old.columns) != list(new.columns):
        return "its columns differ"
    if len(old) != len(new):
        return f"it has {len(old)} rows where the results give {len(new)}"
    for (row, a), (_, b) in zip(old.iterrows(), new.iterrows(), strict=True):
        for column in old.columns:
            if a[column] != b[column]:
                key = " ".join(str(a[k]) for k in ("cell_id", "task", "metric", "step") if k in old.columns)
                return (f"line {row + 2}{f' ({key})' if key else ''}, column {column}: {a[column] or '(empty)'} "
                        f"there, {b[column] or '(empty)'} from the results")
    return "its bytes differ (quoting or number format)"


def readable(path: Path) -> bool:
    try:
        if path.suffix == ".json":
            json.loads(path.read_bytes())
        else:
            pd.read_csv(path, dtype=str)
    except (ValueError, OSError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return False
    return True


def disagreement(name: str, results_dir: Path, reports_dir: Path) -> str | None:
    """One line naming the first table of reports_dir/<name>/ that the result files under results_dir/<name>/ do
    not give, or None where they all agree (or there are no results to make them from)."""
    folder = reports_dir / name
    if not (folder / "cells.csv").is_file() or not readable(folder / "cells.csv") or not (results_dir / name).is_dir():
        return None  # nothing to make the tables from, or a table the report's reader names
    matrix = source_matrix(name, results_dir)
    if not matrix_path(matrix).is_file():
        return None  # its results name no matrix file this checkout has (tables aggregated from a file given by path)
    with tempfile.TemporaryDirectory(prefix=".vramlab-tables-") as scratch:
        made = Path(scratch) / name
        aggregate(matrix, results_dir, Path(scratch), partial=partial(reports_dir, name))
        for table in TABLES:
            here, there = folder / table, made / table
            if not here.is_file():
                if here.exists() or table in ALWAYS_READ or not there.is_file():
                    continue  # the report's own reader names it, in its words (or neither has the table)
                return f"{here} is missing, and the result files under {results_dir / name}/ give one"
            # a table parsed only where its bytes differ: most agree, and items.csv may be large
            if (there.is_file() and here.read_bytes() == there.read_bytes()) or not readable(here):
                continue  # agreed, or damage the report's own reader names
            if not there.is_file():
                return f"{here} is there, and the result files under {results_dir / name}/ give none"
            why = first_difference(here, there) if table.endswith(".csv") else "its content differs"
            return f"{here} is not what the result files under {results_dir / name}/ give: {why}"
    return None


def check_tables(name: str, results_dir: Path, reports_dir: Path) -> None:
    problem = disagreement(name, results_dir, reports_dir)
    if problem:
        raise UsageError(f"report: {problem}; a report is set only from tables its result files give: make them "
                         f"again (`vramlab aggregate {name}`, or `snakemake -R aggregate`), or restore the table "
                         "from the commit (`git checkout HEAD -- <file>`)")
