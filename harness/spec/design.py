"""The `report:` section of a matrix file: what the report's charts and tables compare, resolved against the
expanded cells. Why it is so: docs/matrix-files.md."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.core.atomic_files import write_text_atomic
from harness.core.suggest import did_you_mean
from harness.spec.cells import Cell
from harness.spec.chart_widths import chart_files
from harness.spec.groups import describe, differences, group_name
from harness.spec.settings import SETTINGS

KEYS = ("baseline", "x", "lines")
SWEEP_MIN_POINTS = 3
LOSS_MIN_STEPS = 20
DEFAULT_X = "context"
UNITS = {"context": "tokens", "document_words": "words"}


class ReportSpecError(ValueError):
    """A problem in the `report:` section; the message says where and how to fix it."""


@dataclass(frozen=True)
class SweepLine:
    label: str  # from the `lines` settings: "kernels liger"
    change: str  # what the line's cells differ in from the baseline, x aside: the colour key shared by all charts
    cells: tuple[str, ...]  # groups, in increasing x


@dataclass(frozen=True)
class ReportDesign:
    baseline: str
    x: str | None
    lines: tuple[str, ...]
    sweep: tuple[SweepLine, ...]
    changes: dict[str, str]  # every group in matrix order -> what differs from the baseline, x and seed aside
    deltas: tuple[str, ...]  # the groups held against the baseline: those at the baseline's x
    throughput_measured: bool
    quality: bool
    recall_by_age: bool = False  # the evaluation scores workload_recall, whose items carry the facts' ages
    steps: int = 0  # the most optimizer steps any cell takes (0: not recorded, a design from before)
    random_weights: bool = False  # every cell trains a model of random weights
    charts: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        long_sweep = any(len(line.cells) >= SWEEP_MIN_POINTS for line in self.sweep)
        loss = self.steps >= LOSS_MIN_STEPS and not self.random_weights
        charts = ["overview", *(["sweep"] if long_sweep else []), *(["deltas"] if self.deltas else []),
                  *(["tradeoff"] if self.throughput_measured else []), *(["loss"] if loss else []),
                  *(["quality_vs_memory", "quality_by_cell"] if self.quality else []),
                  *(["recall_by_age"] if self.recall_by_age else [])]
        object.__setattr__(self, "charts", tuple(charts))

    def files(self) -> list[str]:
        """Every chart the report draws, at each width in its formats."""
        return [file for chart in self.charts for file in chart_files(chart)]

    def write(self, path: Path) -> None:
        data = asdict(self)
        write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def read(cls, path: Path) -> ReportDesign:
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run `vramlab aggregate` for this matrix first (it writes "
                                    "the matrix's design beside cells.csv)")
        data = json.loads(path.read_text())
        data.pop("charts")
        data["sweep"] = tuple(SweepLine(d["label"], d["change"], tuple(d["cells"])) for d in data["sweep"])
        return cls(**{**data, "lines": tuple(data["lines"]), "deltas": tuple(data["deltas"])})


def x_label(x: str | None) -> str:
    """The sweep's x with its unit, for an axis or a column header."""
    return f"{x} ({UNITS[x]})" if x in UNITS else str(x)


def _setting(where: str, name: Any) -> str:
    if not isinstance(name, str) or name not in SETTINGS:
        raise ReportSpecError(f"{where}: unknown setting {name!r}{did_you_mean(name, list(SETTINGS))}")
    return name


def _groups(cells: list[Cell]) -> dict[str, dict[str, Any]]:
    """Each group's settings (those of its first cell: its seeds differ in nothing else), in matrix order."""
    groups: dict[str, dict[str, Any]] = {}
    for cell in cells:
        groups.setdefault(group_name(cell.name), cell.settings)
    return groups


def _sweeps(groups: dict[str, dict[str, Any]], x: str) -> list[list[str]]:
    """Groups that differ in nothing but x (and the seed), at two levels of x or more, each in increasing x."""
    buckets: dict[str, dict[float, str]] = {}
    for name, settings in groups.items():
        rest = json.dumps({k: v for k, v in settings.items() if k not in (x, "seed")}, sort_keys=True, default=str)
        buckets.setdefault(rest, {}).setdefault(float(settings[x]), name)  # a second group at one x adds nothing
    return [[members[level] for level in sorted(members)] for members in buckets.values() if len(members) > 1]


def _x(section: dict[str, Any], groups: dict[str, dict[str, Any]]) -> str | None:
    if "x" not in section:
        return DEFAULT_X if _sweeps(groups, DEFAULT_X) else None
    x = section["x"]
    if x is None:
        return None
    x = _setting("x", x)
    if SETTINGS[x].kind not in (int, float):
        raise ReportSpecError(f"x: {x!r} is not a numeric setting; the sweep draws lines against a number")
    if not _sweeps(groups, x):
        raise ReportSpecError(f"x: no two cells differ only in {x} (and the seed), so the sweep has no line to draw; "
                              "write x: null for no sweep")
    return x


def _line_names(section: dict[str, Any], lines: list[dict[str, Any]], x: str) -> tuple[str, ...]:
    """The settings that tell the lines apart: those given, or those in which the lines differ."""
    varying = [k for k in lines[0] if k not in (x, "seed") and len({str(line[k]) for line in lines}) > 1]
    if "lines" not in section:
        return tuple(varying)
    given = section["lines"]
    given = [given] if isinstance(given, str) else given
    if not isinstance(given, list) or not given:
        raise ReportSpecError(f"lines: expected a setting or a list of settings, got {given!r}")
    names = tuple(_setting("lines", name) for name in given)
    for name in names:
        if name == x:
            raise ReportSpecError(f"lines: {x!r} is the x-axis; name the settings that tell the lines apart")
        if name not in varying and len(lines) > 1:
            raise ReportSpecError(f"lines: {name!r} is the same on every line ({name} {lines[0][name]}); "
                                  f"the lines differ in {', '.join(varying)}")
    labels = [describe({k: line[k] for k in names}) for line in lines]
    if len(set(labels)) < len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise ReportSpecError(f"lines: two lines would both be '{twice}'; add the settings that tell them apart "
                              f"(the lines differ in {', '.join(varying)})")
    return names


def _acting(names: tuple[str, ...], settings: dict[str, Any]) -> dict[str, Any]:
    """The line settings that change anything in these cells (harness/core/setting.py, `acts_when`)."""
    return {k: settings[k] for k in names if k not in SETTINGS or SETTINGS[k].acts(settings)}


def resolve(spec: dict[str, Any], cells: list[Cell]) -> ReportDesign:
    """The report's design from the matrix's `report:` section (or its defaults) and its expanded cells."""
    section = spec.get("report")
    section = {} if section is None else section
    if not isinstance(section, dict):
        raise ReportSpecError(f"expected a mapping with any of {', '.join(KEYS)}, got {section!r}")
    for key in section:
        if key not in KEYS:
            raise ReportSpecError(f"unknown key {key!r}{did_you_mean(key, list(KEYS))}; known: {', '.join(KEYS)}")
    groups = _groups(cells)
    baseline = section.get("baseline", next(iter(groups)))
    if not isinstance(baseline, str):
        raise ReportSpecError(f"baseline: expected a cell's name, got {type(baseline).__name__} "
                              f"{str(baseline)[:100]!r}; write baseline: NAME (one of {', '.join(list(groups)[:5])}"
                              f"{', ...' if len(groups) > 5 else ''})")
    if baseline not in groups:
        raise ReportSpecError(f"baseline: no cell is named {baseline!r}{did_you_mean(baseline, list(groups))} "
                              "(a cell repeated over seeds goes by its name without /seed=N)")
    x = _x(section, groups)
    if x is None and "lines" in section:
        raise ReportSpecError("lines: name the lines of a sweep, which needs an x (a numeric setting)")
    ignored = (x,) if x else ()
    changes = {name: describe(differences(s, groups[baseline], ignored)) for name, s in groups.items()}
    sweep: list[SweepLine] = []
    lines: tuple[str, ...] = ()
    if x:
        members = _sweeps(groups, x)
        lines = _line_names(section, [groups[m[0]] for m in members], x)
        labels = [describe(_acting(lines, groups[m[0]])) for m in members]
        if len(set(labels)) < len(labels):  # lines told apart only by a setting that acts in none of them
            labels = [describe({k: groups[m[0]][k] for k in lines}) for m in members]
        for m, label in zip(members, labels, strict=True):
            sweep.append(SweepLine(label or changes[m[0]] or baseline, changes[m[0]], tuple(m)))
    at_baseline = [n for n, s in groups.items() if n != baseline and (not x or str(s[x]) == str(groups[baseline][x]))]
    concurrent = spec.get("concurrent_cells", 1)
    shared = isinstance(concurrent, int) and not isinstance(concurrent, bool) and concurrent > 1
    evaluation = spec.get("evaluation")
    quality = isinstance(evaluation, dict) and bool(evaluation.get("tasks"))
    recall = quality and "workload_recall" in evaluation["tasks"]
    return ReportDesign(baseline=baseline, x=x, lines=lines, sweep=tuple(sweep), changes=changes,
                        deltas=tuple(at_baseline), throughput_measured=not shared, quality=quality,
                        recall_by_age=recall, steps=max(int(c.settings["steps"]) for c in cells),
                        random_weights=all(random_weights(c.settings["model"]) for c in cells))


def random_weights(model: str) -> bool:
    """Whether a model source is an architecture with random weights ("arch:qwen3-8b"), as
    harness.stack.models.sources builds it."""
    return str(model).startswith("arch:")

