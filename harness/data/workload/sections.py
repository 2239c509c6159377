"""Split plain text into sections, for the user's own long documents and to check the generated ones.
Why it is so: docs/data.md."""

from __future__ import annotations

import re

from harness.data.workload.documents import SECTION_SEPARATOR, Section

_NUMBERED = re.compile(r"^(\d+\.(?:\d+\.?)*|\d+(?:\.\d+)+)\s+(\S.*)$")
_NAMED = re.compile(r"^(?:section|chapter|part)\s+(?:\d+|[ivxlc]+)\b\s*[.:\-–—]?\s*(.*)$", re.IGNORECASE)
_MARKDOWN = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_MAX_HEADING_WORDS = 12


def heading_title(line: str, after_blank: bool) -> str | None:
    """The section title if `line` is a heading, else None."""
    line = line.strip()
    if match := _MARKDOWN.match(line):
        return match.group(1)
    if not after_blank or not line or len(line.split()) > _MAX_HEADING_WORDS or line[-1] in ".,;:!?":
        return None
    if match := _NUMBERED.match(line):
        return match.group(2).strip()
    if match := _NAMED.match(line):
        return match.group(1).strip() or line
    letters = [c for c in line if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return line
    return None


def _by_paragraphs(text: str, title: str, max_words: int) -> list[Section]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    groups: list[list[str]] = []
    words = 0
    for paragraph in paragraphs:
        size = len(paragraph.split())
        if groups and words + size <= max_words:
            groups[-1].append(paragraph)
            words += size
        else:
            groups.append([paragraph])
            words = size
    return [Section(i + 1, f"{title} (part {i + 1})", SECTION_SEPARATOR.join(group)) for i, group in enumerate(groups)]


def split_sections(text: str, title: str, max_words: int = 1000) -> list[Section]:
    """Sections of `text` in order, each Section.text starting with its heading line (see module doc)."""
    if max_words < 1:
        raise ValueError(f"max_words must be positive, got {max_words}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    starts: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        found = heading_title(line, after_blank=index == 0 or not lines[index - 1].strip())
        if found is not None:
            starts.append((index, found))
    if not starts:
        return _by_paragraphs("\n".join(lines), title, max_words)
    pieces: list[tuple[str, str]] = []
    preamble = "\n".join(lines[:starts[0][0]]).strip()
    if preamble:
        pieces.append((title, preamble))
    bounds = [index for index, _ in starts] + [len(lines)]
    for (start, found), end in zip(starts, bounds[1:], strict=True):
        pieces.append((found, "\n".join(lines[start:end]).strip()))
    return [Section(i + 1, found, body) for i, (found, body) in enumerate(pieces)]
