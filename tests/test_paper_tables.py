"""The rules a table and a methods file must keep to go into a paper as they are, one test each: every table a
report shows has LaTeX (the ceiling and the estimate's too), the tables that hold each change against a
reference are sorted by its effect in Markdown and LaTeX alike, every numeric column has one number of decimals,
methods.tex compiles, the interquartile range of the step times is shown only where speed is a measurement, and
the estimate's predicted-against-measured chart is there at both widths."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.report.charts.estimate_scatter import NAME
from harness.report.methods_latex import latex as methods_latex
from harness.spec.chart_widths import COLUMN_IN, DOUBLE_IN
from tests.conftest import REPO
from tests.test_paper_figures import pdf_width_pt

REPORTS = REPO / "reports"
# every Markdown file of reports/ that shows tables
MARKDOWN = sorted([*REPORTS.glob("*/report.md"), *REPORTS.glob("*/ceiling.md"), *REPORTS.glob("*/calibration.md")])
NUMBER = re.compile(r"^[≥≤]?[+-]?\d[\d,]*(\.\d+)?")
# how tables.tex writes signs and bounds before a number
LATEX_MARKS = ("$+$", "$-$", r"$\geq$", r"$\leq$", "\\geq ", "\\leq ")
# a column of tables.tex: a number column (siunitx S, or r), a paragraph column, or l/c
SPEC = re.compile(r"S\[[^\]]*\]|>\{[^}]*\}p\{[^}]*\}|[lrc]")
SEPARATOR = re.compile(r"(?<!\\)\|")  # a cell's own | is escaped as \|


def markdown_tables(text: str) -> list[tuple[list[str], list[bool], list[list[str]]]]:
    """Each Markdown table of a file: its header, which columns are right-aligned (numeric), its rows."""
    found, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip() for c in SEPARATOR.split(line.strip().strip("|"))])
        elif block:
            numeric = [c.endswith(":") and not c.startswith(":") for c in block[1]]
            found.append((block[0], numeric, block[2:]))
            block = []
    return found


def latex_tables(text: str) -> list[tuple[list[bool], list[list[str]]]]:
    """Each tabular of a tables.tex: which columns hold numbers (S or r), its body rows (breaks allowed in a long
    name left out)."""
    found = []
    for spec, body in re.findall(r"\\begin\{tabular\}\{((?:[^{}]|\{[^{}]*\})+)\}\n.*?\\midrule\n(.*?)\\bottomrule",
                                 text, re.S):
        body = body.replace(r"\allowbreak{}", "").replace(r"\hspace{0pt}", "")
        rows = [[c.strip() for c in re.split(r"(?<!\\)&", line.removesuffix(r" \\"))] for line in body.splitlines()]
        found.append(([c[0] in "Sr" for c in SPEC.findall(spec)], rows))
    return found


def decimals(cell: str) -> int | None:
    for mark in LATEX_MARKS:
        cell = cell.replace(mark, "")
    match = NUMBER.match(cell)
    return None if match is None else len(match.group(1) or ".") - 1


def mixed_columns(numeric: list[bool], rows: list[list[str]]) -> list[tuple[int, set[int]]]:
    """The numeric columns whose numbers do not all have the same number of decimals."""
    mixed = []
    for i, is_numeric in enumerate(numeric):
        found = {d for row in rows if (d := decimals(row[i])) is not None}
        if is_numeric and len(found) > 1:
            mixed.append((i, found))
    return mixed


def test_the_decimal_check_finds_a_column_that_mixes_decimals():
    # the ceiling table as pandas wrote it before: 15.79 beside 15.7
    table = "| a | peak |\n|:--|-----:|\n| x | 15.79 |\n| y | 15.7 |\n| z | – |\n"
    (_, numeric, rows), = markdown_tables(table)
    assert mixed_columns(numeric, rows) == [(1, {1, 2})]


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(REPORTS)))
def test_every_numeric_column_of_a_committed_report_has_one_number_of_decimals(path):
    for header, numeric, rows in markdown_tables(path.read_text()):
        assert not mixed_columns(numeric, rows), (header, mixed_columns(numeric, rows))


@pytest.mark.parametrize("path", sorted([*REPORTS.glob("*/tables.tex"), *REPORTS.glob("*/ceiling.tex")]),
                         ids=lambda p: str(p.relative_to(REPORTS)))
def test_every_numeric_column_of_a_committed_tables_tex_has_one_number_of_decimals(path):
    for numeric, rows in latex_tables(path.read_text()):
        assert not mixed_columns(numeric, rows), (rows[0], mixed_columns(numeric, rows))


def test_every_report_that_shows_tables_has_them_in_latex():
    for path in MARKDOWN:
        latex = path.parent / ("ceiling.tex" if path.name == "ceiling.md" else "tables.tex")
        assert latex.is_file(), path
        # one table (a float, or the parts of a wide one) for each table the Markdown shows
        labels = re.findall(r"\\label\{(tab:.*?)(?:-\d+)?\}", latex.read_text())
        assert len(set(labels)) == len(markdown_tables(path.read_text())), path


def _effect(cell: str) -> float:
    """A Δ cell's number; one without (–) sorts last."""
    for mark in (*LATEX_MARKS, "≥", "≤"):
        cell = cell.replace(mark, "+" if mark == "$+$" else "-" if mark == "$-$" else "")
    match = re.match(r"[+-]?\d[\d,]*(\.\d+)?", cell)
    return float(match.group(0).replace(",", "")) if match else float("inf")


def test_each_change_against_the_reference_is_sorted_by_its_effect_in_markdown_and_latex_alike():
    checked = 0
    for path in sorted(REPORTS.glob("*/report.md")):
        text = path.read_text()
        latex = (path.parent / "tables.tex").read_text()
        for title in re.findall(r"^### (Each change against .*)$", text, re.M):
            section = text.split(f"### {title}\n", 1)[1]
            (header, _, rows), *_ = markdown_tables(section)
            column = next(i for i, h in enumerate(header) if h.startswith("Δ peak"))
            effects = [_effect(row[column]) for row in rows]
            assert effects == sorted(effects), (path.parent.name, title)
            # the LaTeX table of the same caption lists the cells in the same order
            caption = latex.split(title.replace("`", "").replace("_", r"\_"), 1)[1]
            (_, latex_rows), *_ = latex_tables(caption)
            assert [r[0] for r in latex_rows] == [r[0].replace("_", r"\_") for r in rows], path.parent.name
            assert "sorted by Δ peak" in section.split("\n### ", 1)[0].replace("Sorted", "sorted")  # the note says so
            checked += 1
    assert checked >= 5  # every matrix with a baseline, the quality matrices' quality tables too


def _speed_table(matrix: str) -> str:
    text = (REPORTS / matrix / "report.md").read_text()
    return text.split("### Training speed of each cell", 1)[1].split("###", 1)[0] if "### Training speed" in text \
        else ""


def test_the_interquartile_range_of_the_step_times_is_shown_only_where_speed_is_measured():
    # seed-16gb: measured on its own GPU; smoke: on a CPU; quality-smollm2: cells that shared the device
    assert "step IQR (s)" in _speed_table("seed-16gb") and "interquartile range" in _speed_table("seed-16gb")
    assert "step IQR (s)" in (REPORTS / "seed-16gb" / "tables.tex").read_text()
    assert _speed_table("smoke") and "IQR" not in _speed_table("smoke")
    assert "IQR" not in (REPORTS / "smoke" / "tables.tex").read_text()
    assert not _speed_table("quality-smollm2") and "IQR" not in (REPORTS / "quality-smollm2" / "tables.tex").read_text()
    # the ceiling's probes time one step each: no spread to give
    assert "IQR" not in (REPORTS / "ceiling-16gb" / "ceiling.md").read_text()


def test_the_estimate_has_its_predicted_against_measured_chart_at_both_widths():
    folder = REPORTS / "estimate"
    assert pdf_width_pt((folder / f"{NAME}.pdf").read_bytes()) == pytest.approx(DOUBLE_IN * 72, abs=0.5)
    assert pdf_width_pt((folder / f"{NAME}-column.pdf").read_bytes()) == pytest.approx(COLUMN_IN * 72, abs=0.5)
    assert (folder / f"{NAME}.png").is_file() and f"`{NAME}.pdf`" in (folder / "calibration.md").read_text()


def test_methods_tex_is_methods_md_in_latex_with_every_special_character_escaped():
    text = methods_latex("# Methods: a_b\n\nSee `harness/flops.py` & 50% of $5 #1.\n\n- one_item\n- two ~ ^\n")
    assert r"\section*{Methods: a\_b}" in text and r"\texttt{harness/flops.py}" in text
    assert r"\& 50\% of \$5 \#1." in text
    assert "\\begin{itemize}\n\\item one\\_item\n\\item two \\textasciitilde{} \\textasciicircum{}\n\\end{itemize}" \
        in text


ARTICLE = r"""\documentclass{article}
\begin{document}
\input{methods}
\end{document}
"""


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (apt-get install texlive-latex-recommended)")
@pytest.mark.parametrize("folder", sorted(p.parent for p in REPORTS.glob("*/methods.md")), ids=lambda p: p.name)
def test_every_committed_methods_tex_compiles_in_a_minimal_article(tmp_path, folder: Path):
    assert (folder / "methods.tex").read_text() == methods_latex((folder / "methods.md").read_text())
    shutil.copy(folder / "methods.tex", tmp_path / "methods.tex")
    (tmp_path / "paper.tex").write_text(ARTICLE)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
