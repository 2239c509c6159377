"""Reproduction runs: the committed results are the published reference; a reproduction measures every cell
of a matrix again on this machine, into results/<matrix>/reproductions/<machine>/ (never over the
reference, and not committed), and compares each cell with the reference against declared tolerances.

What is judged depends on what is the same: the status always; the training loss only on the same software
(torch, transformers, peft, trl at the same versions), since kernels and defaults change between releases;
memory only on the same device model; throughput is never judged, only reported as a ratio, since it is a
property of the machine.
"""

from __future__ import annotations

import re
import socket
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.core.atomic_files import write_csv_atomic, write_text_atomic
from harness.core.errors import UsageError
from harness.core.made_folders import make_folders
from harness.report.aggregate import checked_result, load_results
from harness.results import CellResult

LOSS_TOLERANCE = 0.02  # relative difference of the final training loss, same software
MEMORY_TOLERANCE = 0.05  # relative difference of the whole-process device peak, same GPU model
# On a CPU the "device" peak is the process's resident set (ru_maxrss), which moves more from run to run: five
# fresh-clone runs of the smoke matrix on a shared 2-core machine gave x0.985 to x1.086 of the published peaks, a
# cell's own peaks up to 6.3% apart (docs/reproducing.md, "The CPU memory tolerance")
CPU_MEMORY_TOLERANCE = 0.10
SOFTWARE = ("torch", "transformers", "peft", "trl")


# what machine_label() makes: a folder name, never a path; \Z, as $ would match before a trailing newline
MACHINE_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*\Z")


def machine_label() -> str:
    """The folder name of this machine's reproductions: its host name, made safe for a path."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", socket.gethostname()).strip("-") or "this-machine"


def reproduction_dir(results_dir: Path, matrix: str, machine: str) -> Path:
    return Path(results_dir) / matrix / "reproductions" / machine


def describe_tolerances() -> str:
    return (f"same status; final training loss within {LOSS_TOLERANCE:.0%} where the software ({', '.join(SOFTWARE)}) "
            f"is the same; device memory peak within {MEMORY_TOLERANCE:.0%} on the same GPU model, the process's "
            f"resident peak within {CPU_MEMORY_TOLERANCE:.0%} on the same CPU model; throughput reported as a ratio, "
            "never judged")


@dataclass
class Comparison:
    name: str
    reference_status: str
    status: str
    memory_ratio: float | None = None
    throughput_ratio: float | None = None
    loss_difference: float | None = None
    differences: list[str] = field(default_factory=list)
    not_judged: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not self.differences


def _ratio(mine: float | None, reference: float | None) -> float | None:
    return mine / reference if mine and reference else None


def _device(result: CellResult) -> str | None:
    env = result.environment
    return env.machine if env else None


def compare(reference: CellResult, mine: CellResult, across_devices: bool = False) -> Comparison:
    """across_devices: memory judged even where the devices differ (the real-card check: an emulated card against
    the real one is its question)."""
    out = Comparison(reference.name, reference.status.value, mine.status.value)
    if reference.status != mine.status:
        out.differences.append(f"status {mine.status.value}, published {reference.status.value}")
    out.memory_ratio = _ratio(mine.metrics.peak_device_bytes, reference.metrics.peak_device_bytes)
    out.throughput_ratio = _ratio(mine.metrics.tokens_per_second, reference.metrics.tokens_per_second)
    tolerance = MEMORY_TOLERANCE if reference.environment and reference.environment.gpu else CPU_MEMORY_TOLERANCE
    if _device(reference) != _device(mine) and not across_devices:
        out.not_judged.append(f"memory (published on {_device(reference)})")
    elif out.memory_ratio is not None and abs(out.memory_ratio - 1) > tolerance:
        out.differences.append(f"device peak ×{out.memory_ratio:.3f}")
    losses = [[x for x in r.metrics.loss if x is not None] for r in (reference, mine)]
    if losses[0] and losses[1]:
        out.loss_difference = (losses[1][-1] - losses[0][-1]) / abs(losses[0][-1])
        versions = [{k: (r.environment.versions.get(k) if r.environment else None) for k in SOFTWARE}
                    for r in (reference, mine)]
        if versions[0] != versions[1]:
            changed = [f"{k} {versions[0][k]}→{versions[1][k]}" for k in SOFTWARE if versions[0][k] != versions[1][k]]
            out.not_judged.append("loss (other software: " + ", ".join(changed) + ")")
        elif abs(out.loss_difference) > LOSS_TOLERANCE:
            out.differences.append(f"final loss {out.loss_difference:+.1%}")
    return out


def comparisons(pairs: list[tuple[CellResult, CellResult]]) -> list[Comparison]:
    return [compare(reference, mine) for reference, mine in pairs]


def summary_line(found: list[Comparison], machine: str) -> str:
    agree = sum(c.agrees for c in found)
    ratios = [c.throughput_ratio for c in found if c.throughput_ratio]
    speed = f"; throughput ×{statistics.median(ratios):.2f} the published (median)" if ratios else ""
    not_judged = sorted({n.split(" (")[0] for c in found for n in c.not_judged})
    judged = f" ({', '.join(not_judged)} not judged: see below)" if not_judged else ""
    verdict = "agrees with" if agree == len(found) else "differs from"
    return (f"Reproduction on {machine} {verdict} the published results: {agree} of {len(found)} cells within "
            f"the tolerances{judged}{speed}.")


def table(found: list[Comparison]) -> pd.DataFrame:
    def ratio(value: float | None) -> str:
        return f"×{value:.3f}" if value else "–"

    return pd.DataFrame([{
        "cell": c.name, "published": c.reference_status, "here": c.status,
        "device peak": ratio(c.memory_ratio), "tokens/s": ratio(c.throughput_ratio),
        "final loss": f"{c.loss_difference:+.2%}" if c.loss_difference is not None else "–",
        "verdict": "agrees" if c.agrees else "differs: " + "; ".join(c.differences),
        "not judged": "; ".join(c.not_judged) or "–"} for c in found])


def write_comparison(matrix: str, results_dir: Path, reports_dir: Path, machine: str) -> Path:
    """reports/<matrix>/reproductions/<machine>/comparison.md (and .csv), from the result files only."""
    pairs, missing, published = [], [], 0
    for cell, reference in load_results(matrix, results_dir, partial=True):
        published += reference is not None
        mine = reproduction_dir(results_dir, cell.matrix, machine) / f"{cell.cell_id}.json"
        if reference is not None and mine.is_file():
            again = checked_result(mine, cell.cell_id)  # its own cell's, as aggregate reads
            if again.model_dump(exclude={"name"}) == reference.model_dump(exclude={"name"}):
                raise UsageError(f"{mine} is the published result itself (the same file to the byte of every field), "
                                 "not a measurement made again; delete it and reproduce the cell")
            pairs.append((reference, again))
        elif reference is not None:
            missing.append(cell)
    if pairs and missing:  # a comparison of some cells would read as the reproduction's verdict, and end the run
        raise UsageError(f"{len(missing)} of the {len(pairs) + len(missing)} published cells of "
                         f"{pairs[0][0].matrix} have no reproduction on {machine} yet (first: {missing[0].name}); "
                         "run the reproduction to the end first (`snakemake --cores 1`, or with --config matrix=NAME "
                         "reproduce=true), then compare")
    name = Path(matrix).stem
    if not published:  # a reproduction would have nothing to be compared with
        raise UsageError(f"{name} has no published results in {Path(results_dir) / name}/, so no reproduction of it "
                         f"can be compared; its own run (snakemake --cores 1 --config matrix={name}) makes results "
                         "to report, not to compare")
    if not pairs:
        raise UsageError(f"no reproduction of {name} on {machine} to compare: "
                         f"{reproduction_dir(results_dir, name, machine)}/ holds no result of a published cell; run "
                         "`snakemake --config matrix=NAME reproduce=true` first (or name another --machine)")
    found = comparisons(pairs)
    out = Path(reports_dir) / pairs[0][0].matrix / "reproductions" / machine if pairs else \
        Path(reports_dir) / Path(matrix).stem / "reproductions" / machine
    make_folders(out)
    frame = table(found)
    write_csv_atomic(out / "comparison.csv", frame)
    lines = [summary_line(found, machine), "", f"Tolerances: {describe_tolerances()}.", "",
             frame.to_markdown(index=False) if len(frame) else "No cell has both a published and a reproduced result.",
             "", f"Ratios are this machine's value over the published one; the results of this run are in "
                 f"`results/{pairs[0][0].matrix if pairs else matrix}/reproductions/{machine}/`.", ""]
    write_text_atomic(out / "comparison.md", "\n".join(lines))
    return out / "comparison.md"
