"""The report's tables, one per question (how much memory, how fast, what each change costs, how the sweep
grows, how the loss went), each as Markdown and as LaTeX (booktabs). Every header carries its unit; every
number of a column has the same digits and is right-aligned, so the decimal points line up in both. Where a
group has repeats its mean comes with a column of the sample standard deviation (or, for a difference, the
standard error of the difference), and n says over how many cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from harness.report.frames import SAME_CURVE
from harness.report.latex_layout import render
from harness.spec.design import ReportDesign, x_label

MISSING = "–"
# the header line of every tables.tex: what the file needs from the document that inputs it
LATEX_NEEDS = (r"needs \usepackage{booktabs}, \usepackage{array} and \usepackage{siunitx}; every table is set at "
               r"\footnotesize (8 pt in a 10 pt article), never shrunk: a table wider than a column is a table*, one "
               "wider than the text block is split into parts")


@dataclass
class Column:
    header: str  # with its unit: "peak device (GiB)"
    numeric: bool = True
    # columns of one group (a task's mean, sd and change, say) share a spanning header in LaTeX and are never set
    # in different parts of a split table; the Markdown header names the group on its first column
    group: str = ""


@dataclass
class Table:
    key: str  # names the LaTeX label: tab:<matrix>-<key>
    title: str  # the question the table answers, in words: the caption
    columns: list[Column]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""

    def headers(self) -> list[str]:
        """Each column's Markdown header: a group's name on the first of its columns."""
        return [f"{c.group}: {c.header}" if c.group and (i == 0 or self.columns[i - 1].group != c.group)
                else c.header for i, c in enumerate(self.columns)]

    def markdown(self) -> list[str]:
        """Padded, so that the columns and the decimal points line up in the file as they do rendered."""
        cells = [self.headers(), *self.rows]
        cells = [[value.replace("|", r"\|") for value in row] for row in cells]
        widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(self.columns))]  # a rule needs 3

        def line(values: list[str]) -> str:
            return "| " + " | ".join(v.rjust(w) if c.numeric else v.ljust(w)
                                     for v, w, c in zip(values, widths, self.columns, strict=True)) + " |"

        rule = "| " + " | ".join("-" * (w - 1) + ":" if c.numeric else ":" + "-" * (w - 1)
                                 for w, c in zip(widths, self.columns, strict=True)) + " |"
        lines = [f"### {self.title}", "", line(cells[0]), rule, *(line(row) for row in cells[1:]), ""]
        return [*lines, self.note, ""] if self.note else lines

    def latex(self, matrix: str) -> str:
        """The table as it is printed (harness/report/latex_layout.py): one float where it fits a column or the
        text block, else parts, each a float with its own label (tab:<matrix>-<key>, -<key>-2, ...)."""
        return render(self, matrix)


def gib_digits(values: pd.Series) -> int:
    """Two decimals of a GiB (10 MiB) where amounts reach a GiB; three below, where differences of a few MiB
    would otherwise all read 0.00."""
    finite = values.dropna().abs()
    return 3 if len(finite) and finite.max() < 1 else 2


def number(value: float, digits: int, signed: bool = False, at_least: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    text = f"{value:{'+' if signed else ''},.{digits}f}"
    return f"≥{text}" if at_least else text


def _repeated(table: pd.DataFrame, metric: str) -> bool:
    return bool((table[f"{metric}_n"] > 1).any())


def _with_spread(table: pd.DataFrame, metric: str, header: str, digits: int) -> tuple[list[Column], list[list[str]]]:
    """The mean's column, and beside it the standard deviation's where any group has repeats."""
    columns = [Column(header)]
    rows = []
    spread = _repeated(table, metric)
    if spread:
        columns.append(Column("± sd"))
    for _, row in table.iterrows():
        at_least = metric == "peak_device" and bool(row["peak_reached"])
        cells = [number(row[metric], digits, at_least=at_least)]
        if spread:
            cells.append(number(row[f"{metric}_sd"], digits))
        rows.append(cells)
    return columns, rows


def _joined(*parts: tuple[list[Column], list[list[str]]]) -> tuple[list[Column], list[list[str]]]:
    columns = [c for cols, _ in parts for c in cols]
    rows = [[cell for _, part_rows in parts for cell in part_rows[i]] for i in range(len(parts[0][1]))]
    return columns, rows


def _heading(table: pd.DataFrame) -> tuple[list[Column], list[list[str]]]:
    repeats = bool((table["n"] > 1).any())
    columns = [Column("cell", numeric=False), Column("status", numeric=False), *([Column("n")] if repeats else [])]
    rows = [[str(g), str(r["status"]), *([str(r["n"])] if repeats else [])] for g, r in table.iterrows()]
    return columns, rows


def peak_header(on_cpu: bool) -> str:
    return "peak resident memory (CPU), GiB" if on_cpu else "peak device (GiB)"


def memory_table(table: pd.DataFrame, on_cpu: bool = False) -> Table:
    digits = gib_digits(table["peak_device"])
    parts = [_heading(table), _with_spread(table, "peak_device", peak_header(on_cpu), digits)]
    for metric, header in (("peak_allocated", "peak allocated (GiB)"), ("peak_reserved", "peak reserved (GiB)"),
                           ("host_unmapped", "host unmapped (GiB)"), ("host_pinned", "host pinned (GiB)")):
        if table[metric].notna().any():  # host views came after the first results: shown once any result has them
            parts.append(([Column(header)], [[number(v, digits)] for v in table[metric]]))
    columns, rows = _joined(*parts)
    memory = "Peak resident memory (CPU) of the whole process" if on_cpu else "Peak device memory of the whole process"
    note = (f"{memory}; ≥: the peak reached before the cell ran out of memory, a lower bound of what it needs."
            if table["peak_reached"].any() else f"{memory}.")
    return Table("memory", "Peak memory of each cell", columns, rows, note)


def speed_table(table: pd.DataFrame, mfu: bool = True) -> Table:
    """mfu: False on a CPU, where a GPU's model FLOPs utilisation has no meaning, and where the step times (the
    host shared with everything else on it) are no measurement to put an interval on either."""
    iqr = mfu and bool(table["step_iqr"].notna().any())
    columns, rows = _joined(_heading(table), _with_spread(table, "tokens_per_second", "throughput (tokens/s)", 0),
                            ([Column("median step (s)"), *([Column("step IQR (s)")] if iqr else []),
                              *([Column("MFU (%)")] if mfu else [])],
                             [[number(r["step_seconds"], 3), *([number(r["step_iqr"], 3)] if iqr else []),
                               *([number(100 * r["mfu"], 1)] if mfu else [])]
                              for _, r in table.iterrows()]))
    note = "Tokens per optimizer step over the median step time, warm-up steps excluded."
    if iqr:
        note += (" Step IQR: the interquartile range of the timed step times (warm-up excluded; their range where "
                 "fewer than 4 steps were timed), the mean over seeds where a cell was repeated.")
    return Table("speed", "Training speed of each cell", columns, rows, note)


def deltas_table(deltas: pd.DataFrame, design: ReportDesign, throughput: bool, on_cpu: bool = False) -> Table:
    memory_spread = bool(deltas["d_peak_se"].notna().any())
    speed_spread = throughput and bool(deltas["d_tokens_pct_se"].notna().any())
    by_model = bool((deltas["reference"] != design.baseline).any())
    columns = [Column("cell", numeric=False), *([Column("reference", numeric=False)] if by_model else []),
               Column("what differs from the reference", numeric=False),
               Column("status", numeric=False), Column(f"Δ {peak_header(on_cpu)}"),
               *([Column("± se")] if memory_spread else []), *([Column("Δ throughput (%)")] if throughput else []),
               *([Column("± se")] if speed_spread else [])]
    rows = []
    digits = gib_digits(deltas["d_peak"])
    # by effect: the largest saving first, cells without a measured peak last (a stable sort keeps design order)
    for _, row in deltas.sort_values("d_peak", kind="stable", na_position="last").iterrows():
        cells = [str(row["group"]), *([str(row["reference"])] if by_model else []), row["differs"],
                 str(row["status"]),
                 number(row["d_peak"], digits, signed=True, at_least=bool(row["peak_reached"]))]
        cells += [number(row["d_peak_se"], digits)] if memory_spread else []
        cells += [number(row["d_tokens_pct"], 1, signed=True)] if throughput else []
        cells += [number(row["d_tokens_pct_se"], 1)] if speed_spread else []
        rows.append(cells)
    note = (f"Reference: `{design.baseline}`"
            + (", or for a cell of another model the cell of its own model it differs least from" if by_model else "")
            + ". Sorted by Δ peak, the largest saving first. Negative: less memory, or slower.")
    note += " ≥: ran out of memory, a lower bound." if deltas["peak_reached"].any() else ""
    if memory_spread or speed_spread:
        note += " ± se: standard error of the difference of the means over seeds."
    if "same_seed" in deltas and deltas["same_seed"].any():
        note += f" A cell of one seed is held against `{design.baseline}`'s cell of the same seed."
    return Table("deltas", "Each change against the reference cell", columns, rows, note)


def sweep_table(points: pd.DataFrame, design: ReportDesign, throughput: bool, on_cpu: bool = False) -> Table:
    points = points.set_index("group", drop=False)
    parts = [([Column("line", numeric=False), Column(x_label(design.x)), Column("cell", numeric=False),
               Column("status", numeric=False)],
              [[r["line"], number(r["x"], 0), r["group"], str(r["status"])] for _, r in points.iterrows()]),
             _with_spread(points, "peak_device", peak_header(on_cpu), gib_digits(points["peak_device"]))]
    if throughput:
        parts.append(_with_spread(points, "tokens_per_second", "throughput (tokens/s)", 0))
    columns, rows = _joined(*parts)
    return Table("sweep", f"Memory and speed against {design.x}", columns, rows)


def loss_table(table: pd.DataFrame, drawn: list[list[str]]) -> Table:
    same = {g: [o for o in members if o != g] for members in drawn for g in members}
    columns, rows = _joined(_heading(table), ([Column("first loss")], [[number(v, 3)] for v in table["first_loss"]]),
                            _with_spread(table, "final_loss", "final loss", 3),
                            ([Column("same curve as", numeric=False)],
                             [[", ".join(same.get(g, [])) or MISSING] for g in table.index]))
    over = " (mean over seeds)" if (table["n"] > 1).any() else ""
    return Table("loss", "Training loss", columns, rows,
                 f"Loss of the first and last optimizer step{over}; 'same curve as': loss curves that "
                 f"agree within {SAME_CURVE:.2%} at every step.")


def estimate_table(estimate: pd.DataFrame, summary: str) -> Table:
    """estimate.csv: each cell measured on a CUDA GPU, the memory estimate's predicted device peak beside the
    measured one. An oom cell's measured peak is a lower bound of its need, so its error is at most the one shown."""
    gib = 2**30
    rows = []
    for _, row in estimate.iterrows():
        oom = row["status"] == "oom"
        predicted = row["predicted_bytes"]
        rows.append([str(row["name"]), str(row["status"]), number(row["measured_bytes"] / gib, 2, at_least=oom),
                     MISSING if pd.isna(predicted) else number(predicted / gib, 2),
                     ("≤" if oom and pd.notna(row["error"]) else "") + number(100 * row["error"], 1, signed=True),
                     str(row["peak_moment"]) or MISSING])
    note = "Error: predicted / measured - 1."
    if (estimate["status"] == "oom").any():
        note += (" ≥: the cell ran out of memory, its measured peak is a lower bound of what it needs, so the "
                 "error is at most the one shown (≤).")
    for _, row in estimate[estimate["predicted_bytes"].isna()].iterrows():
        note += f" No prediction for `{row['name']}`: {str(row['unpredicted']).rstrip('.')}."
    columns = [Column("cell", numeric=False), Column("status", numeric=False), Column("measured peak device (GiB)"),
               Column("predicted (GiB)"), Column("error (%)"), Column("predicted peak moment", numeric=False)]
    return Table("estimate", "Predicted and measured peak device memory of each GPU cell", columns, rows,
                 f"{note} {summary}")
