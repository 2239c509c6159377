"""The README's generated blocks: each lies between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->`
and is made from the committed reports and results alone, so that no number in them is copied by hand.
`vramlab readme` rewrites them; `vramlab readme --check` names the blocks that differ from what the files give
(tests/test_readme.py holds the README to them)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from harness.core.errors import UsageError
from harness.report.reproduce import describe_tolerances
from harness.results.store import result_path
from harness.spec.matrix import ceiling_spec, expand, shipped_matrices
from harness.spec.matrix_list import entry

GIB = 2**30
HEADLINE = "seed-16gb"
CEILING = "ceiling-16gb"
BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)",
                   re.DOTALL)


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


BRIEF_WORDS = 18  # a matrix's description in the README; `vramlab matrices` and the matrix file give it whole


def brief(text: str, words: int = BRIEF_WORDS) -> str:
    """The text's first `words` words, an ellipsis where it was cut."""
    kept = text.split()
    return " ".join(kept[:words]) + (" …" if len(kept) > words else "")


def matrices(root: Path) -> str:
    rows = []
    for name in shipped_matrices():
        found = entry(name)
        cells = expand(name, check_model=False)
        if ceiling_spec(name) is not None:  # its results are the probes of each cell's search
            probes = [len(list((root / "results" / name / "ceiling" / c.cell_id).glob("*.json"))) for c in cells]
            published = f"{sum(n > 0 for n in probes)} searches, {sum(probes)} probes"
        else:
            published = f"{sum(result_path(root / 'results', c.matrix, c.cell_id).is_file() for c in cells)} of " \
                        f"{found.cells}"
        shown = next((f for f in ("report.md", "ceiling.md") if (root / "reports" / name / f).is_file()), None)
        report = f"[{shown}](reports/{name}/{shown})" if shown else "–"
        # the models are named by each description; `vramlab matrices` gives the sources and whether they are here
        rows.append([f"`{name}`", str(found.cells), published, found.device(), brief(found.description), report])
    return _table(["matrix", "cells", "published results", "runs on", "what it measures", "report"], rows,
                  right={1}) + "\n"


def reproduction(root: Path) -> str:
    return f"What the comparison judges: {describe_tolerances()}.\n"


BLOCKS: dict[str, Callable[[Path], str]] = {"headline": headline, "ceiling": ceiling, "claims": claims,
                                            "matrices": matrices, "reproduction": reproduction}


def rewritten(text: str, root: Path) -> tuple[str, list[str]]:
    """The README's text with every generated block made again from the files under root, and the names of the
    blocks that changed. A block of a name no generator has is left as it is, and named."""
    changed: list[str] = []

    def again(match: re.Match) -> str:
        name = match.group("name")
        if name not in BLOCKS:
            changed.append(f"{name} (no such block: the blocks are {', '.join(BLOCKS)})")
            return match.group(0)
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
    return [m.group("name") for m in BLOCK.finditer(text)]


def outside_blocks(text: str) -> str:
    """The README's own words: its text without the generated blocks."""
    return BLOCK.sub("", text)
