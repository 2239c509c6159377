"""The widths a chart is drawn at, as a paper's columns are: each chart is saved at the double-column width
(`name.pdf`, `name.png`) and at the single-column width (`name-column.pdf`), with no text under SMALLEST_PT
points at that width, so that it goes into a paper at 100% as it is."""

from __future__ import annotations

POINTS_PER_INCH = 72.0
DOUBLE_IN = 7.0  # about 505 pt: the text block of a two-column article, across both columns
COLUMN_IN = 3.4  # about 245 pt: one column of it
SMALLEST_PT = 7.0
# file name suffix -> the width the chart is drawn at, in inches; the double-column chart keeps the plain name
WIDTHS: dict[str, float] = {"": DOUBLE_IN, "-column": COLUMN_IN}
# the formats each width is saved in: a paper takes the PDFs, the Markdown report shows the PNG
FORMATS: dict[str, tuple[str, ...]] = {"": ("pdf", "png"), "-column": ("pdf",)}
# narrower than this, a legend goes below the chart rather than beside it
LEGEND_BELOW_IN = 5.0


def chart_files(name: str) -> list[str]:
    """Every file one chart is saved as."""
    return [f"{name}{suffix}.{fmt}" for suffix, formats in FORMATS.items() for fmt in formats]
