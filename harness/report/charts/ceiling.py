"""The ceiling chart: per configuration, the longest context that fit its budget (with the memory estimate's
answer beside it), the host memory the process held there against common desktops' RAM, and the speed there
where it was measured (probes that shared the device measure memory, not speed)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from harness.report.charts.style import figure, legend_outside, rows_top_down
from harness.report.charts.technique_colours import TOL_GREY, TOL_MUTED
from harness.spec.chart_widths import DOUBLE_IN

GIB = 2**30
# the seed's class of desktop (32 to 64 GB of RAM), in GiB, beside the host memory a configuration held; the
# line style each is drawn in
DESKTOP_RAM = {"32 GB desktop": 32e9 / GIB, "64 GB desktop": 64e9 / GIB}
DESKTOP_STYLE = {"32 GB desktop": ":", "64 GB desktop": "-."}
REACHED, ESTIMATED, HOST, PINNED, SPEED = TOL_MUTED[0], TOL_MUTED[6], TOL_MUTED[2], TOL_MUTED[3], TOL_MUTED[5]


def draw(table: pd.DataFrame, low: int, high: int, width: float = DOUBLE_IN) -> Figure:
    """`table`: the rows of harness.results.ceiling.Search.row(); `low`, `high`: the searched range."""
    speed = table["tokens_per_second"].notna().any()
    fig, axes = figure(1, 3 if speed else 2, width=width, height=0.3 * max(len(table), 2) + 1.2,
                       sharey=True, gridspec_kw={"width_ratios": [2.2, 1.2, 1.2] if speed else [2.2, 1.2]})
    names = list(table["cell"])
    ax = axes[0][0]
    reached = table["ceiling_context"].fillna(0)
    ax.barh(range(len(table)), reached, color=REACHED, height=0.6)
    ax.scatter(table["estimated_context"], range(len(table)), marker="D", facecolor="white", edgecolor=ESTIMATED,
               zorder=3, s=22)
    for i, (value, guess, answer) in enumerate(zip(reached, table["estimated_context"].fillna(0), table["answer"],
                                                   strict=True)):
        # written past the bar and the estimate's marker, whichever ends further right
        ax.annotate(answer if len(answer) < 40 else answer[:37] + "…", (max(value, guess), i), xytext=(6, -3),
                    textcoords="offset points", fontsize=7)
    top = max(float(reached.max()), float(table["estimated_context"].fillna(0).max()), low) * 1.3
    ax.axvspan(0, low, color="#eeeeee", zorder=0)
    if high <= top:
        ax.axvline(high, color=TOL_GREY, linestyle="--", linewidth=1)
    ax.set_xlim(0, top)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}k"))
    ax.set_xlabel("longest context that fits (tokens)")
    rows_top_down(ax, names)

    host = axes[0][1]
    host.barh(range(len(table)), table["peak_host_unmapped_bytes"].fillna(0) / GIB, color=HOST, height=0.6)
    host.barh(range(len(table)), table["peak_host_pinned_bytes"].fillna(0) / GIB, color=PINNED, height=0.3)
    for label, gib in DESKTOP_RAM.items():
        host.axvline(gib, color="black", linestyle=DESKTOP_STYLE[label], linewidth=1)
    host.set_xlabel("host memory no file backs, there (GiB)")
    handles = [Line2D([], [], color=REACHED, linewidth=6, label="measured: fits, the next step does not"),
               Line2D([], [], marker="D", markerfacecolor="white", markeredgecolor=ESTIMATED, linestyle="none",
                      label="the memory estimate's answer"),
               Line2D([], [], color="#eeeeee", linewidth=6, label=f"below the searched range ({low:,})"),
               Line2D([], [], color=HOST, linewidth=6, label="host memory no file backs (what a host budget "
                                                             "is judged on)"),
               Line2D([], [], color=PINNED, linewidth=3, label="of it pinned: offloaded layer inputs"),
               *(Line2D([], [], color="black", linestyle=DESKTOP_STYLE[label], label=f"{label} ({gib:.1f} GiB)")
                 for label, gib in DESKTOP_RAM.items())]
    if speed:
        pace = axes[0][2]
        pace.barh(range(len(table)), table["tokens_per_second"].fillna(0), color=SPEED, height=0.6)
        pace.set_xlabel("training tokens/s there")
    else:
        handles.append(Line2D([], [], linestyle="none", label="tokens/s: not measured (probes shared the GPU)"))
    legend_outside(axes[0][-1], handles, [h.get_label() for h in handles], below=True)
    fig.suptitle("the longest context within the budget, measured by bisection", fontsize=9)
    return fig
