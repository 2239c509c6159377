"""A report table set at the size it is printed: \\footnotesize (8 pt in a 10 pt article, never under 7 pt in any
standard size), numbers in siunitx `S` columns aligned on the decimal point, headers wrapped over lines, long text
wrapped in a paragraph column, and the table's width known before LaTeX sees it. A table that fits one column of a
two-column article is a `table`, one that fits its text width a `table*`, and one wider still is split into parts
(a table each, the first column repeated, a group of columns never split) rather than shrunk.

Widths are estimated from the characters at \\footnotesize of Computer Modern, on the generous side; the test that
compiles every committed tables.tex in a two-column article holds the estimate to the truth (no overfull box).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class LaidColumn(Protocol):
    @property
    def header(self) -> str: ...
    @property
    def numeric(self) -> bool: ...
    @property
    def group(self) -> str: ...


class Table(Protocol):
    """What a report table (harness/report/tables.py) gives its layout. Read only, so that a table's own list of
    its own column class is one (a list the layout could add to would have to be a list of LaidColumn)."""

    @property
    def key(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def columns(self) -> Sequence[LaidColumn]: ...
    @property
    def rows(self) -> Sequence[Sequence[str]]: ...
    @property
    def note(self) -> str: ...

# a two-column article (10 pt, letter): one column, and the text block across both
COLUMN_PT = 229.5
TEXT_PT = 469.0
SLACK = 0.96  # an estimate this close to a width counts as too wide
GAP_PT = 8.0  # the space between columns: 2 \tabcolsep of 4 pt
WRAP_PT = 96.0  # a text column wider than this wraps in a paragraph column where the table must narrow
HEADER_CHARS = 16  # a header's lines at most this long, where its words allow
SIZE = r"\footnotesize"
# siunitx: numbers as the Markdown shows them (a thousands comma from 4 digits on, a written plus kept)
SISETUP = r"\sisetup{group-separator={,}, group-minimum-digits=4, retain-explicit-plus}"
NUMBER = re.compile(r"^(?P<bound>[≥≤])?(?P<sign>[+-])?(?P<integer>\d[\d,]*)(?:\.(?P<fraction>\d+))?$")
BOUNDS = {"≥": r"\geq", "≤": r"\leq"}
# widths of Computer Modern at 8 pt, in points (measured with \settowidth; a character not listed counts as wide)
_DIGIT, _LOWER, _UPPER, _SPACE, _OTHER = 4.25, 4.3, 6.2, 2.9, 4.6
_NARROW = {c: 2.4 for c in ".,:;!'|()[]ilj"} | {"-": 2.9, "=": 6.6, "+": 6.6, "%": 7.1, "–": 4.3, "/": 4.3}
_MATH = {"±": 6.6, "Δ": 7.1, "≥": 6.6, "≤": 6.6, "→": 8.5, "ρ": 4.4, "−": 6.6}
# what a LaTeX table may not hold as it is
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "Δ": r"$\Delta$", "±": r"$\pm$",
          "≥": r"$\geq$", "≤": r"$\leq$", "–": "--", "→": r"$\rightarrow$", "ρ": r"$\rho$",
          "−": r"$-$"}
# where a long name may break in a paragraph column: after these
BREAK_AFTER = ",=/_-:"


def text_pt(text: str) -> float:
    """The printed width of one line of text at the table's size, a little over rather than under."""
    width = 0.0
    for ch in text:
        if ch.isdigit():
            width += _DIGIT
        elif ch == " ":
            width += _SPACE
        elif ch in _NARROW:
            width += _NARROW[ch]
        elif ch in _MATH:
            width += _MATH[ch]
        elif ch.islower():
            width += _LOWER
        elif ch.isupper():
            width += _UPPER
        else:
            width += _OTHER
    return 1.04 * width


def header_lines(header: str) -> list[str]:
    return textwrap.wrap(header, HEADER_CHARS, break_long_words=False, break_on_hyphens=False) or [""]


@dataclass
class NumberFormat:
    """The siunitx table-format of a column of numbers: its widest bound, sign, integer and fraction."""

    bound: str = ""
    sign: bool = False
    integer: int = 1
    fraction: int = 0

    def spec(self) -> str:
        fraction = f".{self.fraction}" if self.fraction else ""
        return f"{BOUNDS[self.bound] + ' ' if self.bound else ''}{'+' if self.sign else ''}{self.integer}{fraction}"

    def width(self) -> float:
        digits = self.integer + self.fraction
        commas = (self.integer - 1) // 3 if self.integer >= 4 else 0
        return (_MATH["≥"] + _SPACE if self.bound else 0) + (_MATH["±"] if self.sign else 0) \
            + digits * _DIGIT + commas * 2.4 + (2.4 if self.fraction else 0)


def number_format(values: list[str]) -> NumberFormat | None:
    """The format of a column's numbers; None where it holds none (then it is set as text)."""
    found = [m for v in values if (m := NUMBER.match(v))]
    if not found:
        return None
    return NumberFormat(bound=next((m["bound"] for m in found if m["bound"]), ""),
                        sign=any(m["sign"] for m in found),
                        integer=max(len(m["integer"].replace(",", "")) for m in found),
                        fraction=max(len(m["fraction"] or "") for m in found))


def number_cell(value: str) -> str | None:
    """A number as an S column reads it (the bound as a comparator, no thousands comma: siunitx sets its own);
    None for anything else."""
    match = NUMBER.match(value)
    if match is None:
        return None
    bound = BOUNDS[match["bound"]] + " " if match["bound"] else ""
    fraction = f".{match['fraction']}" if match["fraction"] else ""
    return f"{bound}{match['sign'] or ''}{match['integer'].replace(',', '')}{fraction}"


def longest_piece(text: str) -> str:
    """The longest run of a text that cannot break in a paragraph column (between spaces and BREAK_AFTER)."""
    return max(re.split(r"(?<=[" + re.escape(BREAK_AFTER) + r"])|\s+", text), key=text_pt, default="")


@dataclass
class Layout:
    """How a part of a table is set: which columns (by index), which of them wrap and at what width, and
    whether it needs both columns of the page."""

    columns: list[int]
    wrapped: dict[int, float]
    wide: bool


def _width(natural: dict[int, float], columns: list[int], wrapped: dict[int, float]) -> float:
    return sum(wrapped.get(i, natural[i]) + GAP_PT for i in columns)


def _fits(width: float, room: float) -> bool:
    return width <= SLACK * room


def layouts(natural: dict[int, float], shortest: dict[int, float], text: set[int],
            units: list[list[int]]) -> list[Layout]:
    """Parts that each fit a column or the text block: natural widths first, then long text wrapped, then split.
    natural: each column's width unwrapped; shortest: the narrowest a text column may wrap to; units: the columns
    after the first, in groups that stay together."""
    every = sorted(natural)
    wrapped = {i: max(WRAP_PT, shortest[i]) for i in text if natural[i] > max(WRAP_PT, shortest[i])}
    for attempt, room, wide in (({}, COLUMN_PT, False), (wrapped, COLUMN_PT, False), ({}, TEXT_PT, True),
                                (wrapped, TEXT_PT, True)):
        if _fits(_width(natural, every, attempt), room):
            return [Layout(every, {i: w for i, w in attempt.items()}, wide)]
    parts: list[list[int]] = []
    for unit in units:
        if parts and _fits(_width(natural, [0, *parts[-1], *unit], wrapped), TEXT_PT):
            parts[-1] += unit
        else:
            parts.append(list(unit))
    found = []
    for part in parts:
        columns = [0, *part]
        mine = {i: w for i, w in wrapped.items() if i in columns}
        found.append(Layout(columns, mine, not _fits(_width(natural, columns, mine), COLUMN_PT)))
    return found


def tex(text: str, numeric: bool = False) -> str:
    """Text as LaTeX: its special characters escaped, the symbols of the reports as math, backticks dropped."""
    if numeric and text[:1] in "+-":
        return f"${text[0]}${text[1:]}"  # a true minus, and a plus of the same width
    return "".join(_LATEX.get(ch, ch) for ch in text.replace("`", ""))


def breakable(text: str) -> str:
    """Text for a paragraph column: escaped, with a break allowed after each of BREAK_AFTER (a long cell name)."""
    return r"\hspace{0pt}" + "".join(_LATEX.get(ch, ch) + (r"\allowbreak{}" if ch in BREAK_AFTER else "")
                                     for ch in text.replace("`", ""))


def _header(lines: list[str], align: str) -> str:
    if len(lines) == 1:
        return "{" + tex(lines[0]) + "}"
    return "{" + rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r" \\ ".join(tex(line) for line in lines) \
        + r"\end{tabular}}"


def render(table: Table, matrix: str) -> str:
    """The table's LaTeX: a float per part (layouts), each with its caption, label and, on the last, the note."""
    columns = table.columns
    formats = [number_format([row[i] for row in table.rows]) if c.numeric else None for i, c in enumerate(columns)]
    natural, shortest, text = {}, {}, set()
    for i, column in enumerate(columns):
        heads = header_lines(column.header)
        cells = [row[i] for row in table.rows]
        found = [text_pt(line) for line in heads]
        if (numbers := formats[i]) is not None:
            found += [numbers.width(), *(text_pt(v) for v in cells if number_cell(v) is None)]
        else:
            found += [text_pt(v) for v in cells]
            if not column.numeric:
                text.add(i)
                shortest[i] = max(text_pt(longest_piece(v)) for v in [column.header, *cells])
        natural[i] = max(found)
    for group, members in _groups(columns).items():  # a group's name spans its columns: they are at least as wide
        short = text_pt(group) - sum(natural[i] + GAP_PT for i in members) + GAP_PT
        if short > 0:
            natural[members[-1]] += short
    units: list[list[int]] = []
    for i in range(1, len(columns)):
        if units and columns[i].group and columns[i].group == columns[i - 1].group:
            units[-1].append(i)
        else:
            units.append([i])
    parts = layouts(natural, shortest, text, units)
    return "".join(_part(table, matrix, formats, layout, n, len(parts)) for n, layout in enumerate(parts, 1))


def _groups(columns: Sequence[LaidColumn]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for i, column in enumerate(columns):
        if column.group:
            found.setdefault(column.group, []).append(i)
    return found


def _part(table: Table, matrix: str, formats: list[NumberFormat | None], layout: Layout, n: int, of: int) -> str:
    spec, heads = [], []
    for i in layout.columns:
        column = table.columns[i]
        if i in layout.wrapped:
            spec.append(rf">{{\raggedright\arraybackslash}}p{{{layout.wrapped[i]:.0f}pt}}")
            heads.append(breakable(column.header))
        elif (numbers := formats[i]) is not None:
            spec.append(f"S[table-format={numbers.spec()}]")
            heads.append(_header(header_lines(column.header), "c"))
        else:
            spec.append("c" if column.numeric else "l")
            heads.append(_header(header_lines(column.header), "c" if column.numeric else "l"))
    float_ = "table*" if layout.wide else "table"
    label = f"tab:{matrix}-{table.key}" + (f"-{n}" if n > 1 else "")
    caption = tex(table.title) + (f" (part {n} of {of})" if of > 1 else "")
    lines = [rf"\begin{{{float_}}}[htbp]", r"\centering", SIZE, r"\setlength{\tabcolsep}{4pt}", SISETUP,
             rf"\caption{{{caption}}}", rf"\label{{{label}}}", rf"\begin{{tabular}}{{{''.join(spec)}}}", r"\toprule"]
    spans = _spans([table.columns[i].group for i in layout.columns])
    if any(group for group, _, _ in spans):
        lines.append(" & ".join(rf"\multicolumn{{{end - start + 1}}}{{c}}{{{tex(group)}}}" if group else
                                " & ".join([""] * (end - start + 1)) for group, start, end in spans) + r" \\")
        lines.append("".join(rf"\cmidrule(lr){{{start + 1}-{end + 1}}}" for group, start, end in spans if group))
    lines += [" & ".join(heads) + r" \\", r"\midrule"]
    for row in table.rows:
        cells = []
        for i in layout.columns:
            value = row[i]
            if i in layout.wrapped:
                cells.append(breakable(value))
            elif formats[i] is not None:
                cells.append(number_cell(value) or "{" + tex(value) + "}")
            else:
                cells.append(tex(value, numeric=table.columns[i].numeric))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.note and n == of:
        lines.append(rf"\par\smallskip {tex(table.note)}")
    return "\n".join([*lines, rf"\end{{{float_}}}", ""])


def _spans(groups: list[str]) -> list[tuple[str, int, int]]:
    """Runs of columns of one group: (group, first, last), "" for a column of none."""
    found: list[tuple[str, int, int]] = []
    for i, group in enumerate(groups):
        if found and group and found[-1][0] == group:
            found[-1] = (group, found[-1][1], i)
        else:
            found.append((group, i, i))
    return found
