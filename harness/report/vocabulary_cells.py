"""The sliced vocabularies of a matrix, one row a cell: what the kept set holds (counted tokens, ids filled only to
reach a size), the share of its training tokens spelled outside it, and whether training kept every target: a
cell that cut one is not publishable. From cells.csv; why it is so: docs/stack.md (the vocabulary)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from harness.report.tables import MISSING, Column, Table, number

NOT_PUBLISHABLE = "no: targets cut"


def sliced(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells whose vocabulary was sliced (a native one records its size, never a share outside)."""
    if "vocabulary_outside_share" not in cells:
        return cells.iloc[0:0]
    return cells[cells["vocabulary_outside_share"].notna()]


def _count(value: Any) -> str:
    return MISSING if pd.isna(value) else f"{int(value):,}"


def targets_cut(row: pd.Series) -> str:
    """The targets cut after spelling, or what an older record lets one say about them."""
    cut = row.get("vocabulary_targets_cut")
    if pd.notna(cut):
        return f"{int(cut):,}"
    tokens = row.get("vocabulary_tokens_cut")
    return f"some ({int(tokens):,} tokens)" if pd.notna(tokens) and tokens > 0 else "not recorded"


def publishable(row: pd.Series) -> str:
    cut = row.get("vocabulary_targets_cut")
    tokens = row.get("vocabulary_tokens_cut")
    if (pd.notna(cut) and cut > 0) or (pd.isna(cut) and pd.notna(tokens) and tokens > 0):
        return NOT_PUBLISHABLE
    return "yes" if pd.notna(cut) else "not known"


def kept_size(group: pd.DataFrame) -> str:
    """The vocabulary of a group of cells (its seeds) as a sentence says it: the size asked, or the counted set with
    the sizes its cells kept."""
    level = str(group["vocabulary"].iloc[0])
    if level != "counted":
        return f"{int(float(level)):,} tokens"
    sizes = sorted({int(v) for v in group["vocabulary_size"].dropna()}) if "vocabulary_size" in group else []
    return "the counted tokens" + (f" ({', '.join(f'{s:,}' for s in sizes)} kept)" if sizes else "")


def sliced_table(cells: pd.DataFrame) -> Table | None:
    rows = sliced(cells)
    if rows.empty:
        return None
    columns = [Column("cell", numeric=False), Column("kept"), Column("counted"), Column("filled"),
               Column("training tokens outside (%)"), Column("targets cut"), Column("targets skipped"),
               Column("publishable", numeric=False)]
    body = [[str(r["name"]), _count(r["vocabulary_size"]), _count(r.get("vocabulary_counted")),
             _count(r.get("vocabulary_filled")), number(100 * r["vocabulary_outside_share"], 2), targets_cut(r),
             _count(r.get("vocabulary_targets_skipped")), publishable(r)] for _, r in rows.iterrows()]
    note = ("kept: the tokens the sliced model has (special, added and byte tokens among them); counted: distinct "
            "tokens of the text the set was counted over; filled: ids kept only to reach the size asked (the lowest "
            "ids); training tokens outside: the share of the tokenizer's tokens of the training sequences spelled "
            "with their bytes (or replaced by the fallback token); targets cut: training targets cut after "
            "spelling (a cell that cut any is not publishable); targets skipped: targets that alone were longer "
            "than the context once spelled, so another one was taken. –: not recorded (a result from before these "
            "were counted).")
    return Table("vocabulary", "Sliced vocabularies: what was kept, and whether training kept its targets", columns,
                 body, note)
