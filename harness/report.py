"""reports/<matrix>/{cells.csv, steps.csv} -> report.md, tables.tex and PNG charts.

Reads the tidy tables only (which harness.aggregate built from result files). Every cell keeps its row,
whatever its status: an OOM is a finding, and a skipped or failed cell must stay visible.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from harness.results import Metrics, Status
from harness.settings import SETTINGS

GIB = 2**30
_COLOURS = {Status.ok: "#2a9d8f", Status.oom: "#e76f51", Status.skipped: "#8d99ae", Status.error: "#6d597a",
            Status.timeout: "#e9c46a"}
STATUS_COLOURS = {**{s.value: _COLOURS[s] for s in Status}, "pending": "#dddddd"}
# shown once any result has them: host views were added after the first results were committed
_SHOWN_WHEN_PRESENT = ("peak_host_unmapped_bytes", "peak_host_pinned_bytes")


def varied_columns(cells: pd.DataFrame) -> list[str]:
    return [name for name in SETTINGS if name in cells and cells[name].astype(str).nunique() > 1]


def display_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The report's table: the cell, its status, what varies, then the metrics the result model labels."""
    table = pd.DataFrame({"cell": cells["name"], "status": cells["status"]})
    for name in varied_columns(cells):
        table[name] = cells[name]
    shared = cells["throughput_measured"].astype(str) == "False" if "throughput_measured" in cells else None
    for column, spec in Metrics.display().items():
        if column in _SHOWN_WHEN_PRESENT and not (column in cells and cells[column].notna().any()):
            continue
        values = cells[column] / spec["scale"]
        if shared is not None and spec.get("unit") in ("tokens/s", "s", None) and column != "peak_device_bytes":
            values = values.mask(shared)  # cells that shared the device: their speed is no measurement
        table[spec["label"]] = values
    table["final loss"] = cells["final_loss"]
    return table


def _fmt(value: object, digits: int) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def _formatted(table: pd.DataFrame) -> pd.DataFrame:
    digits = {spec["label"]: spec["digits"] for spec in Metrics.display().values()} | {"final loss": 3}
    out = table.copy().astype(object)
    for column in out.columns:
        out[column] = [_fmt(v, digits.get(column, 2)) for v in table[column]]
    return out


def _short(reason: object) -> str:
    """The first two sentences: PyTorch's OOM message goes on with allocator advice for a paragraph."""
    if not isinstance(reason, str):
        return "–"
    sentences = reason.split(". ")
    return ". ".join(sentences[:2]).rstrip(".") + ("." if len(sentences) <= 2 else " …")


def markdown(cells: pd.DataFrame, title: str) -> str:
    def listed(column: str) -> str:
        return ", ".join(f"`{v}`" for v in cells[column].dropna().astype(str).unique()) or "–"

    budgets = cells["budget_bytes"].dropna()
    lines = [f"# {title}", "",
             f"{len(cells)} cells: " + ", ".join(f"{n} {s}" for s, n in cells["status"].value_counts().items()) + ".",
             f"Device: {listed('device_name')}; torch {listed('torch')}; models {listed('model')}"
             + (f"; budget {budgets.iloc[0] / GIB:.2f} GiB (whole-process device memory)." if len(budgets) else "."),
             ""]
    commits = cells["code_commit"].dropna().value_counts(sort=False)
    if len(commits):
        lines += ["Code: " + ", ".join(f"`{c}` ({n} cells)" for c, n in commits.items())
                  + ". Each result file records its full environment.", ""]
    if "throughput_measured" in cells and (cells["throughput_measured"].astype(str) == "False").any():
        lines += ["Cells ran several at a time on one device: their peaks are per process and stand, their "
                  "tokens/s, step time and MFU are not measurements and are left out (`cells.csv` keeps them).", ""]
    if cells["random_weights"].fillna(False).astype(bool).any():
        lines += ["Models with random weights: memory and speed are real, loss is not a quality measure "
                  "and no quality score is reported.", ""]
    lines += [_formatted(display_table(cells)).to_markdown(index=False), ""]
    notes = cells[~cells["status"].isin(["ok", "pending"])]
    if len(notes):
        lines += ["## Cells that did not fit the budget or did not run", ""]
        for _, row in notes.iterrows():
            phase = f" during {row['failed_phase']}" if pd.notna(row.get("failed_phase")) else ""
            lines.append(f"- **{row['name']}** (`{row['cell_id']}`), {row['status']}{phase}: {_short(row['reason'])}")
        lines.append("")
    pending = cells[cells["status"] == "pending"]
    if len(pending):
        lines += [f"Not run yet ({len(pending)}): " + ", ".join(pending["name"]) + ".", ""]
    sliced = cells[cells["vocabulary_outside_share"].notna()]
    for _, row in sliced.iterrows():
        lines.append(f"- vocabulary of **{row['name']}** sliced to {int(row['vocabulary_size']):,} tokens: "
                     f"{row['vocabulary_outside_share']:.2%} of its training tokens fell outside the kept set")
    lines += _truncation_definitions(cells)
    fallbacks = cells[cells["attention_fallback"].notna()]
    for _, row in fallbacks.iterrows():
        lines.append(f"- attention fall-back in **{row['name']}**: {row['attention_fallback']}")
    lines += ["", "Charts: `memory.png` (peak device memory against the budget), `throughput.png`, "
              "`loss.png`. Raw numbers: `cells.csv`, `steps.csv`; full records: the result files.", ""]
    return "\n".join(lines)


def _truncation_definitions(cells: pd.DataFrame) -> list[str]:
    """The exact context a document cell trained on, for each truncation policy the matrix used."""
    from harness.workload import describe

    data = cells["data"].astype(str)
    documents = cells[(data == "grant-reports") | data.str.startswith("text:")]
    if documents.empty:
        return []
    lines = ["", "## How the preceding text was truncated", ""]
    for (policy, decay), _ in documents.groupby(["truncation", "truncation_decay"], sort=False):
        lines.append(f"- `{policy}`: {describe(policy, float(decay))}")
    return [*lines, ""]


def latex(cells: pd.DataFrame, title: str) -> str:
    table = _formatted(display_table(cells))
    table.columns = [c.replace("_", r"\_") for c in table.columns]
    body = table.to_latex(index=False, escape=True, column_format="l" * len(table.columns),
                          caption=f"{title}: peak memory and throughput per cell", label=f"tab:{title}")
    return "% generated by vramlab from cells.csv; needs \\usepackage{booktabs}\n" + body


def charts(cells: pd.DataFrame, steps: pd.DataFrame, out: Path) -> list[Path]:
    paths = []
    labels = cells["name"].tolist()
    colours = [STATUS_COLOURS.get(s, "black") for s in cells["status"]]
    height = max(3.0, 0.35 * len(cells) + 1.5)

    fig, ax = plt.subplots(figsize=(9, height))
    ax.barh(labels, cells["peak_device_bytes"].fillna(0) / GIB, color=colours)
    budget = cells["budget_bytes"].dropna()
    if len(budget):
        ax.axvline(budget.iloc[0] / GIB, color="black", linestyle="--", label=f"budget {budget.iloc[0] / GIB:.0f} GiB")
    ax.invert_yaxis()
    ax.set_xlabel("peak device memory of the process (GiB)")
    ax.set_title("Peak memory per cell (colour: status)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in STATUS_COLOURS.values()]
    ax.legend(handles + ax.get_legend_handles_labels()[0][:1],
              list(STATUS_COLOURS) + ax.get_legend_handles_labels()[1][:1], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    paths.append(out / "memory.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(9, height))
    ax.barh(labels, cells["tokens_per_second"].fillna(0), color=colours)
    ax.invert_yaxis()
    ax.set_xlabel("training tokens per second (median optimizer step, warm-up excluded)")
    ax.set_title("Throughput per cell")
    fig.tight_layout()
    paths.append(out / "throughput.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(9, 5))
    for name, group in steps.dropna(subset=["loss"]).groupby("name", sort=False):
        ax.plot(group["step"], group["loss"], marker="o", markersize=3, label=name)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.set_title("Loss curves")
    if len(steps.dropna(subset=["loss"])):
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    paths.append(out / "loss.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def build_report(folder: Path) -> list[Path]:
    from harness import quality_report

    # hex ids and commits can read as numbers ("0123456", "12e4...") unless held as text
    cells = pd.read_csv(folder / "cells.csv", dtype={"cell_id": str, "code_commit": str})
    steps = pd.read_csv(folder / "steps.csv", dtype={"cell_id": str})
    title = folder.name
    text = markdown(cells, title)
    outputs = [folder / "report.md", folder / "tables.tex", *charts(cells, steps, folder)]
    if (folder / "quality.csv").is_file():
        quality = pd.read_csv(folder / "quality.csv", dtype={"cell_id": str})
        text += "\n".join(quality_report.markdown(cells, steps, quality))
        outputs += quality_report.charts(cells, quality, folder)
    (folder / "report.md").write_text(text)
    (folder / "tables.tex").write_text(latex(cells, title))
    return outputs
