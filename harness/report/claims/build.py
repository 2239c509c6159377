"""reports/claims/: each published claim (harness/report/claims/published.yaml) beside what measures it here, read
from the committed results: claims.csv (one row a reading of a claim) and claims.md (the table, then each claim's quote,
source, setting and assumptions). A reading without a result says "not measured yet"; nothing is estimated in its
place (a ceiling's memory-estimate answer is shown beside it, marked as the estimate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from harness.core.atomic_files import write_csv_atomic, write_text_atomic
from harness.core.errors import UsageError
from harness.estimate.ceiling import estimated_ceiling
from harness.report.claims.measured import Measured, measure
from harness.report.claims.model import Claim, Published, Reading, load
from harness.report.claims.verdict import DENSE_BF16, NOT_MEASURED, claimed_mfu, judge, used
from harness.report.kept import keep_measured
from harness.report.stack_versions import versions_line
from harness.report.tables import LATEX_NEEDS, Column, Table
from harness.results.model import CellResult
from harness.results.results_dir_mistakes import missing_results_dir
from harness.results.store import ResultFileError, read
from harness.spec.matrix import ceiling_spec, expand


def _claimed(claim: Claim) -> str:
    number = (f"{claim.low:,.0f}–{claim.high:,.0f}" if isinstance(claim.number, tuple) else f"{claim.low:,.0f}")
    return f"{number} {claim.unit}" + (f" on {claim.gpu}" if claim.gpu else "")


def _measured_by(reading: Reading) -> str:
    what = (f"ceiling search `{reading.ceiling}`" if reading.ceiling
            else ", ".join(f"`{c}`" for c in reading.cells or []))
    return f"`{reading.matrix}`: {what}"


def _estimate(reading: Reading) -> int | None:
    """The memory estimate's answer for a ceiling search (harness/estimate/ceiling.py), a prediction, not a
    measurement."""
    if reading.ceiling is None:
        return None
    cell = next(c for c in expand(reading.matrix) if c.name == reading.ceiling)
    return estimated_ceiling(cell, ceiling_spec(reading.matrix))


def rows(published: Published, results_dir: Path) -> tuple[list[dict[str, Any]], list[Measured]]:
    found, measurements = [], []
    for claim in published.claims:
        for reading in claim.readings:
            measured = measure(reading, results_dir)
            verdict = judge(claim, reading, measured, published.sources[claim.source].year)
            found.append({"claim": claim.id, "source": claim.source, "kind": claim.kind, "claimed": _claimed(claim),
                          "reading": reading.reading, "match": reading.match, "measured_by": _measured_by(reading),
                          "measured": verdict.measured, "verdict": verdict.word, "difference": verdict.difference,
                          "differs": reading.differs or "", "estimate": _estimate(reading)})
            measurements.append(measured)
    return found, measurements


def _measured_again(result: CellResult, results_dir: Path) -> Path | None:
    """A measurement of the same cell under the emulated card, with the same status, among the checks kept in
    results/benchmarks/ (a reproduction, a ceiling's boundary probes measured again): the published result stands
    for it, since it is not replaced where its speed was measured alone and the check's was not."""
    for path in sorted((Path(results_dir) / "benchmarks").rglob(f"{result.cell_id}.json")):
        try:
            again = read(path)
        except (ResultFileError, OSError):
            continue
        emulation = again.budget.card_emulation if again.budget is not None else None
        if emulation is not None and emulation.on and again.status == result.status:
            return path
    return None


def _versions(measurements: list[Measured], results_dir: Path) -> list[str]:
    read_here = [r for m in measurements for r in used(m)]
    envs = [r.environment for r in read_here if r.environment is not None]
    table = pd.DataFrame([{f"version:{k}": v for k, v in env.versions.items()} for env in envs]).drop_duplicates()
    lines = versions_line(table, "the result files' `environment`") if len(table) else []
    before = [r for r in read_here if r.budget is not None and r.environment is not None
              and r.environment.cuda_available and r.budget.card_emulation is None]
    if before:
        again = {r.cell_id: _measured_again(r, results_dir) for r in before}
        checked = [f"`{r.matrix}`/`{r.name}` (`{path.relative_to(results_dir).parent.parent}`)"
                   for r in before if (path := again[r.cell_id]) is not None]
        lines += [f"{len(before)} of the {len(read_here)} results read here ran before torch answered as the emulated "
                  "card (`mem_get_info` and the device's total memory) and before the paged optimizer's cap was "
                  "corrected"
                  + (f"; measured again under both, with the same status: {', '.join(checked)}" if checked else "")
                  + ("" if len(checked) == len(before) else
                     f"; {'the others' if checked else 'their cells'} are to be measured again")
                  + " (docs/gpu.md, \"The emulated card\").", ""]
    return lines


def _coverage(published: Published, table: pd.DataFrame) -> str:
    """How many readings are measured, and the matrices whose runs would measure the others."""
    readings = [r for c in published.claims for r in c.readings]  # in the table's order
    pending = sorted({r.matrix for r, verdict in zip(readings, table["verdict"], strict=True)
                      if verdict == NOT_MEASURED})
    if not pending:
        return f"All {len(readings)} readings measured."
    return (f"{len(readings) - sum(table['verdict'] == NOT_MEASURED)} of {len(readings)} readings measured; the others "
            f"say \"{NOT_MEASURED}\" until their cells run on the GPU machine ("
            + " and ".join(f"`snakemake --config matrix={m}`" for m in pending) + ").")


def markdown(published: Published, table: pd.DataFrame, measurements: list[Measured], results_dir: Path) -> str:
    lines = ["# Published claims, measured", "",
             "Each claim as its source states it, beside the cell or ceiling search that measures it here under the "
             "same setting (`harness/report/claims/published.yaml`; the matrices `ablations/claims.yaml` and "
             "`ablations/claims-context.yaml`), read from the committed results by `vramlab claims`. Where the source "
             "does not say how to read \"GB\", each reading is measured. A reading marked *approximate* is a "
             "committed result whose setting differs (said under the claim): its verdict is only indicative. "
             "Memory is the whole process's device memory, sampled through NVML, on a larger GPU emulating the "
             "budget (docs/gpu.md); random weights with the published shapes.", "",
             _coverage(published, table), "", *_versions(measurements, results_dir)]
    shown = pd.DataFrame({"claim": table["claim"], "claimed": table["claimed"], "read as": table["reading"],
                          "measured by": table["measured_by"] + table["match"].map(
                              {"exact": "", "approximate": " (approximate)"}),
                          "measured": table["measured"], "verdict": "**" + table["verdict"] + "**",
                          "difference": table["difference"]})
    lines += [shown.to_markdown(index=False), ""]
    for claim in published.claims:
        source = published.sources[claim.source]
        mine = table[table["claim"] == claim.id]
        ran = [m for m, (_, row) in zip(measurements, table.iterrows(), strict=True) if row["claim"] == claim.id]
        lines += [f"## `{claim.id}`", "", f"> {claim.quote}", "",
                  f"- Source: {source.title}, {source.where}" + (f" ({source.note})" if source.note else "") + ".",
                  f"- Setting as stated: {claim.setting}.", f"- The cells assume: {claim.assumes}.",
                  *_ran_with(ran)]
        for _, row in mine[mine["differs"] != ""].iterrows():
            lines.append(f"- Approximate reading {row['measured_by']}: {row['differs']}.")
        for _, row in mine[mine["estimate"].notna()].iterrows():
            lines.append(f"- The memory estimate's answer for {row['measured_by']} ({row['reading']}): "
                         f"{int(row['estimate']):,} tokens (`vramlab estimate`: a prediction that starts the search, "
                         "not a measurement).")
        if claim.kind == "throughput":
            lines += _throughput_note(claim)
        lines.append("")
    return "\n".join(lines)


# the libraries whose version decides what a memory or speed claim measures, in this order
DECIDING = ("unsloth", "trl", "transformers", "peft", "bitsandbytes", "liger-kernel", "torch")
LOSS_PATHS = {"trl-chunked": "TRL's chunked LM-head loss; on the Unsloth stack unsloth_zoo's fused log-prob kernel "
                             "stands in its place", "unsloth-fused-ce": "Unsloth's fused cross-entropy",
              "liger-flce": "Liger's fused linear cross-entropy", "full-logits": "the whole logits"}


def _ran_with(measurements: list[Measured]) -> list[str]:
    """The loss path and the library versions the measuring cells ran with: part of what a claim is tested
    under (a 2024 claim measured with 2026 software tests the software as much as the claim)."""
    results = [r for m in measurements for r in used(m)]
    if not results:
        return []
    paths = list(dict.fromkeys(str(r.config.get("loss_path")) for r in results if r.config.get("loss_path")))
    versions = {name: sorted({v for r in results if r.environment is not None
                              for v in [r.environment.versions.get(name)] if v}) for name in DECIDING}
    said = ", ".join(f"{name} {' / '.join(v)}" for name, v in versions.items() if v)
    return [f"- The cells ran with: loss path {', '.join(f'`{p}`: {LOSS_PATHS.get(p, p)}' for p in paths)}; "
            f"with {said}."]


def latex_table(table: pd.DataFrame) -> Table:
    """The claims against their measurements, for a paper (claims.tex)."""
    columns = [Column("claim", numeric=False), Column("claimed", numeric=False), Column("read as", numeric=False),
               Column("measured", numeric=False), Column("verdict", numeric=False)]
    rows = [[str(r["claim"]), str(r["claimed"]), str(r["reading"]) + (" (approximate)" if r["match"] == "approximate"
                                                                     else ""),
             str(r["measured"]), str(r["verdict"])] for _, r in table.iterrows()]
    return Table("claims", "Published claims against what measures them here", columns, rows,
                 "Each claim as its source states it, each way of reading it, the measurement (a ceiling: the longest "
                 "context that fits, what it left of the budget and the host memory it used) and the verdict; "
                 "what each reading measured by and the sources: claims.md.")


def _throughput_note(claim: Claim) -> list[str]:
    reading = claim.readings[0]
    settings = next(c for c in expand(reading.matrix) if c.name == reading.cells[0]).settings
    mfu = claimed_mfu(claim, settings)
    rates = "; ".join(f"{gpu}: {rate / 1e12:,.1f} TFLOPS ({why})" for gpu, (rate, why) in DENSE_BF16.items())
    lines = [f"- Dense BF16 rates: {rates}."]
    if mfu:
        lines.append(f"- The claim as MFU, at the measuring cell's model FLOPs per token: {mfu[0]:.1%}–{mfu[1]:.1%}.")
    return lines


def write(results_dir: Path, reports_dir: Path, published: Published | None = None) -> list[Path]:
    published = published or load()
    missing = missing_results_dir(Path(results_dir), str(results_dir), "the claims' cells")
    if missing:
        raise UsageError(missing)
    found, measurements = rows(published, results_dir)
    table = pd.DataFrame(found)
    if (table["verdict"] == NOT_MEASURED).all():
        matrices = sorted({r.matrix for c in published.claims for r in c.readings})
        raise UsageError(f"{results_dir} holds no result that a claim reads (of the matrices {', '.join(matrices)}), "
                         "so the report would measure nothing; give the results folder that holds them")
    folder = reports_dir / "claims"
    keep_measured(folder / "claims.csv", table, ["claim", "reading", "measured_by"], "verdict", NOT_MEASURED,
                  results_dir, "readings")
    write_csv_atomic(folder / "claims.csv", table)
    write_text_atomic(folder / "claims.md", markdown(published, table, measurements, results_dir))
    write_text_atomic(folder / "claims.tex", f"% generated by vramlab from claims.csv; {LATEX_NEEDS}\n\n"
                      + latex_table(table).latex("claims"))
    return [folder / "claims.csv", folder / "claims.md", folder / "claims.tex"]
