"""Which results a report may compare, and from which code they come: the verdicts `vramlab check --fresh` wrote
beside the results (results/<matrix>/freshness.json) become reports/<matrix>/freshness.csv at the aggregate step,
a stale cell's rows leave every comparison (quality.csv, items.csv, the tables and charts), and report.md opens
with a loud note naming each stale cell and saying when the results do not all come from one clean commit.
Why it is so: docs/freshness.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from harness.core.errors import UsageError
from harness.report.inputs import read_table, table_there
from harness.results.freshness_file import Verdict, read_freshness, standing

FRESHNESS_COLUMNS = ["cell_id", "name", "verdict", "fingerprint_recorded", "detail", "checked_with", "checked_at"]


def freshness_rows(cells: list[tuple[str, str]], folder: Path) -> pd.DataFrame | None:
    """One row a cell (id, name, in matrix order): the verdict of the folder's freshness record on the result file
    that is there now, or `not checked` (none yet, or the result was written since). None where no check wrote a
    record: the report then says nothing of freshness."""
    record = read_freshness(folder)
    if record is None:
        return None
    found = standing(record, folder)
    commit = record.checked_with.commit
    checked_with = (commit[:7] + ("+dirty" if record.checked_with.dirty else "")) if commit else None
    rows: list[dict[str, Any]] = []
    for cell_id, name in cells:
        verdict = found.get(cell_id)
        rows.append({"cell_id": cell_id, "name": name,
                     "verdict": verdict.verdict.value if verdict else "not checked",
                     "fingerprint_recorded": verdict.fingerprint_recorded if verdict else None,
                     "detail": (verdict.said() or None) if verdict else None,
                     "checked_with": checked_with, "checked_at": record.checked_at})
    return pd.DataFrame(rows, columns=FRESHNESS_COLUMNS)


def stale_ids(freshness: pd.DataFrame | None) -> set[str]:
    if freshness is None or freshness.empty:
        return set()
    return set(freshness.loc[freshness["verdict"] == Verdict.stale.value, "cell_id"].astype(str))


def without(frame: pd.DataFrame | None, ids: set[str]) -> pd.DataFrame | None:
    """The rows of cells not in `ids` (a table without a cell_id column, or none, as it is)."""
    if frame is None or not ids or "cell_id" not in frame.columns:
        return frame
    return frame[~frame["cell_id"].astype(str).isin(ids)].reset_index(drop=True)


def read_freshness_table(folder: Path) -> pd.DataFrame | None:
    path = folder / "freshness.csv"
    if not table_there(path):
        return None
    table = read_table(path, FRESHNESS_COLUMNS, dtype={"cell_id": str, "checked_with": str, "detail": str})
    bad = sorted(set(table["verdict"].astype(str)) - {*(v.value for v in Verdict), "not checked"})
    if bad:
        raise UsageError(f"{path}: verdict {bad[0]!r} is none vramlab writes; run `vramlab aggregate {folder.name}` "
                         "to write it again from the result files")
    return table


def _commits(cells: pd.DataFrame) -> list[str]:
    if "code_commit" not in cells:
        return []
    counts = cells["code_commit"].dropna().astype(str).value_counts(sort=False)
    dirty = counts[counts.index.str.endswith("+dirty")]
    if len(counts) <= 1 and dirty.empty:
        return []
    said = []
    if len(counts) > 1:
        said.append(f"These results come from {len(counts)} commits ("
                    + ", ".join(f"`{c}` {n}" for c, n in counts.items()) + ").")
    if not dirty.empty:
        said.append(f"{int(dirty.sum())} of {int(counts.sum())} cells come from a tree with changes no commit holds "
                    "(`+dirty`).")
    return [f"> **Not from one clean commit.** {' '.join(said)} A published comparison needs every cell measured at "
            "one clean commit (the study commit).", ">"]


def notes(cells: pd.DataFrame, freshness: pd.DataFrame | None, matrix: str) -> list[str]:
    """The lines that open report.md: the stale cells left out of everything below, the results whose freshness
    could not be told, and where the results come from. Empty when there is nothing to say."""
    lines = _commits(cells)
    if freshness is not None and "status" in cells and "cell_id" in cells:
        # a cell not run yet has no result to check: the summary counts it among those not run, not here
        pending = set(cells.loc[cells["status"] == "pending", "cell_id"].astype(str))
        freshness = freshness[~freshness["cell_id"].astype(str).isin(pending)]
    if freshness is not None and not freshness.empty:
        checked = f"`vramlab check --fresh` (at `{freshness['checked_with'].dropna().iloc[0]}`)" \
            if freshness["checked_with"].notna().any() else "`vramlab check --fresh`"
        stale = freshness[freshness["verdict"] == Verdict.stale.value]
        if len(stale):
            lines += [f"> **{len(stale)} stale results are left out of every comparison.** {checked} found that the "
                      "current code would not reproduce them under their cell ids; no table, chart or finding below "
                      "uses them:", ">"]
            lines += [f"> - **{row['name']}** (`{row['cell_id']}`): {row['detail']}" for _, row in stale.iterrows()]
            lines += [">", f"> Measure them again: `vramlab check --fresh --supersede-stale results/{matrix}`, then "
                      f"`snakemake --config matrix={matrix}`.", ">"]
        counts = freshness["verdict"].value_counts()
        unknown = freshness["verdict"] == Verdict.unknown.value
        unrecorded = int((unknown & (freshness["fingerprint_recorded"].astype(str) == "False")).sum())
        told = [f"{int(counts.get(Verdict.fresh.value, 0))} fresh", f"{len(stale)} stale"]
        if unknown.any():
            told.append(f"{int(unknown.sum())} unknown" + (f" ({unrecorded} measured before results recorded a "
                                                            "fingerprint: told only from what they recorded, none of "
                                                            "it differs)" if unrecorded else ""))
        for verdict, why in ((Verdict.not_judged.value, "no ok result"), ("not checked", "measured since the check")):
            if counts.get(verdict, 0):
                told.append(f"{int(counts[verdict])} {verdict} ({why})")
        lines += [f"> Freshness, {checked} on {str(freshness['checked_at'].iloc[0])[:10]}: " + ", ".join(told) + ".",
                  ">"]
    return [*lines[:-1], ""] if lines else []
