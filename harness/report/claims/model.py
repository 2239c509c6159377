"""The published claims as typed data (harness/report/claims/published.yaml), checked as they are read: a claim that
names no source, a reading that names neither cells nor a ceiling, or a range where one number is meant, stops the
report before anything is compared."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

PUBLISHED = Path(__file__).with_name("published.yaml")

Kind = Literal["max_context", "peak_memory", "fits", "throughput"]
UNITS: dict[str, str] = {"max_context": "tokens", "peak_memory": "GB", "fits": "tokens", "throughput": "tokens/s"}
RANGES = ("peak_memory", "throughput")  # the kinds a source states as a range


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(Strict):
    title: str
    where: str
    note: str | None = None
    year: int | None = None  # when the source was published: a verdict measured with later software says so


class Reading(Strict):
    """One way of reading a claim (how its "GB" are read, which card), and what measures it."""

    reading: str
    matrix: str
    cells: list[str] | None = None
    ceiling: str | None = None
    match: Literal["exact", "approximate"]
    differs: str | None = None  # where the measuring cell's setting is not the claim's
    gb: Literal["GiB", "decimal"] | None = None  # how a peak_memory claim's GB are read

    @model_validator(mode="after")
    def _one_measure(self) -> Reading:
        if (self.cells is None) == (self.ceiling is None):
            raise ValueError(f"{self.reading!r}: name either cells or a ceiling")
        if self.match == "approximate" and not self.differs:
            raise ValueError(f"{self.reading!r}: an approximate reading says what `differs`")
        return self


class Claim(Strict):
    id: str = Field(pattern=r"^[a-z0-9-]+$")
    source: str
    quote: str
    setting: str
    assumes: str
    kind: Kind
    number: float | tuple[float, float]
    unit: str
    gpu: str | None = None  # the GPU a throughput claim was made on
    readings: list[Reading] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Claim:
        if self.unit != UNITS[self.kind]:
            raise ValueError(f"{self.id}: a {self.kind} claim is in {UNITS[self.kind]}, not {self.unit}")
        if isinstance(self.number, tuple) != (self.kind in RANGES):
            raise ValueError(f"{self.id}: a {self.kind} claim has " + ("a [low, high] range" if self.kind in RANGES
                                                                       else "one number"))
        if self.kind == "throughput" and not self.gpu:
            raise ValueError(f"{self.id}: a throughput claim names the GPU it was made on")
        if self.kind == "max_context" and any(r.ceiling is None for r in self.readings):
            raise ValueError(f"{self.id}: a max_context claim is read by a ceiling search (ceiling:), not by cells")
        if self.kind == "peak_memory" and any(r.gb is None for r in self.readings):
            raise ValueError(f"{self.id}: each reading of a memory claim says how its GB are read (gb: GiB|decimal)")
        return self

    @property
    def low(self) -> float:
        return self.number[0] if isinstance(self.number, tuple) else self.number

    @property
    def high(self) -> float:
        return self.number[1] if isinstance(self.number, tuple) else self.number


class Published(Strict):
    sources: dict[str, Source]
    claims: list[Claim]

    @model_validator(mode="after")
    def _known_sources(self) -> Published:
        for claim in self.claims:
            if claim.source not in self.sources:
                raise ValueError(f"{claim.id}: no source {claim.source!r} (known: {', '.join(self.sources)})")
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError("two claims share an id")
        return self


def load(path: Path = PUBLISHED) -> Published:
    return Published.model_validate(yaml.safe_load(Path(path).read_text(encoding="utf-8")))
