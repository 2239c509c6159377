"""The memory estimate's predicted whole-process device peak against the measured one, one point per ok GPU cell
of the calibration (reports/estimate/calibration.md), coloured and marked per matrix, with y = x and the
calibration's tolerance either side of it. Both axes logarithmic: cells from 0.8 to 16 GiB, and the band a
constant ratio."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from harness.estimate.calibration import GIB, TOLERANCE, Row
from harness.report.charts.style import figure, legend_outside
from harness.report.charts.technique_colours import MARKERS, TOL_GREY, TOL_MUTED
from harness.spec.chart_widths import DOUBLE_IN

NAME = "predicted_vs_measured"


def draw(found: list[Row], width: float = DOUBLE_IN) -> Figure:
    """found: the calibration's rows; a cell without a prediction has no point (the table says why)."""
    shown = [r for r in found if r.predicted_bytes is not None]
    fig, axes = figure(width=width, height=min(width, 3.2))
    ax = axes[0][0]
    values = [v / GIB for r in shown for v in (r.measured_bytes, r.predicted_bytes)] or [1.0]
    low, high = min(values) / 1.15, max(values) * 1.15
    line = [low, high]
    ax.fill_between(line, [v * (1 - TOLERANCE) for v in line], [v * (1 + TOLERANCE) for v in line],
                    color=TOL_GREY, alpha=0.35, linewidth=0, label=f"within ±{TOLERANCE:.0%}")
    ax.plot(line, line, color="black", linewidth=0.8, label="predicted = measured")
    for i, matrix in enumerate(dict.fromkeys(r.matrix for r in shown)):
        points = [r for r in shown if r.matrix == matrix]
        ax.scatter([r.measured_bytes / GIB for r in points], [r.predicted_bytes / GIB for r in points],
                   color=TOL_MUTED[i % len(TOL_MUTED)], marker=MARKERS[i % len(MARKERS)], s=16, zorder=3,
                   label=f"{matrix} ({len(points)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_aspect("equal")
    # powers of two of a GiB: a log axis ticks only at 1 and 10 over this range
    ticks = [2.0**k for k in range(-4, 8) if low <= 2.0**k <= high]
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_ticks(ticks)
        axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        axis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
    ax.set_xlabel("measured peak device memory, whole process (GiB)")
    ax.set_ylabel("predicted (GiB)")
    legend_outside(ax, title="matrix (ok cells)")
    return fig
