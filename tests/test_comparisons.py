"""The quality report's paired comparisons (reports/<matrix>/comparisons.csv): read and checked, set as a table in
report.md and tables.tex, drawn as a forest plot (effect, interval, zero, the margin band), and left out, said so,
where a report has no such file."""

from __future__ import annotations

import re
import shutil

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure

from harness.core.errors import UsageError
from harness.report import comparisons_table as comparisons
from harness.report.charts import paired
from harness.report.charts.style import COLUMN_MAX_HEIGHT_IN, RC, legend_texts
from harness.spec.chart_widths import COLUMN_IN
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "comparisons.csv"


@pytest.fixture
def folder(tmp_path):
    shutil.copy(FIXTURE, tmp_path / comparisons.FILE)
    return tmp_path


def test_the_comparisons_are_read_with_their_numbers(folder):
    frame = comparisons.read(folder)
    assert list(frame["effect"]) == [-0.028, 0.007, -0.008, 0.025] and frame["margin"].notna().all()


def test_a_folder_without_comparisons_has_none_and_a_quality_report_says_so(tmp_path):
    assert comparisons.read(tmp_path) is None
    assert "No `comparisons.csv`" in "\n".join(comparisons.markdown(None, quality=True))
    assert comparisons.markdown(None, quality=False) == []


@pytest.mark.parametrize(("change", "said"), [
    (lambda f: f.drop(columns=["low"]), "lacks the column low"),
    (lambda f: f.assign(effect=["x", 1, 2, 3]), "effect holds 'x', not a number (row 2)"),
    (lambda f: f.assign(low=f["high"] + 1), "low end above its high end"),
])
def test_a_damaged_comparisons_file_is_one_line_naming_it(folder, change, said):
    frame = change(pd.read_csv(FIXTURE))
    frame.to_csv(folder / comparisons.FILE, index=False)
    with pytest.raises(UsageError, match=re.escape(said)):
        comparisons.read(folder)


def test_the_table_gives_effect_interval_seeds_items_and_verdict(folder):
    table = comparisons.table(comparisons.read(folder))
    rows = {(r[3], r[2]): r for r in table.rows}
    assert rows[("exp-decay-8k vs tail-8k", "exact match")][4:] == ["-0.028", "-0.062", "+0.000", "0.050", "3",
                                                                   "144", "inconclusive"]
    assert "the interval lies inside the margin" in table.note
    latex = table.latex("quality-qwen")
    assert r"\multicolumn{2}{c}{interval}" in latex and r"\label{tab:quality-qwen-comparisons}" in latex


def spans(fig: Figure) -> list[tuple[float, float]]:
    """The horizontal lines the forest plot draws (each an interval), as (low, high)."""
    return [(float(seg[0, 0]), float(seg[1, 0])) for ax in fig.axes for c in ax.collections
            if isinstance(c, LineCollection) for seg in c.get_segments() if seg[0, 1] == seg[1, 1]]


def test_the_forest_plot_draws_every_effect_with_its_interval_zero_and_the_margin(folder):
    frame = comparisons.read(folder)
    with plt.rc_context(RC):
        fig = paired.draw(frame, COLUMN_IN)
    try:
        assert len(fig.axes) == 2  # exact match and bits per byte: one panel each
        # each interval a horizontal line between its ends, drawn where it lies
        assert sorted(spans(fig)) == sorted(zip(frame["low"], frame["high"], strict=True))
        recall = fig.axes[0]
        # at a column's width a long row name wraps over two lines
        assert [" ".join(t.get_text().split()) for t in recall.get_yticklabels()] == ["exp-decay-8k vs tail-8k",
                                                                                       "exp-decay-32k vs tail-32k"]
        assert any(line.get_xdata()[0] == 0 for line in recall.get_lines())  # the zero line
        low, high = recall.get_xlim()
        assert low <= -0.062 and high >= 0.05  # every interval and the margin inside the axis
        assert [c for c in recall.collections if isinstance(c, PolyCollection)]  # the margin band
        assert {"higher", "lower", "no difference", "inconclusive"} <= set(legend_texts(fig))
        assert fig.get_figwidth() == COLUMN_IN
    finally:
        plt.close(fig)


@pytest.mark.slow
def test_a_long_list_of_comparisons_is_split_into_parts_within_a_columns_height(folder):
    frame = comparisons.read(folder)
    many = pd.concat([frame] * 10, ignore_index=True)  # 40 comparisons
    with plt.rc_context(RC):
        figures = paired.parts(many, COLUMN_IN)
    try:
        assert len(figures) > 1 and all(fig.get_figheight() <= COLUMN_MAX_HEIGHT_IN + 0.01 for fig in figures)
        drawn = sum(len(spans(fig)) for fig in figures)
        assert drawn == 40  # every comparison in one part or another
    finally:
        for fig in figures:
            plt.close(fig)


def test_comparisons_of_the_same_arms_read_apart_on_the_forest_plot():
    """Two conditions, two held-out languages, or a plain difference beside a difference-in-differences of the same
    two arms: each row of the chart names its task, and the difference-in-differences says so."""
    base = {"a": "exp-decay-20k", "b": "tail-20k", "metric": "recall"}
    rows = [pd.Series({**base, "task": "workload_recall_fixed", "did": False}),
            pd.Series({**base, "task": "workload_recall", "did": True}),
            pd.Series({**base, "task": "help_es", "did": False})]
    labels = [paired.row_label(row) for row in rows]
    assert labels == ["exp-decay-20k vs tail-20k (workload_recall_fixed)",
                      "exp-decay-20k vs tail-20k (workload_recall, DiD)",
                      "exp-decay-20k vs tail-20k (help_es)"]
    assert paired.row_label(pd.Series(base)) == "exp-decay-20k vs tail-20k"  # a table without tasks


def test_a_split_forest_plot_keeps_each_metrics_comparisons_together(folder):
    """At a column's width the comparisons are split into parts; taken metric by metric, so that two metrics
    interleaved in the table do not cost every part a second panel."""
    frame = comparisons.read(folder)
    interleaved = pd.concat([frame.iloc[[i]] for _ in range(2) for i in range(len(frame))], ignore_index=True)
    assert interleaved["metric"].tolist()[:3] != sorted(interleaved["metric"].tolist()[:3])  # metrics alternate
    with plt.rc_context(RC):
        figures = paired.parts(interleaved, COLUMN_IN)
    try:
        panels = [len(fig.axes) for fig in figures]
        assert sum(len(spans(fig)) for fig in figures) == len(interleaved)
        assert sum(p > 1 for p in panels) <= 1  # at most the part where one metric ends and the next begins
    finally:
        for fig in figures:
            plt.close(fig)
