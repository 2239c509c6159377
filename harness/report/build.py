"""reports/<matrix>/{cells.csv, steps.csv, design.json, estimate.csv} -> report.md, tables.tex and the charts
(PDF and PNG).

Reads the tidy tables and the matrix's design only (which harness.report.aggregate built from result files and the
matrix file): results -> tables -> charts, never back. Every cell keeps its row, whatever its status: an OOM is a
finding, and a skipped or failed cell must stay visible.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from harness.core.atomic_files import write_text_atomic
from harness.core.errors import UsageError
from harness.data.workload import describe
from harness.estimate import calibration
from harness.report import charts, comparisons_table, freshness, methods, methods_latex, tables
from harness.report import quality as quality_report
from harness.report.comparison_text import headline
from harness.report.frames import Frames
from harness.report.inputs import read_cells, read_design, read_environment, read_estimate, read_steps, table_there
from harness.report.stack_versions import versions_line
from harness.report.summary import summary
from harness.report.vocabulary_cells import NOT_PUBLISHABLE, publishable, sliced, sliced_table, targets_cut
from harness.spec.chart_widths import COLUMN_IN, DOUBLE_IN, SMALLEST_PT, chart_files
from harness.spec.design import ReportDesign
from harness.spec.groups import group_name


def _short(reason: object) -> str:
    """The first two sentences: PyTorch's OOM message goes on with allocator advice for a paragraph."""
    if not isinstance(reason, str):
        return "–"
    sentences = reason.split(". ")
    return ". ".join(sentences[:2]).rstrip(".") + ("." if len(sentences) <= 2 else " …")


def report_tables(frames: Frames) -> list[tables.Table]:
    """One table per question the matrix asks."""
    design = frames.design
    cpu = frames.on_cpu
    found = [tables.memory_table(frames.table, cpu)]
    if design.throughput_measured:
        found.append(tables.speed_table(frames.table, mfu=not cpu))
    if design.deltas:
        found.append(tables.deltas_table(frames.deltas, design, design.throughput_measured, cpu))
    if design.sweep:
        found.append(tables.sweep_table(frames.points, design, design.throughput_measured, cpu))
    found.append(tables.loss_table(frames.table, frames.drawn))
    vocabulary = sliced_table(frames.cells)
    return [*found, vocabulary] if vocabulary else found


def estimate_tables(estimate: pd.DataFrame | None, matrix: str) -> list[tables.Table]:
    """The memory estimate beside each GPU cell's measured device peak (estimate.csv), where any cell has one."""
    if estimate is None or estimate.empty:
        return []

    def optional(value: object) -> int | None:
        return None if pd.isna(value) else int(value)

    found = [calibration.Row(matrix, r["name"], r["cell_id"], int(r["measured_bytes"]),
                             optional(r["predicted_bytes"]), optional(r["measured_allocated_bytes"]),
                             optional(r["predicted_allocated_bytes"]), r["status"], r["peak_moment"], r["unpredicted"])
             for _, r in estimate.iterrows()]
    return [tables.estimate_table(estimate, calibration.summary(found, label=lambda r: r.name))]


def _estimate_section(estimate: pd.DataFrame | None, matrix: str) -> list[str]:
    if estimate is None:
        return []  # tables aggregated before estimate.csv existed
    lines = ["## The memory estimate beside the measurement", ""]
    if estimate.empty:
        return [*lines, "No cell of this matrix measured its device peak on a CUDA GPU; the memory estimate is for "
                "CUDA GPUs, so no cell is compared with it.", ""]
    lines += ["The memory estimate (`vramlab estimate`) predicts a cell's whole-process device peak from its settings "
              "alone; here it stands beside the peak each cell measured on a CUDA GPU (NVML, the figure the budget "
              "is judged on), as `reports/estimate/calibration.md` does for every committed GPU matrix. Computed "
              "from the result files by the aggregate step: `estimate.csv`, in bytes, with the allocated peaks too.",
              ""]
    for table in estimate_tables(estimate, matrix):
        lines += table.markdown()
    return lines


def markdown(frames: Frames, title: str, quality: list[str] | None = None,
             estimate: pd.DataFrame | None = None, environment: pd.DataFrame | None = None,
             opening: list[str] | None = None, paired: pd.DataFrame | None = None,
             drawn: list[str] | None = None) -> str:
    """report.md; `opening`: the loud notes above everything (stale results left out, results from more than one
    commit); `drawn`: the chart files written (a chart split into parts has several at a width)."""
    cells = frames.cells

    def listed(column: str) -> str:
        return ", ".join(f"`{v}`" for v in cells[column].dropna().astype(str).unique()) or "–"

    lines = [f"# {title}", "", *(opening or []), *summary(frames, quality), "## Setup", "",
             f"{len(cells)} cells: " + ", ".join(f"{n} {s}" for s, n in cells["status"].value_counts().items()) + ".",
             f"Device: {listed('device_name')}; torch {listed('torch')}; models {listed('model')}"
             + (f"; budget {frames.budget:.2f} GiB (whole-process device memory)." if frames.budget else "."),
             "", *versions_line(environment)]
    if frames.on_cpu:
        budgets = cells["budget_bytes"].dropna()
        judged = f" (the budget, {budgets.iloc[0] / 2**30:.2f} GiB, is judged on it)" if len(budgets) else ""
        lines += ["The cells ran on a CPU: their peak memory is the process's peak resident set, shown as "
                  f"resident memory (CPU){judged}. No GPU budget is drawn and no MFU is reported (`cells.csv` "
                  "keeps the CPU's).", ""]
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
    if (frames.table["n"] > 1).any():
        lines += ["Cells repeated over seeds are one row, under their name without `/seed=N`: the mean, the sample "
                  "standard deviation (sd) and n.", ""]
    lines += ["## Tables", "", "The same tables for a paper: `tables.tex` (booktabs and siunitx, set at the size they "
              "print: docs/paper-kit.md).", ""]
    for table in report_tables(frames):
        lines += table.markdown()
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
    for _, row in sliced(cells).iterrows():
        if publishable(row) == NOT_PUBLISHABLE:
            lines.append(f"- vocabulary of **{row['name']}**, sliced to {int(row['vocabulary_size']):,} tokens, is "
                         f"not publishable: targets cut after spelling: {targets_cut(row)} (table "
                         "\"Sliced vocabularies\")")
    lines += _truncation_definitions(cells)
    fallbacks = cells[cells["attention_fallback"].notna()]
    for _, row in fallbacks.iterrows():
        lines.append(f"- attention fall-back in **{row['name']}**: {row['attention_fallback']}")
    section = _estimate_section(estimate, title)
    lines += [*([""] if lines[-1] else []), *section[:-1]] if section else []
    lines += ["", "## Charts", "", f"Each drawn two columns wide ({DOUBLE_IN:g} in, PDF and PNG) and one column wide "
              f"(`-column.pdf`, {COLUMN_IN:g} in), no text under {SMALLEST_PT:g} pt at that width: include a PDF at "
              "its own size. Colours: one per technique (levels of it told apart by marker, hatch or line style), "
              f"the same in every report; `{frames.design.baseline}`"
              + (f" and cells that differ from it only in {frames.design.x}" if frames.design.x else "")
              + " black.", ""]
    lines += [f"- {', '.join(f'`{f}`' for f in _files_of(name, drawn))}: "
              f"{charts.CAPTIONS[name].replace('device memory', frames.memory)}"
              + (" (in parts: `-partN`, each at most a column's height)" if len(_files_of(name, drawn)) > 3 else "")
              for name in charts.names(frames, paired)]
    lines += ["", "Raw numbers: `cells.csv`, `steps.csv`" + (", `estimate.csv`" if estimate is not None else "")
              + "; the design: `design.json`; full records: the result "
              "files.", ""]
    return "\n".join(lines)


def _files_of(chart: str, drawn: list[str] | None) -> list[str]:
    if drawn is None:
        return chart_files(chart)
    return [f for f in drawn if f.split(".")[0] == chart or f.startswith(f"{chart}-")]


def _truncation_definitions(cells: pd.DataFrame) -> list[str]:
    """The exact context a document cell trained on, for each truncation policy the matrix used."""
    data = cells["data"].astype(str)
    documents = cells[(data == "grant-reports") | data.str.startswith("text:")]
    if documents.empty:
        return []
    lines = ["", "## How the preceding text was truncated", ""]
    for (policy, decay), _ in documents.groupby(["truncation", "truncation_decay"], sort=False):
        lines.append(f"- `{policy}`: {describe(policy, float(decay))}")
    return [*lines, ""]


def latex(frames: Frames, title: str, steps: pd.DataFrame, estimate: pd.DataFrame | None = None,
          quality: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
          comparisons: pd.DataFrame | None = None) -> str:
    sources = "cells.csv, steps.csv, design.json, estimate.csv" + (" and quality.csv" if quality is not None else "") \
        + (" and comparisons.csv" if comparisons is not None else "")
    header = [f"% generated by vramlab from {sources}; {tables.LATEX_NEEDS}", ""]
    shown = quality_report.quality_tables(frames.cells, steps, quality, frames.design.baseline, items, comparisons) \
        if quality is not None else []
    found = [*report_tables(frames), *([comparisons_table.table(comparisons)] if comparisons is not None else []),
             *shown,
             *estimate_tables(estimate, title)]
    return "\n".join(header + [table.latex(title) for table in found])


def read(folder: Path) -> tuple[Frames, pd.DataFrame, pd.DataFrame | None]:
    """A report folder's tables and design: the frames, steps.csv, and quality.csv where the matrix has one."""
    # estimate.csv too: the aggregate writes it with the others, and without it the report would lose its section
    for name in ("cells.csv", "steps.csv", "design.json", "estimate.csv"):
        if not table_there(folder / name):
            raise UsageError(f"{folder / name} does not exist; run `vramlab aggregate {folder.name}` first (the "
                             "report is made from the tables it writes)")
    cells = read_cells(folder)
    if (cells["status"] == "pending").all():
        raise UsageError(f"no cell of {folder.name} has a result yet ({folder / 'cells.csv'} lists "
                         f"{len(cells)} pending), so there is nothing to report; run its cells first")
    steps = read_steps(folder, cells)
    planned = read_design(folder, cells)
    if planned.quality and not table_there(folder / "quality.csv"):  # else the report would drop its quality part
        raise UsageError(f"{folder / 'quality.csv'} does not exist, though {folder.name} evaluates its cells "
                         f"({folder / 'design.json'}); run `vramlab aggregate {folder.name}` first (it writes the "
                         "scores' table with the others)")
    quality = pd.read_csv(folder / "quality.csv", dtype={"cell_id": str}) if planned.quality else None
    # a stale cell is in no table, chart or comparison: the report's opening names it (harness/report/freshness.py)
    stale = freshness.stale_ids(freshness.read_freshness_table(folder))
    shown = freshness.without(cells, stale)
    design = _without_stale_groups(planned, shown, folder)
    steps, quality = freshness.without(steps, stale), freshness.without(quality, stale)
    return Frames.build(shown, steps, design), steps, quality


def _without_stale_groups(design: ReportDesign, shown: pd.DataFrame, folder: Path) -> ReportDesign:
    """The design without the groups whose every result is stale; refused where that leaves no baseline, or a chart
    the workflow expects with nothing to draw."""
    groups = {group_name(str(n)) for n in shown["name"]}
    trimmed = replace(design, deltas=tuple(g for g in design.deltas if g in groups),
                      changes={g: c for g, c in design.changes.items() if g in groups},
                      sweep=tuple(replace(line, cells=tuple(c for c in line.cells if c in groups))
                                  for line in design.sweep if any(c in groups for c in line.cells)))
    lost = design.baseline if design.baseline not in groups else \
        next((chart for chart in design.charts if chart not in trimmed.charts), None)
    if lost is not None:
        what = f"the baseline {lost!r}" if lost == design.baseline else f"the chart {lost!r}"
        raise UsageError(f"every result {what} needs is stale ({folder / 'freshness.csv'}); measure them again "
                         f"(`vramlab check --fresh --supersede-stale results/{folder.name}`, then snakemake) before "
                         "reporting")
    return trimmed


def build_report(folder: Path) -> list[Path]:
    frames, steps, quality = read(folder)
    judged = freshness.read_freshness_table(folder)
    items = freshness.without(pd.read_csv(folder / "items.csv", dtype={"cell_id": str, "item": str}),
                              freshness.stale_ids(judged)) if table_there(folder / "items.csv") else None
    title = folder.name
    # every verdict the report states is a row of comparisons.csv, written by the aggregate with quality.csv
    comparisons = comparisons_table.read(folder) if quality is not None else None
    estimate = freshness.without(read_estimate(folder), freshness.stale_ids(judged))
    environment = read_environment(folder)  # read before anything is written: a bad table leaves the report as it was
    opening = freshness.notes(read_cells(folder), judged, title)
    drawn = charts.draw(frames, quality, folder, items, comparisons)
    text = markdown(frames, title, headline(comparisons) if quality is not None else None, estimate, environment,
                    opening, comparisons, [p.name for p in drawn])
    if quality is not None:
        text += "\n" + "\n".join([*comparisons_table.markdown(comparisons, quality=True),
                                   *quality_report.markdown(frames.cells, steps, quality, frames.design.baseline,
                                                            items, comparisons)])
    write_text_atomic(folder / "report.md", text)
    write_text_atomic(folder / "tables.tex", latex(frames, title, steps, estimate, quality, items, comparisons))
    paragraph = methods.markdown(frames, environment, title, quality is not None, steps, quality,
                                 comparisons is not None)
    write_text_atomic(folder / "methods.md", paragraph)
    write_text_atomic(folder / "methods.tex", methods_latex.latex(paragraph))
    # last, once the report that names the charts is written: a build that fails before leaves every file it had
    for stale in charts.not_drawn(folder, drawn):
        stale.unlink()
    return [folder / "report.md", folder / "tables.tex", folder / "methods.md", folder / "methods.tex",
            *drawn]
