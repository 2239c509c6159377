"""Where a cell's time goes, before and after a change that should make cells cheaper, from result files.

    python benchmarks/cell_time.py FOLDER

FOLDER holds `before/<cell id>.json` and `after/<cell id>.json` (the same cells, run one after another on the
same GPU in one sitting) and `walls.tsv` (variant, cell id, start and end of each `vramlab run-cell` as seen
from outside, in Unix seconds: process start and exit included). Writes FOLDER/comparison.md: per cell, the
wall time, the measured steps and the rest, with the phases that changed; the peaks, which must not change;
and how each measuring process started (records.process).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.results import read  # noqa: E402

GIB = 2**30
VARIANTS = ("before", "after")


def load(folder: Path) -> pd.DataFrame:
    walls = pd.read_csv(folder / "walls.tsv", sep="\t")
    walls["wall"] = walls["end"] - walls["start"]
    rows = []
    for variant in VARIANTS:
        for path in sorted((folder / variant).glob("*.json")):
            result = read(path)
            metrics = result.metrics.model_dump() if result.metrics else {}
            phases = metrics.get("time_by_phase") or {}
            wall = walls[(walls.variant == variant) & (walls.cell_id == result.cell_id)]["wall"]
            if wall.empty:
                raise SystemExit(f"{folder / 'walls.tsv'}: no wall time for {variant} {result.cell_id}")
            rows.append({"variant": variant, "cell": result.name, "cell_id": result.cell_id,
                         "status": result.status.value, "wall": float(wall.iloc[0]),
                         "measured": phases.get("measured_steps") or 0.0,
                         "start": result.records.get("process", {}).get("start", "fresh"),
                         "bytecode": bool(result.records.get("process", {}).get("bytecode_cache")),
                         "commit": ((result.environment.git.commit or "")[:7] or None) if result.environment else None,
                         "peak_device": metrics.get("peak_device_bytes"),
                         "peak_host": metrics.get("peak_host_unmapped_bytes"),
                         "step": metrics.get("median_step_seconds"),
                         **{f"phase:{k}": v for k, v in phases.items() if k != "total"}})
    table = pd.DataFrame(rows)
    table["rest"] = table["wall"] - table["measured"]
    return table


def comparison(table: pd.DataFrame) -> str:
    before = table[table.variant == "before"].set_index("cell_id")
    after = table[table.variant == "after"].set_index("cell_id")
    cells = [c for c in before.index if c in after.index]
    b, a = before.loc[cells], after.loc[cells]
    rest_b, rest_a = b["rest"].sum(), a["rest"].sum()
    per_cell = pd.DataFrame({
        "cell": b["cell"], "status": b["status"] + " / " + a["status"],
        "wall s": b["wall"].map("{:.1f}".format) + " → " + a["wall"].map("{:.1f}".format),
        "measured steps s": b["measured"].map("{:.1f}".format) + " → " + a["measured"].map("{:.1f}".format),
        "the rest s": b["rest"].map("{:.1f}".format) + " → " + a["rest"].map("{:.1f}".format),
        "the rest cut": (1 - a["rest"] / b["rest"]).map("{:.0%}".format),
        "after started": a["start"] + a["bytecode"].map({True: ", bytecode cached", False: ""}),
        "peak device GiB": [_same(x, y) for x, y in zip(b["peak_device"], a["peak_device"], strict=True)],
        "host GiB no file backs": [_same(x, y) for x, y in zip(b["peak_host"], a["peak_host"], strict=True)],
    })
    phases = sorted(c for c in table.columns if c.startswith("phase:"))
    by_phase = pd.DataFrame({"before s": b[phases].sum(), "after s": a[phases].sum()})
    by_phase.index = [p.split(":", 1)[1] for p in phases]
    by_phase["change s"] = by_phase["after s"] - by_phase["before s"]
    commits = {name: ", ".join(sorted(set(side["commit"].dropna()))) for name, side in (("b", b), ("a", a))}
    lines = [
        f"# Cell time before and after: {len(cells)} cells",
        "",
        f"Before at {commits['b']}, after at {commits['a']}; "
        "wall time from outside (process start to exit), measured steps from each result's `time_by_phase`.",
        "",
        f"The time that is not measured steps: **{rest_b:.1f} s before, {rest_a:.1f} s after, "
        f"{1 - rest_a / rest_b:.0%} less**. Measured steps: {b['measured'].sum():.1f} s before, "
        # the committed comparisons name these modules where they were when the sittings ran (now
        # harness/process/warm_start.py, harness/run/bytecode.py): the text stays, so that they regenerate as they are
        f"{a['measured'].sum():.1f} s after. Measuring processes that started warm (harness/warm_start.py): "
        f"{(a['start'] == 'warm').sum()} of {len(a)} after, {(b['start'] == 'warm').sum()} of {len(b)} before; "
        f"with their bytecode in the cache folder (harness/bytecode.py): {a['bytecode'].sum()} after, "
        f"{b['bytecode'].sum()} before.",
        "",
        per_cell.to_markdown(index=False),
        "",
        "Inside the measuring process, by phase (the rest of the wall time is the process starting before it "
        "records anything, and exiting after its result is written):",
        "",
        by_phase.round(1).to_markdown(),
        "",
    ]
    return "\n".join(lines)


def _same(before: float | None, after: float | None) -> str:
    if before is None or after is None or pd.isna(before) or pd.isna(after):
        return "–"
    text = f"{before / GIB:.2f}"
    return text if abs(after - before) < 2**20 * 16 else f"{text} → {after / GIB:.2f}"


def main(folder: str) -> None:
    path = Path(folder)
    (path / "comparison.md").write_text(comparison(load(path)))
    print((path / "comparison.md").read_text())


if __name__ == "__main__":
    main(sys.argv[1])
