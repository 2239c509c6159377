"""Every committed tables.tex as a paper prints it: compiled with pdflatex in a two-column article (the widths
the layout is computed for: a table fits one column or both), with no overfull box, no text under 7 pt (every font
selection is logged, and nothing scales a box), and captions in words."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.report.latex_layout import COLUMN_PT, TEXT_PT
from harness.report.tables import Column, Table
from tests.conftest import REPO

TABLES = sorted([*(REPO / "reports").glob("*/tables.tex"), *(REPO / "reports").glob("*/claims.tex"),
                 *(REPO / "reports").glob("*/ceiling.tex")])
# the packages tables.tex says it needs, and a line in the log for every font size selected
PREAMBLE = r"""\usepackage{booktabs}
\usepackage{array}
\usepackage{siunitx}
\makeatletter\AddToHook{selectfont}{\typeout{vramlab-font-size \f@size}}\makeatother
"""
SMALLEST_PT = 7.0
needs_pdflatex = pytest.mark.skipif(
    shutil.which("pdflatex") is None or shutil.which("kpsewhich") is None
    or subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True).returncode != 0,
    reason="pdflatex or siunitx is not installed (apt-get install texlive-latex-recommended texlive-science)")


def compiled(tables: str, folder: Path, options: str) -> str:
    """The log of an article that inputs the tables, after a run of pdflatex that must succeed."""
    (folder / "tables.tex").write_text(tables)
    (folder / "paper.tex").write_text(f"\\documentclass[{options}]{{article}}\n{PREAMBLE}\\begin{{document}}\n"
                                      "\\typeout{vramlab-widths \\the\\columnwidth\\space\\the\\textwidth}\n"
                                      "\\input{tables}\n\\end{document}\n")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=folder,
                         capture_output=True, text=True, timeout=120)
    log = (folder / "paper.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    return log


def problems(log: str) -> list[str]:
    """Overfull boxes and font sizes under 7 pt."""
    found = [line for line in log.splitlines() if line.startswith("Overfull")]
    sizes = {float(s) for s in re.findall(r"^vramlab-font-size ([\d.]+)", log, re.M)}
    found += [f"text set at {s:g} pt" for s in sorted(sizes) if s < SMALLEST_PT]
    return found


@pytest.mark.slow
@needs_pdflatex
@pytest.mark.parametrize("path", TABLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_tables_tex_compiles_without_overfull_boxes_or_text_under_7_pt(tmp_path, path):
    text = path.read_text()
    for scaling in (r"\resizebox", r"\scalebox", r"\tiny", r"\scriptsize", r"\fontsize"):
        assert scaling not in text, scaling
    log = compiled(text, tmp_path, "twocolumn")
    assert not problems(log), problems(log)
    widths = re.search(r"vramlab-widths ([\d.]+)pt ([\d.]+)pt", log).groups()  # those the layout is computed for
    assert tuple(map(float, widths)) == (COLUMN_PT, TEXT_PT)


def test_every_caption_is_in_words_without_a_cell_id():
    for path in TABLES:
        for caption in re.findall(r"\\caption\{(.*)\}", path.read_text()):
            assert not re.search(r"\b[0-9a-f]{12}\b", caption), (path, caption)
            assert "=" not in caption and "texttt" not in caption, (path, caption)


def _wide_table(columns: int) -> Table:
    return Table("wide", "A table with many numbers", [Column("cell", numeric=False),
                                                       *(Column(f"measure number {i} (GiB)") for i in range(columns))],
                 [[f"cell-{r}", *(f"{1000 * r + i:,.2f}" for i in range(columns))] for r in range(3)], "A note.")


def test_a_table_is_a_column_wide_a_page_wide_or_split_as_its_width_needs():
    assert r"\begin{table}[" in _wide_table(2).latex("m")
    assert r"\begin{table*}[" in _wide_table(5).latex("m") and "part 1" not in _wide_table(5).latex("m")
    split = _wide_table(16).latex("m")
    assert split.count(r"\begin{table*}") >= 2 and "(part 1 of" in split
    assert r"\label{tab:m-wide}" in split and r"\label{tab:m-wide-2}" in split
    assert split.count("A note.") == 1 and split.count("cell-2 &") == split.count(r"\begin{table*}")


def test_numbers_are_set_in_siunitx_columns_aligned_on_the_decimal_point():
    table = Table("t", "Numbers", [Column("cell", numeric=False), Column("Δ peak (GiB)")],
                  [["a", "+1.25"], ["b", "≥-10.50"], ["c", "–"], ["d", "12,345.00"]])
    text = table.latex("m")
    assert r"S[table-format=\geq +5.2]" in text
    assert r"a & +1.25 \\" in text and r"b & \geq -10.50 \\" in text and r"c & {--} \\" in text
    assert r"d & 12345.00 \\" in text  # siunitx sets the thousands comma itself


def test_the_columns_of_a_group_share_a_spanning_header_and_stay_together():
    columns = [Column("cell", numeric=False)] + [Column(h, group=f"task {t}") for t in range(6)
                                                 for h in ("mean", "± sd", "Δ untrained")]
    table = Table("g", "Grouped", columns, [["a", *(["0.500", "0.010", "+0.020"] * 6)]])
    text = table.latex("m")
    assert r"\multicolumn{3}{c}{task 0}" in text and r"\cmidrule(lr){2-4}" in text
    for part in text.split(r"\end{table")[:-1]:
        shown = re.findall(r"\\multicolumn\{(\d)\}", part)
        assert shown and set(shown) == {"3"}, part  # no group cut between parts
    assert table.headers()[1:4] == ["task 0: mean", "± sd", "Δ untrained"]


@pytest.mark.slow
@needs_pdflatex
def test_a_split_table_compiles_in_a_two_column_article(tmp_path):
    log = compiled(_wide_table(16).latex("m"), tmp_path, "twocolumn")
    assert not problems(log), problems(log)
