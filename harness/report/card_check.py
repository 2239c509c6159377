"""`vramlab card-check`: the emulation checked on a real 16 GB card. Every published number was measured on an H200
emulating a 16 GB card (harness/core/card_emulation.py). On a real RTX 4080 or RTX 4060 Ti 16 GB, this measures the
card-check matrix's cells and two ceiling boundaries the emulation published (the answer of a search and the next
probe up, read from its kept probes), each with the settings of its published result, and writes beside each
emulated result what the real card did: reports/card-check/<machine>/comparison.md and .csv, to contribute back.

The comparison is the reproductions' (harness/report/reproduce.py), with memory judged across the two devices,
since that is the question: the status must be the same and the whole-process device peak within
MEMORY_TOLERANCE. `--dry-run` (and a machine without a GPU) says what would run and what it would be compared with.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.core.atomic_files import write_csv_atomic, write_text_atomic
from harness.core.errors import UsageError
from harness.core.made_folders import make_folders
from harness.report.aggregate import checked_result
from harness.report.reproduce import compare, describe_tolerances, reproduction_dir, summary_line, table
from harness.results import read
from harness.results.ceiling import kept_probes, settled
from harness.spec.ceiling import probe_cell, probe_folder
from harness.spec.cells import Cell
from harness.spec.matrix import ceiling_spec, expand

MATRIX = "card-check"
# the ceiling searches whose boundary the check measures again: (matrix, search), each under an RTX 4080's memory
BOUNDARIES = (("ceiling-16gb", "unsloth-offload-rtx4080"), ("claims-context", "hf-fa2-rtx4080"))
# what a "16 GB" card gives torch as its total memory, in GiB: an RTX 4080 15.99, an RTX 4060 Ti 16 GB 15.7
SIXTEEN_GB = (15.0, 16.5)
GIB = 2**30


@dataclass(frozen=True)
class Check:
    """One run of the check: a cell (or a search's cell at a probe's context) and its published result."""

    what: str  # in words
    matrix: str  # whose run-cell runs it
    cell: Cell  # the matrix's cell (a search's cell for a probe)
    context: int | None  # a probe's context; None for a plain cell
    reference: Path

    @property
    def cell_id(self) -> str:
        return (probe_cell(self.cell, self.context) if self.context else self.cell).cell_id


def _published(results_dir: Path, cell: Cell) -> Path:
    """A plain cell's published result: the same settings (the same id) in any matrix's results."""
    found = sorted(p for p in results_dir.glob(f"*/{cell.cell_id}.json") if p.parent.name != MATRIX)
    if not found:
        raise UsageError(f"{MATRIX}'s cell {cell.name} ({cell.cell_id}) has no published result under {results_dir}/ "
                         "to compare with: the check measures only what the emulation measured")
    return found[0]


def plan(results_dir: Path) -> list[Check]:
    checks = [Check(f"{cell.name}: {cell.settings['context']:,} tokens, {cell.settings['steps']} steps", MATRIX,
                    cell, None, _published(results_dir, cell)) for cell in expand(MATRIX)]
    for matrix, name in BOUNDARIES:
        search = next(c for c in expand(matrix) if c.name == name)
        kept = kept_probes(probe_folder(results_dir, search.matrix, search), search)
        answer = settled({context: r["status"] == "ok" for context, r in kept.items()}, ceiling_spec(matrix))
        above = min((c for c in kept if answer is not None and c > answer), default=None)
        if answer is None or above is None:
            raise UsageError(f"the ceiling search {matrix}/{name} has no settled answer with a probe above it among "
                             f"its kept probes under {results_dir}/; the check measures only a published boundary")
        folder = probe_folder(results_dir, search.matrix, search)
        for context, which in ((answer, "its answer"), (above, "one probe past it")):
            checks.append(Check(f"{matrix}/{name} at {context:,} tokens ({which})", matrix, search, context,
                                folder / f"{probe_cell(search, context).cell_id}.json"))
    return checks


def described(checks: list[Check]) -> list[str]:
    """What the check would run, and what each run is compared with."""
    lines = [f"The real-card check runs {len(checks)} measurements, one process each, and compares each with the "
             f"emulated result of the same settings ({describe_tolerances()}; memory judged across the devices):"]
    for check in checks:
        reference = read(check.reference)
        peak = reference.metrics.peak_device_bytes
        lines.append(f"- {check.what}: emulated {reference.status.value}"
                     + (f", peak {peak / GIB:.2f} GiB" if peak else "") + f" ({check.reference})")
    return lines


def this_card() -> tuple[str, float] | None:
    """The CUDA device's name and total memory in GiB, None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    return props.name, props.total_memory / GIB


def sixteen_gb_card() -> str:
    """This machine's card, if it is a 16 GB one; otherwise why the check cannot run here."""
    card = this_card()
    if card is None:
        raise UsageError("card-check: no CUDA GPU here; the check runs on a real 16 GB card (`vramlab card-check "
                         "--dry-run` says what it would run and compare)")
    name, total = card
    if not SIXTEEN_GB[0] <= total <= SIXTEEN_GB[1]:
        raise UsageError(f"card-check: {name} has {total:.2f} GiB, not a 16 GB card ({SIXTEEN_GB[0]:g}-"
                         f"{SIXTEEN_GB[1]:g} GiB); its answers would not check the emulation of one")
    return name


def out_path(results_dir: Path, machine: str, check: Check) -> Path:
    return reproduction_dir(results_dir, MATRIX, machine) / f"{check.cell_id}.json"


def run(checks: list[Check], results_dir: Path, machine: str) -> None:
    """Each check in a process of its own, supervised like any cell (run-cell), into the reproductions folder."""
    for check in checks:
        out = out_path(results_dir, machine, check)
        if out.is_file():
            continue  # measured in an earlier run of the check
        log = results_dir / MATRIX / "logs" / f"{out.stem}.log"
        done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", check.matrix, "--cell",
                               check.cell.cell_id, *(["--context", str(check.context)] if check.context else []),
                               "--out", str(out), "--log", str(log)], check=False)
        if done.returncode != 0:
            raise UsageError(f"card-check stopped: {check.what} was not run (run-cell exited {done.returncode}, "
                             "saying why above); run the check again to go on where it stopped")


def write(checks: list[Check], results_dir: Path, reports_dir: Path, machine: str) -> Path:
    """reports/card-check/<machine>/comparison.md and .csv: each real-card result beside the emulated one."""
    pairs, missing = [], []
    for check in checks:
        mine = out_path(results_dir, machine, check)
        if mine.is_file():
            pairs.append((check, read(check.reference), checked_result(mine, check.cell_id)))
        else:
            missing.append(check.what)
    if missing:
        raise UsageError(f"card-check: {len(missing)} of {len(checks)} measurements have no result on {machine} yet "
                         f"(first: {missing[0]}); run `vramlab card-check` to the end first")
    found = [compare(reference, mine, across_devices=True) for _, reference, mine in pairs]
    frame = table(found).assign(measurement=[c.what for c, _, _ in pairs])
    out = Path(reports_dir) / MATRIX / machine
    make_folders(out)
    write_csv_atomic(out / "comparison.csv", frame)
    env = pairs[0][2].environment  # the real card's
    versions = ", ".join(f"{k} {v}" for k, v in (env.versions.items() if env else []) if k in
                         ("torch", "transformers", "peft", "trl", "bitsandbytes", "unsloth"))
    lines = [f"# The emulated card against a real one: {machine}", "",
             summary_line(found, machine).replace("the published results", "the emulated results"), "",
             f"Real card: {env.gpu if env else 'not recorded'} (driver {env.driver if env else '–'}); {versions}.", "",
             f"Tolerances: {describe_tolerances()}; here the device peak is judged although the devices differ "
             "(the emulated card against the real one is the question).", "",
             frame[["measurement", "published", "here", "device peak", "verdict"]].rename(
                 columns={"published": "emulated", "here": "real card"}).to_markdown(index=False), "",
             f"Ratios: the real card's value over the emulated one. The real card's results: "
             f"`{reproduction_dir(results_dir, MATRIX, machine)}/`. To contribute them, send this folder and those "
             "result files (docs/card-check.md).", ""]
    write_text_atomic(out / "comparison.md", "\n".join(lines))
    return out / "comparison.md"
