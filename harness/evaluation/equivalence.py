"""Techniques that should not change the numbers, each with the level it must agree with, and the tolerances
a cell is held to against its reference cell (the same settings at the reference level, same seed).

Exact by design means the same mathematics, not the same bits: recomputation (checkpointing), paging an
optimizer's state to the host, another attention kernel or fused kernels reorder floating-point sums, so a
loss curve or a score may move slightly. What is flagged is a move larger than that.
"""

from __future__ import annotations

from dataclasses import dataclass

# (setting, level) -> the reference level of the same setting
EXACT_BY_DESIGN: dict[tuple[str, str], str] = {
    ("checkpointing", "on"): "off",
    ("checkpointing", "offload"): "off",
    ("attention", "flash_attention_2"): "sdpa",
    ("kernels", "liger"): "none",
    ("kernels", "unsloth"): "none",
    ("optimizer", "paged_adamw_8bit"): "adamw_8bit",
}

LOSS_RELATIVE_TOLERANCE = 0.02  # largest step-by-step relative difference of the training loss
SCORE_SIGMAS = 2.0  # a score may differ by this many combined standard errors ...
SCORE_FLOOR = 0.01  # ... or by this much absolutely, whichever is larger


@dataclass(frozen=True)
class Verdict:
    cell: str
    reference: str
    setting: str
    level: str
    loss_max_relative: float | None
    score_drifts: tuple[str, ...]

    @property
    def drift(self) -> bool:
        return bool(self.score_drifts) or (self.loss_max_relative is not None
                                            and self.loss_max_relative > LOSS_RELATIVE_TOLERANCE)


def describe_tolerances() -> str:
    return (f"training loss within {LOSS_RELATIVE_TOLERANCE:.0%} at every step, and every score within "
            f"{SCORE_SIGMAS:g} combined standard errors or {SCORE_FLOOR:g}, whichever is larger")


def score_drifts(value: float, stderr: float | None, ref: float, ref_stderr: float | None) -> bool:
    combined = ((stderr or 0.0) ** 2 + (ref_stderr or 0.0) ** 2) ** 0.5
    return abs(value - ref) > max(SCORE_SIGMAS * combined, SCORE_FLOOR)
