"""Recall of planted facts against how many sections before the question they were introduced, one panel
per context, one line per truncation policy (trained: solid, mean over seeds with the seeds' standard deviation;
untrained: dashed), from the report's items.csv. Drawn at the stated width (harness/spec/chart_widths.py) with no
text under 7 pt, so that it goes into a paper as it is."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from harness.report.charts.style import figure, legend_outside, nothing_to_draw
from harness.report.charts.technique_colours import TOL_MUTED
from harness.report.recall_by_age import recall_by_age
from harness.spec.chart_widths import DOUBLE_IN

PANEL_HEIGHT_IN = 2.0


def draw(cells: pd.DataFrame, items: pd.DataFrame | None, width: float = DOUBLE_IN) -> Figure:
    by_age = recall_by_age(cells, items) if items is not None and len(items) else pd.DataFrame()
    if by_age.empty:
        fig, axes = figure(1, 1, width=width, height=PANEL_HEIGHT_IN)
        nothing_to_draw(axes[0][0], "no recall items recorded")
        return fig
    # one line per policy and context: the matrix's first group with it (groups that differ in anything else,
    # a sliced vocabulary say, are in the report's table)
    firsts = by_age.drop_duplicates(["context", "truncation"])["group"]
    by_age = by_age[by_age["group"].isin(set(firsts))]
    contexts = sorted(set(by_age["context"]))
    fig, axes = figure(1, len(contexts), width=width, height=PANEL_HEIGHT_IN, sharey=True)
    policies = list(dict.fromkeys(by_age.sort_values("truncation")["truncation"]))
    colours = {p: TOL_MUTED[i % len(TOL_MUTED)] for i, p in enumerate(policies)}
    labels = by_age.drop_duplicates("age_order").set_index("age_order")["age"].sort_index()
    for ax, context in zip(axes[0], contexts, strict=True):
        part = by_age[by_age["context"] == context]
        for policy, line in part.groupby("truncation", sort=False):
            line = line.sort_values("age_order")
            ax.errorbar(line["age_order"], line["recall"], yerr=line["recall_sd"].fillna(0), color=colours[policy],
                        marker="o", markersize=3, linewidth=1.2, capsize=2, label=f"{policy}, trained")
            ax.plot(line["age_order"], line["untrained"], color=colours[policy], linestyle="--", linewidth=0.9,
                    label=f"{policy}, untrained")
        ax.set_title(f"context {context:,} tokens", fontsize=8)
        ax.set_xticks(list(labels.index), list(labels.values), fontsize=7)
        ax.set_xlabel("fact introduced (sections back)", fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.tick_params(labelsize=7)
        ax.grid(axis="y", linewidth=0.3, alpha=0.5)
    axes[0][0].set_ylabel("recall", fontsize=8)
    handles, names = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            if name not in names:
                handles.append(handle)
                names.append(name)
    legend_outside(axes[0][-1], handles, names)
    return fig
