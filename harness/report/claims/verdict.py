"""A claim's reading against its measurement: one verdict word and the difference, by kind of claim:
max_context, peak_memory, fits and throughput (compared as model FLOPs utilization); a reading whose setting differs
from the claim's is only "indicative". How each is judged: docs/claims.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from harness import flops
from harness.report.claims.measured import MARGIN_BYTES, CeilingAnswer, Measured
from harness.report.claims.model import Claim, Reading
from harness.results import CellResult, Status
from harness.stack.models.presets import preset

GIB = 2**30
NOT_MEASURED = "not measured yet"
NOT_TESTABLE = "not testable here"
# dense BF16 tensor rate (FP32 accumulate) from each GPU's datasheet: the denominator of a throughput claim's MFU,
# as result files name the GPU (environment.gpu); a GPU not listed is compared on the harness's measured rate
DENSE_BF16 = {
    "NVIDIA GeForce RTX 4090": (165.2e12, "NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090: peak "
                                          "BF16 Tensor TFLOPS with FP32 accumulate 165.2 (330.4 with sparsity)"),
    "NVIDIA H200": (989.4e12, "NVIDIA H200 datasheet (SXM): BF16 Tensor Core 1,979 TFLOPS with sparsity, half of it "
                              "dense"),
}


@dataclass(frozen=True)
class Verdict:
    word: str
    measured: str  # the measurement in the claim's terms
    difference: str


def judge(claim: Claim, reading: Reading, measured: Measured, source_year: int | None = None) -> Verdict:
    """source_year: when the claim was made; a memory verdict measured with the software of a later year says so,
    since it then tests the claim's setting with today's libraries, not the claim as it was made."""
    if not measured.complete:
        missing = ", ".join(measured.missing)
        return Verdict(NOT_MEASURED, "–", f"no result yet for {missing}" if missing else "")
    verdict = {"max_context": _max_context, "peak_memory": _peak_memory, "fits": _fits,
               "throughput": _throughput}[claim.kind](claim, reading, measured)
    year = software_year(measured)
    if verdict.word not in (NOT_MEASURED, NOT_TESTABLE) and source_year and year and year > source_year:
        verdict = Verdict(f"{verdict.word}, with {year} software", verdict.measured, verdict.difference)
    if reading.match == "approximate":
        return Verdict(f"indicative: {verdict.word}", verdict.measured, verdict.difference)
    return verdict


def used(measured: Measured) -> list[CellResult]:
    """The result files a reading's measurement rests on."""
    boundary = [measured.ceiling.result] if measured.ceiling is not None and measured.ceiling.result else []
    return [*measured.results, *boundary]


def software_year(measured: Measured) -> int | None:
    """The year of the software that measured (Unsloth's versions are dated: 2026.10.9), where it says one."""
    # a library that was not installed is recorded as null
    years = [int(v.split(".")[0]) for r in used(measured) if r.environment is not None
             for v in [r.environment.versions.get("unsloth") or ""] if v[:4].isdigit() and len(v.split(".")[0]) == 4]
    return max(years, default=None)


def _room(result: CellResult | None) -> str:
    """A ceiling's cost beside it: what the boundary probe left of the budget, and the host memory it used."""
    if result is None or result.budget is None or result.metrics.peak_device_bytes is None:
        return ""
    left = result.budget.limit_bytes - result.metrics.peak_device_bytes
    said = f"; peak {result.metrics.peak_device_bytes / GIB:.2f} GiB, {left / 2**20:,.0f} MiB under the " \
           f"{result.budget.limit_bytes / GIB:.2f} GiB budget"
    unbacked, pinned = result.metrics.peak_host_unmapped_bytes, result.metrics.peak_host_pinned_bytes
    if unbacked is not None:
        said += f"; host memory {unbacked / GIB:.1f} GiB not file-backed" + (
            f", {pinned / GIB:.1f} GiB of it pinned" if pinned is not None else "")
    return said


def _margin(answer: CeilingAnswer) -> str:
    if answer.with_margin is None:
        return f"; none of the probes kept left {MARGIN_BYTES / 2**20:,.0f} MiB"
    return f"; {answer.with_margin:,} tokens with {MARGIN_BYTES / 2**20:,.0f} MiB to spare (the longest probe kept)"


def _tokens(delta: float, base: float) -> str:
    share = delta / base
    return f"{delta:+,.0f} tokens ({share:+.1%})" if abs(share) < 0.1 else f"{delta:+,.0f} tokens ({share:+.0%})"


def _max_context(claim: Claim, reading: Reading, measured: Measured) -> Verdict:
    answer = measured.ceiling
    if answer is None:  # the claims' model reads a max_context claim only by a ceiling search
        raise ValueError(f"{claim.id}: a max_context claim is measured by a ceiling search, not by cells")
    if answer.tokens is None:
        return Verdict("less than claimed", "below the search's range", "no context in the range fits")
    shown = f"{'at least ' if answer.at_top else ''}{answer.tokens:,} tokens (to within {answer.resolution:,})" \
        + _room(answer.result) + _margin(answer)
    delta = answer.tokens - claim.low
    if abs(delta) <= answer.resolution and not (answer.at_top and delta > 0):
        word = "agrees"
    else:
        word = "more than claimed" if delta > 0 else "less than claimed"
    return Verdict(word, shown, _tokens(delta, claim.low))


def _gb(reading: Reading) -> float:
    return GIB if reading.gb == "GiB" else 1e9


def _peak(result: CellResult) -> tuple[float, bool]:
    """The whole-process device peak, and whether it is a lower bound (the cell ran out of memory)."""
    return float(result.metrics.peak_device_bytes or 0), result.status is not Status.ok


def _peak_memory(claim: Claim, reading: Reading, measured: Measured) -> Verdict:
    unit = _gb(reading)
    low, high = claim.low * unit, claim.high * unit
    peaks = [_peak(r) for r in measured.results]
    least, most = min(p for p, _ in peaks), max(p for p, _ in peaks)
    bound = any(b for _, b in peaks)
    name = "GiB" if reading.gb == "GiB" else "GB"
    shown = f"{least / unit:.2f}–{'≥ ' if bound else ''}{most / unit:.2f} {name} over {len(peaks)} cells"
    if most <= high and least >= low and not bound:
        word = "within"
        gap = f"{(least - low) / unit:.2f} {name} above the low end, {(high - most) / unit:.2f} {name} under the high"
    elif most < low and not bound:
        word, gap = "below", f"{(most - low) / unit:+.2f} {name} (the highest cell against the low end)"
    elif least > high:
        word, gap = "above", f"{(least - high) / unit:+.2f} {name} (the lowest cell against the high end)"
    else:
        outside = [r.name for r, (p, b) in zip(measured.results, peaks, strict=True) if p < low or p > high or b]
        word, gap = "partly outside", f"outside {claim.low:g}–{claim.high:g} {name}: {', '.join(outside)}"
    return Verdict(word, shown, gap)


def _fits(claim: Claim, reading: Reading, measured: Measured) -> Verdict:
    if measured.ceiling is not None:
        answer = measured.ceiling
        if answer.tokens is None:
            return Verdict("does not hold", "below the search's range", "nothing in the range fits")
        word = "holds" if answer.tokens >= claim.low else "does not hold"
        return Verdict(word, f"{answer.tokens:,} tokens fit (the longest, to within {answer.resolution:,})"
                       + _room(answer.result) + _margin(answer),
                       f"{answer.tokens - claim.low:+,.0f} tokens beyond the claim")
    result = measured.results[0]
    peak = (result.metrics.peak_device_bytes or 0) / GIB
    limit = result.budget.limit_bytes / GIB if result.budget else None
    context = result.config.get("context")
    of = f" of the {limit:.2f} GiB budget" if limit else ""
    if result.status is Status.ok:
        return Verdict("holds" if context >= claim.low else "does not hold",
                       f"{context:,} tokens trained, peak {peak:.2f} GiB{of}",
                       f"{limit - peak:.2f} GiB left" if limit else "")
    if result.status is Status.oom:
        return Verdict("does not hold", f"{context:,} tokens ran out of memory at ≥ {peak:.2f} GiB{of}",
                       result.reason or "")
    return Verdict(NOT_MEASURED, f"the cell ended '{result.status.value}'", result.reason or "")


def flops_per_token(settings: dict[str, Any]) -> float:
    """Model FLOPs per trained token of a cell's setting (harness/flops.py), from its architecture preset."""
    config = SimpleNamespace(**preset(settings["model"].removeprefix("arch:")))
    return flops.flops_per_token(config, settings["context"], lora=True)


def claimed_mfu(claim: Claim, settings: dict[str, Any]) -> tuple[float, float] | None:
    rate = DENSE_BF16.get(claim.gpu or "")
    if rate is None:
        return None
    per_token = flops_per_token(settings)
    return claim.low * per_token / rate[0], claim.high * per_token / rate[0]


def _throughput(claim: Claim, reading: Reading, measured: Measured) -> Verdict:
    result = measured.results[0]
    speed = result.metrics.tokens_per_second
    if result.status is not Status.ok or speed is None or not result.metrics.throughput_measured:
        return Verdict(NOT_MEASURED, f"the cell ended '{result.status.value}' or its speed is not a measurement",
                       result.reason or "")
    gpu = result.environment.gpu if result.environment else None
    claimed = claimed_mfu(claim, result.config)
    # MFU as every report defines it (harness/report/methods.py): against the device's measured matmul rate
    mfu = result.metrics.mfu
    if claimed is None:
        return Verdict(NOT_MEASURED, f"{speed:,.0f} tokens/s", f"no dense BF16 rate known for {claim.gpu}")
    if mfu is None:
        return Verdict(NOT_MEASURED, f"{speed:,.0f} tokens/s", "the result has no MFU (no measured matmul rate)")
    low, high = claimed
    shown = f"{speed:,.0f} tokens/s on {gpu}: MFU {mfu:.1%} (against its measured matmul rate)"
    claimed_text = (f"claimed {claim.low:,.0f}–{claim.high:,.0f} tokens/s on {claim.gpu}: MFU {low:.1%}–{high:.1%} "
                    "against its datasheet rate")
    if gpu != claim.gpu:  # a speed on another GPU tests nothing the claim says: utilisation does not carry over
        return Verdict(NOT_TESTABLE, shown, f"the claim is about {claim.gpu}, measured here on "
                       f"{gpu or 'another device'}; for scale only: {claimed_text}")
    if low <= mfu <= high:
        return Verdict("within", shown, claimed_text)
    word = "above" if mfu > high else "below"
    nearest = high if mfu > high else low
    return Verdict(word, shown, f"{(mfu - nearest) * 100:+.1f} MFU points; {claimed_text}")
