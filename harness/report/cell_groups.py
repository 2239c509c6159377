"""A matrix's groups as tables: a group (cells repeated over seeds, named by harness.spec.groups.group_name) is what a
table row, a chart point or a comparison stands for; each row holds its first cell's settings and the mean,
spread and count of every metric.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.spec.groups import group_name


def reference_cells(cells: pd.DataFrame, group: str, reference: str) -> pd.DataFrame:
    """The reference's cells to hold `group` against: all of them (their mean over seeds), or, for a group of one
    cell, the reference's cell of the same seed where it has one, so that one seed is never set against a mean
    over others. Every comparison against a reference (memory, speed, quality) takes its cells from here."""
    names = cells["name"].map(group_name)
    members, theirs = cells[names == group], cells[names == reference]
    if len(members) == 1 and "seed" in cells.columns:
        same_seed = theirs[theirs["seed"].astype(str) == str(members["seed"].iloc[0])]
        if len(same_seed):
            return same_seed
    return theirs


# what a group's row holds: cells.csv column -> (name here, scale); memory in GiB
GIB = 2**30
MEMORY = {"peak_device_bytes": "peak_device", "peak_allocated_bytes": "peak_allocated",
          "peak_reserved_bytes": "peak_reserved", "peak_host_unmapped_bytes": "host_unmapped",
          "peak_host_pinned_bytes": "host_pinned"}
SPEED = {"tokens_per_second": "tokens_per_second", "median_step_seconds": "step_seconds",
         "step_seconds_iqr": "step_iqr", "mfu": "mfu"}
LOSS = {"first_loss": "first_loss", "final_loss": "final_loss"}


def _status(statuses: pd.Series) -> str:
    counts = statuses.value_counts()
    return str(counts.index[0]) if len(counts) == 1 else ", ".join(f"{n} {s}" for s, n in counts.items())


def measured_so_far(status: str) -> bool:
    """Whether a group's status (`_status`) is all ok, or ok cells beside cells that have not run yet (a matrix run
    in parts): its ok cells are its measurement so far, not a failure."""
    counts = [part.split(" ", 1) for part in status.split(", ")] if ", " in status else [["1", status]]
    words = {word for _, word in counts}
    return words == {"ok"} or words == {"ok", "pending"}


def _spread(values: pd.Series) -> tuple[float, float, int]:
    values = values.dropna().astype(float)
    sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    return (float(values.mean()) if len(values) else math.nan), sd, len(values)


def group_table(cells: pd.DataFrame) -> pd.DataFrame:
    """One row a group in matrix order: its first cell's settings, its status (or a count of each), n, and for each
    metric the mean, sample standard deviation (`<name>_sd`) and number of cells it stands on (`<name>_n`).
    Memory comes from the ok cells, or where none is ok from those that ran out of memory (the peak they reached,
    `peak_reached` set: a lower bound of what the cell needs). Speed and loss come from ok cells, speed only where
    it was measured (not on a shared device)."""
    measured = cells["throughput_measured"].astype(str) != "False" if "throughput_measured" in cells else True
    cells = cells.assign(group=cells["name"].map(group_name), measured=measured)
    rows = []
    for group, members in cells.groupby("group", sort=False):
        ok = members["status"] == "ok"
        reached = not ok.any() and (members["status"] == "oom").any()
        memory = members[ok] if ok.any() else members[members["status"] == "oom"]
        row: dict[str, Any] = {**members.iloc[0].to_dict(), "group": group, "status": _status(members["status"]),
                               "n": len(members), "peak_reached": reached}
        for column, name in MEMORY.items():
            values = memory[column] / GIB if column in memory else pd.Series(dtype=float)
            row[name], row[f"{name}_sd"], row[f"{name}_n"] = _spread(values)
        for columns, rows_used in ((SPEED, members[ok & members["measured"]]), (LOSS, members[ok])):
            for column, name in columns.items():
                # step_seconds_iqr came after the first results: a table without it has no interval
                values = rows_used[column] if column in rows_used else pd.Series(dtype=float)
                row[name], row[f"{name}_sd"], row[f"{name}_n"] = _spread(values)
        rows.append(row)
    return pd.DataFrame(rows).set_index("group", drop=False)
