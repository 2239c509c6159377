"""Cells repeated over seeds form one group, named like the cell without its `/seed=N` suffix; a group is what a
table row, a chart point or a comparison stands for. Also: what differs between two sets of settings, said the
same way everywhere ("quantization nf4, context 8192").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

NOT_A_DIFFERENCE = ("seed", "name")


def group_name(name: str) -> str:
    return name.split("/seed=")[0]


def _same(a: Any, b: Any) -> bool:
    # cells.csv holds every value as text (lists joined with commas), a Cell holds the YAML value
    return str(a) == str(b)


def differences(settings: Mapping[str, Any], reference: Mapping[str, Any],
                ignore: Iterable[str] = ()) -> dict[str, Any]:
    """The settings (in `settings`' order) whose value differs from the reference's; the seed never counts."""
    skip = {*NOT_A_DIFFERENCE, *ignore}
    return {k: v for k, v in settings.items() if k not in skip and k in reference and not _same(v, reference[k])}


def describe(change: Mapping[str, Any]) -> str:
    """{'quantization': 'none', 'lora_targets': ['q_proj', 'v_proj']}
    -> 'quantization none, lora_targets q_proj,v_proj'"""
    return ", ".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in change.items())


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
