"""The README's generated blocks: each lies between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->`
and is made from the committed reports and results alone, so that no number in them is copied by hand.
`vramlab readme` rewrites them; `vramlab readme --check` names the blocks that differ from what the files give
(tests/test_readme.py holds the README to them)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from harness.core.committed_files import changed_committed
from harness.core.errors import UsageError
from harness.report import comparison_text
from harness.report.reproduce import describe_tolerances
from harness.results.store import result_path
from harness.spec.cells import Cell
from harness.spec.matrix import ceiling_spec, expand, shipped_matrices
from harness.spec.matrix_list import entry

GIB = 2**30
HEADLINE = "seed-16gb"
CEILING = "ceiling-16gb"
BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)",
                   re.DOTALL)
# any marker, of any name, so that one BLOCK does not match (a lost end, a misspelt name) is seen, not skipped
MARKER = re.compile(r"<!-- (?P<end>end )?generated:\s*(?P<name>.*?)\s*-->")
ANY_CASE_MARKER = re.compile(MARKER.pattern, re.IGNORECASE)


def _gib(value: float) -> str:
    return "–" if pd.isna(value) else f"{value / GIB:.2f}"


def _count(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:,.0f}"


def _table(header: list[str], rows: list[list[str]], right: frozenset[int] | set[int] = frozenset()) -> str:
    align = ["---:" if i in right else "---" for i in range(len(header))]
    return "\n".join("| " + " | ".join(row) + " |" for row in [header, align, *rows])


def _result(cell: pd.Series) -> str:
    if cell["status"] == "skipped":
        return "skipped (declared conflict)" if "conflict" in str(cell["reason"]) else "skipped"
    return f"{cell['status']} ({cell['failed_phase']})" if isinstance(cell["failed_phase"], str) else cell["status"]


def _section(report: str, heading: str) -> str:
    """A section of a generated report.md, without its heading."""
    return report.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0].strip()


def headline(root: Path) -> str:
    folder = root / "reports" / HEADLINE
    cells = pd.read_csv(folder / "cells.csv", dtype={"cell_id": str})
    design = json.loads((folder / "design.json").read_text())
    # a sweep cell differs from the baseline along the chart's x axis only
    only = {c: "the baseline" if c == design["baseline"] else f"{design['x']} only" for c in cells["name"]}
    rows = [[f"`{c['name']}`", design["changes"].get(c["name"]) or only[c["name"]], f"{c['context']:,}", _result(c),
             _gib(c["peak_device_bytes"]), _gib(c["peak_allocated_bytes"]), _count(c["tokens_per_second"])]
            for _, c in cells.iterrows()]
    table = _table(["cell", f"what differs from `{design['baseline']}`", "context", "result", "device peak GiB",
                    "allocated peak GiB", "tokens/s"], rows, right={2, 4, 5, 6})
    # the Pareto fronts, a line a context, are the report's to list
    summary = "\n".join(line for line in _section((folder / "report.md").read_text(), "Summary").splitlines()
                        if not line.startswith("- Memory-throughput Pareto front"))
    return (f"{table}\n\nThe report's summary ([`reports/{HEADLINE}/report.md`](reports/{HEADLINE}/report.md), which "
            "also gives the memory-throughput Pareto front at each context):\n\n"
            f"{summary}\n\n![{HEADLINE}: device peak and tokens/s of every cell](reports/{HEADLINE}/overview.png)\n")


def ceiling(root: Path) -> str:
    table = pd.read_csv(root / "reports" / CEILING / "ceiling.csv")
    rows = [[f"`{r['cell']}`", str(r["budget"]), r["answer"], _count(r["estimated_context"]),
             _gib(r["peak_device_bytes"]), _gib(r["peak_host_unmapped_bytes"]), _gib(r["peak_host_pinned_bytes"]),
             _count(r["tokens_per_second"])] for _, r in table.iterrows()]
    return _table(["configuration", "budget", "longest context (tokens)", "estimated", "device peak GiB",
                   "host memory no file backs GiB", "of it pinned GiB", "tokens/s"], rows,
                  right={2, 3, 4, 5, 6, 7}) + \
        f"\n\n![{CEILING}: the longest context of each configuration](reports/{CEILING}/ceiling.png)\n"


def claims(root: Path) -> str:
    table = pd.read_csv(root / "reports" / "claims" / "claims.csv")
    # the measurement's first clause: what a ceiling left of its budget and of the host is the report's to give
    rows = [[f"`{r['claim']}`", r["claimed"], r["reading"], r["measured"].split("; ")[0], f"**{r['verdict']}**"]
            for _, r in table.iterrows()]
    return _table(["claim", "claimed", "read as", "measured here", "verdict"], rows) + "\n"


def _published(root: Path, cells: list[Cell]) -> str:
    """'2 of 10': the cells of a matrix with a result file under root's results/."""
    done = sum(result_path(root / "results", c.matrix, c.cell_id).is_file() for c in cells)
    return f"{done} of {len(cells)}"


BRIEF_WORDS = 12  # a matrix's description in the README; `vramlab matrices` and the matrix file give it whole


def brief(text: str, words: int = BRIEF_WORDS) -> str:
    """The text's first `words` words, an ellipsis where it was cut."""
    kept = text.split()
    return " ".join(kept[:words]) + (" …" if len(kept) > words else "")


def local_matrices() -> dict[str, Path]:
    """The shipped matrices whose files git does not track (a matrix written in the checkout and not committed):
    the README, which others read, lists only what a clone of the repository has."""
    local: dict[str, Path] = {}
    for name, file in shipped_matrices().items():
        try:
            out = subprocess.run(["git", "-C", str(file.parent), "ls-files", "--error-unmatch", "--", file.name],
                                 capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue  # no git: an installed copy, whose matrices are all shipped
        if out.returncode != 0 and "not a git repository" not in out.stderr:
            local[name] = file
    return local


def matrices(root: Path) -> str:
    rows = []
    local = local_matrices()
    for name in (n for n in shipped_matrices() if n not in local):
        found = entry(name)
        cells = expand(name, check_model=False)
        if ceiling_spec(name) is not None:  # its results are the probes of each cell's search
            probes = [len(list((root / "results" / name / "ceiling" / c.cell_id).glob("*.json"))) for c in cells]
            published = f"{sum(n > 0 for n in probes)} searches, {sum(probes)} probes"
        else:
            published = _published(root, cells)
        shown = next((f for f in ("report.md", "ceiling.md") if (root / "reports" / name / f).is_file()), None)
        report = f"[{shown}](reports/{name}/{shown})" if shown else "–"
        # the models are named by each description; `vramlab matrices` gives the sources and whether they are here
        rows.append([f"`{name}`", str(found.cells), published, found.device(), brief(found.description), report])
    return _table(["matrix", "cells", "published results", "runs on", "what it measures", "report"], rows,
                  right={1}) + "\n"


# the quality study (docs/quality-study.md): its matrices, and the families of comparisons that answer the seed's
# two claims (the training family is each report's: it is the premise, not a claim)
STUDY = ("study-truncation", "study-vocabulary", "study-truncation-1-5b", "study-vocabulary-1-5b")
CLAIM_FAMILIES = ("truncation", "vocabulary")




def study(root: Path) -> str:
    """The seed's claims as the study's reports decide them: each comparison of the claim families, in the words
    and numbers of its report's summary (comparison_text), so that the README, the summary and comparisons.csv
    agree word for word."""
    rows, waiting = [], []
    for name in STUDY:
        comparisons = comparison_text.read_comparisons(root / "reports" / name)
        if comparisons is None:
            waiting.append(f"`{name}`")
            continue
        matrix = f"[`{name}`](reports/{name}/report.md), {_published(root, expand(name, check_model=False))} cells"
        before = None  # a cell equal to the one above it is left empty
        for i, (_, row) in enumerate(comparisons[comparisons["family"].isin(CLAIM_FAMILIES)].iterrows()):
            compared = f"`{row['a']}` − `{row['b']}`" + (", difference-in-differences" if row["did"] else "")
            rows.append([matrix if i == 0 else "", "" if compared == before else compared,
                         comparison_text.measured_as(row), comparison_text.short_effect(row) or "–",
                         comparison_text.n_text(row, short=True),
                         f"**{row['verdict']}**"])
            before = compared
    header = ["matrix", "compared (a − b)", "measured as", "effect [interval] (Holm level)", "n", "verdict"]
    table = _table(header, rows) + "\n" if rows else ""
    later = f"\nNo results yet: {', '.join(waiting)}.\n" if waiting else ""
    return table + later


def reproduction(root: Path) -> str:
    return f"What the comparison judges: {describe_tolerances()}.\n"


BLOCKS: dict[str, Callable[[Path], str]] = {"headline": headline, "ceiling": ceiling, "claims": claims,
                                            "matrices": matrices, "study": study, "reproduction": reproduction}


# what the blocks are made of: the matrix files, their results and their reports (not the benchmarks' own records,
# nor the results a rerun set aside)
SOURCES = ("ablations", "results", "reports", ":(exclude)results/benchmarks", ":(exclude)results/superseded")


def check_sources_committed(root: Path) -> None:
    """The blocks are what the committed files give, for everyone who clones the repository: an uncommitted edit or
    deletion of one of them (a matrix file, a result, a report) is refused in one line rather than carried into the
    README."""
    changed = changed_committed(root, *SOURCES)
    if changed:
        first, more = changed[0], len(changed) - 1
        others = f" (and {more} other committed file{'s' if more > 1 else ''} under {', '.join(SOURCES[:3])})" \
            if more else ""
        raise UsageError(f"readme: {first.shown()} differs from the commit ({first.change}){others}, and the README's "
                         f"blocks are made from the committed files; restore it with {first.restore()}, or commit it "
                         "first")


def rewritten(text: str, root: Path) -> tuple[str, list[str]]:
    """The README's text with every generated block made again from the files under root, and the names of the
    blocks that changed."""
    block_names(text)  # a broken or unknown marker is refused before anything is made
    changed: list[str] = []

    def again(match: re.Match) -> str:
        name = match.group("name")
        try:
            body = BLOCKS[name](root)
        except (OSError, KeyError, IndexError, ValueError) as err:  # a report missing or of another shape
            raise UsageError(f"the README's block {name!r} cannot be made from the files under {root}: "
                             f"{type(err).__name__}: {err}") from None
        if body != match.group("body"):
            changed.append(name)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(again, text), changed


def block_names(text: str) -> list[str]:
    """The generated blocks' names, in order; markers that do not pair into blocks vramlab makes, each at most once,
    are refused in one line, as rewriting around them would leave a block stale and unsaid."""
    names: list[str] = []
    start: tuple[str, int] | None = None
    for marker in ANY_CASE_MARKER.finditer(text):  # a marker vramlab cannot read is left out of every check, unsaid
        if not MARKER.fullmatch(marker.group(0)):
            line = text.count("\n", 0, marker.start()) + 1
            raise UsageError(f"readme: line {line} holds {marker.group(0)!r}, a marker in another case; vramlab reads "
                             "<!-- generated: NAME --> and <!-- end generated: NAME --> in lower case: write it so")
    for marker in MARKER.finditer(text):
        name, line = marker.group("name"), text.count("\n", 0, marker.start()) + 1
        if not marker.group("end"):
            if start is not None:
                raise UsageError(f"readme: the block {start[0]!r} (line {start[1]}) has no end marker before the "
                                 f"next block starts (line {line}); add <!-- end generated: {start[0]} --> after it")
            if name not in BLOCKS:
                raise UsageError(f"readme: line {line} starts a block {name!r} vramlab does not make (the blocks are "
                                 f"{', '.join(BLOCKS)}); rename it or remove its markers")
            if name in names:
                raise UsageError(f"readme: the block {name!r} appears twice (again at line {line}); "
                                 "remove one of the two")
            start = (name, line)
        elif start is None or start[0] != name:
            raise UsageError(f"readme: line {line} ends a block {name!r} that no <!-- generated: {name} --> "
                             "opens; add the start marker or remove this one")
        else:
            names.append(name)
            start = None
    if start is not None:
        raise UsageError(f"readme: the block {start[0]!r} (line {start[1]}) has no end marker; add "
                         f"<!-- end generated: {start[0]} --> after its last line")
    return names


def outside_blocks(text: str) -> str:
    """The README's own words: its text without the generated blocks."""
    return BLOCK.sub("", text)
