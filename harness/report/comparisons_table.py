"""The quality report's planned paired comparisons, from reports/<matrix>/comparisons.csv (one row a comparison,
written by the quality statistics): as a table (effect, its interval at its Holm level, seeds and items, the verdict
and the rule
that gave it) for report.md and tables.tex, and as the frame the paired-difference chart draws. A report without
the file has neither, and says so."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.core.errors import UsageError, one_line
from harness.report.comparison_text import read_comparisons
from harness.report.tables import Column, Table, number

FILE = "comparisons.csv"
COLUMNS = ("family", "question", "metric", "a", "b", "value_a", "value_b", "effect", "low", "high", "seeds", "items",
           "verdict", "rule")
NUMBERS = ("value_a", "value_b", "effect", "low", "high", "seeds", "items")
OPTIONAL_NUMBERS = ("margin",)  # the equivalence margin of "no difference", where the statistics state one
DIGITS = 3  # effects of a few thousandths of a bit per byte are the ones discussed


def read(folder: Path) -> pd.DataFrame | None:
    """comparisons.csv as the quality statistics wrote it, checked: None where the folder has none."""
    path = folder / FILE
    try:
        frame = read_comparisons(folder)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise UsageError(f"{path} is not a table of comparisons ({one_line(err)}); write it again from the quality "
                         "statistics") from None
    if frame is None:
        return None
    missing = [c for c in COLUMNS if c not in frame]
    if missing:
        raise UsageError(f"{path} lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)} (it needs "
                         f"{', '.join(COLUMNS)}); write it again from the quality statistics")
    for column in [*NUMBERS, *(c for c in OPTIONAL_NUMBERS if c in frame)]:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[column][values.isna() & frame[column].notna()]
        if len(bad):
            raise UsageError(f"{path}: {column} holds {str(bad.iloc[0])!r}, not a number (row {bad.index[0] + 2}); "
                             "write it again from the quality statistics")
        frame[column] = values
    inverted = frame[frame["low"] > frame["high"]]
    if len(inverted):
        raise UsageError(f"{path}: row {inverted.index[0] + 2} has its interval's low end above its high end")
    return frame


def label(row: pd.Series) -> str:
    """A comparison in a few words: what is held against what."""
    return f"{row['a']} vs {row['b']}"


def table(frame: pd.DataFrame) -> Table:
    margin = "margin" in frame
    columns = [Column("family", numeric=False), Column("question", numeric=False), Column("metric", numeric=False),
               Column("a vs b", numeric=False), Column("effect (a − b)"), Column("low", group="interval"),
               Column("high", group="interval"), *([Column("level (%)")] if "level" in frame else []),
               *([Column("margin")] if margin else []), Column("seeds"), Column("items"),
               Column("verdict", numeric=False)]
    rows = [[str(r["family"]), str(r["question"]), str(r["metric"]).replace("_", " "), label(r),
             number(r["effect"], DIGITS, signed=True), number(r["low"], DIGITS, signed=True),
             number(r["high"], DIGITS, signed=True), *([number(100 * r["level"], 2)] if "level" in frame else []),
             *([number(r["margin"], DIGITS)] if margin else []),
             number(r["seeds"], 0), number(r["items"], 0), str(r["verdict"])] for _, r in frame.iterrows()]
    rules = "; ".join(f"{verdict}: {rule}" for verdict, rule in
                      frame.drop_duplicates("verdict")[["verdict", "rule"]].itertuples(index=False))
    note = ("Each planned comparison, paired by seed and item: the effect is a's score less b's, with its interval "
            "from the crossed bootstrap at the level Holm's step gives it (95% for a family of one), over the seeds "
            f"and items shown. The verdicts' rules: {rules}. Every row: `{FILE}`.")
    return Table("comparisons", "Paired comparisons with their intervals at their Holm levels", columns, rows, note)


def markdown(frame: pd.DataFrame | None, quality: bool) -> list[str]:
    """The section of report.md: the table, or, in a quality report without the file, why it is not there."""
    if frame is None:
        return ["## Paired comparisons", "", f"No `{FILE}` in this folder: the table of paired comparisons and the "
                "paired-difference chart are left out (the quality statistics write the file).", ""] if quality else []
    return ["## Paired comparisons", "", *table(frame).markdown(),
            "Chart: `paired_differences.pdf`/`.png` (each effect with its interval, zero marked"
            + (", the margin of \"no difference\" shaded" if "margin" in frame else "") + ").", ""]
