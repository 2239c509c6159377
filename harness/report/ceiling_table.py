"""The ceiling report's table (reports/<matrix>/ceiling.md and its ceiling.tex), from ceiling.csv's rows: one
Table, so that the Markdown and the LaTeX say the same, each column with one number of decimals."""

from __future__ import annotations

import pandas as pd

from harness.report.tables import MISSING, Column, Table, number

GIB = 2**30


def _gib(value: float | None) -> str:
    return number(value / GIB, 2) if pd.notna(value) else MISSING


def _tokens(value: float | None) -> str:
    return f"{int(value):,}" if pd.notna(value) else MISSING


def ceiling_table(table: pd.DataFrame) -> Table:
    """table: ceiling.csv, one row a configuration (harness.results.ceiling.Search.row)."""
    iqr = "step_seconds_iqr" in table and bool(table["step_seconds_iqr"].notna().any())
    columns = [Column("configuration", numeric=False), Column("budget", numeric=False),
               Column("longest context that fits (tokens)"), Column("estimated (tokens)"),
               Column("peak device there (GiB)"), Column("host no file backs there (GiB)"),
               Column("of it pinned (GiB)"), Column("tokens/s there"), *([Column("step IQR (s)")] if iqr else []),
               Column("probes (context:status)", numeric=False)]
    rows = [[str(r["cell"]), str(r["budget"]), str(r["answer"]), _tokens(r["estimated_context"]),
             _gib(r["peak_device_bytes"]), _gib(r["peak_host_unmapped_bytes"]), _gib(r["peak_host_pinned_bytes"]),
             number(r["tokens_per_second"], 0), *([number(r["step_seconds_iqr"], 3)] if iqr else []),
             str(r["probes"])] for _, r in table.iterrows()]
    note = ("Peaks and speed of the probe at the longest context that fits; tokens/s: – where that probe shared "
            "the device with other probes (its speed is no measurement).")
    if iqr:
        note += (" Step IQR: the interquartile range of that probe's timed step times (warm-up excluded; their "
                 "range where fewer than 4 steps were timed).")
    return Table("ceiling", "The longest context within the budget, per configuration", columns, rows, note)
