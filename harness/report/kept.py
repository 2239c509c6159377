"""A report is never replaced by one built from fewer measured results without a word: where a row the table on disk
shows as measured (a cell's result, a claim's reading) would become unmeasured in the new one, nothing is written
and the one line says which. A row whose key left the matrix (a cell removed from it) is the researcher's change."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.core.errors import UsageError


def _measured(table: pd.DataFrame, key: list[str], column: str, unmeasured: str) -> set[tuple[str, ...]]:
    rows = table.loc[table[column].astype(str) != unmeasured, key].astype(str)
    return set(rows.itertuples(index=False, name=None))


def keep_measured(path: Path, new: pd.DataFrame, key: list[str], column: str, unmeasured: str, source: Path,
                  what: str) -> None:
    """Refuse to write `new` over the table at `path` where a row measured there is in `new` but unmeasured."""
    try:
        old = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError):
        return  # no table there yet (or none that can be read, which aggregate has always replaced)
    if not {*key, column} <= set(old.columns) or not {*key, column} <= set(new.columns):
        return
    keys = set(new[key].astype(str).itertuples(index=False, name=None))
    lost = sorted((_measured(old, key, column, unmeasured) & keys) - _measured(new, key, column, unmeasured))
    if lost:
        raise UsageError(f"{path} shows {len(lost)} {what} measured that {source} holds no result for (first: "
                         f"{' '.join(lost[0])}); it is kept as it is: give the results folder that holds them, or "
                         "another --reports-dir for the smaller report")
