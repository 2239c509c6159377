"""Matrix files: validate a YAML ablation matrix against the settings schema, then expand it into cells.
Why it is so: docs/matrix-files.md."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from harness.core.environment_variables import ablations_folder, device_slots_problem, max_cells
from harness.core.errors import UsageError
from harness.core.hidden_characters import hidden_character
from harness.core.path_problems import not_a_regular_file
from harness.core.suggest import did_you_mean
from harness.data.training import sequences_needed
from harness.spec.ceiling import CeilingSpec, CeilingSpecError
from harness.spec.cell_checks import chat_template_problem, name_contradiction
from harness.spec.cells import Cell
from harness.spec.comparisons import ComparisonPlan, ComparisonSpecError
from harness.spec.comparisons import parse as parse_comparisons
from harness.spec.design import ReportDesign, ReportSpecError, resolve
from harness.spec.groups import group_name
from harness.spec.settings import SETTINGS, defaults
from harness.spec.yaml_dates import construct_written_date
from harness.spec.yaml_keys import key_trap
from harness.spec.yaml_numbers import number_traps, out_of_range
from harness.stack.models.facts import ModelSourceError, facts
from harness.stack.models.hub import UNPINNED, HubModelError, commit_of, hub_problem, is_hub_id
from harness.stack.models.model_folder import unloadable_folder
from harness.stack.models.sources import missing_parts_problem
from harness.tasks.catalog import PROJECT_TASKS, scores_training_documents
from harness.tasks.names import unknown_task_problem
from harness.tasks.plan import EvaluationPlan, EvaluationSpecError

TOP_LEVEL_KEYS = ("description", "fixed", "axes", "design", "baseline", "cells", "include", "exclude",
                  "seeds", "concurrent_cells", "predicted_oom", "evaluation", "ceiling", "report", "comparisons")
DESIGNS = ("full", "one_at_a_time", "list")
PREDICTED_OOM = ("run", "skip")
MATRIX_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*\Z")
# a cell name given in the matrix: it appears in file names' neighbours, Markdown and LaTeX tables, and the
# `/seed=N` suffix that seeds add, so it holds no path separator, newline, table bar or LaTeX special but `_`
CELL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+=@,-]{0,99}\Z")
# sections that hold keys: one written with nothing under it is a mistake, not "no section"
SECTIONS = ("fixed", "axes", "baseline", "cells", "include", "exclude", "seeds", "evaluation", "ceiling", "report",
            "comparisons")


def ablation_dirs() -> list[Path]:
    """Where matrix names are looked up, in order: $VRAMLAB_ABLATIONS, ./ablations, the source checkout
    this package runs from, and the copy a wheel installs under <prefix>/share/vramlab/ablations."""
    given = ablations_folder()
    dirs = [given] if given else []
    dirs += [Path.cwd() / "ablations", Path(__file__).resolve().parents[2] / "ablations",
             Path(sys.prefix) / "share" / "vramlab" / "ablations"]
    unique: list[Path] = []
    for folder in dirs:
        if folder.resolve() not in {d.resolve() for d in unique}:
            unique.append(folder)
    return unique


class MatrixError(UsageError):
    """A matrix file that cannot be expanded; the message is one line meant for the researcher."""


def matrix_path(name_or_path: str) -> Path:
    """'smoke' -> the first ablations/smoke.yaml found (see ablation_dirs); a path is taken as it is."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists() or "/" in name_or_path:
        return path
    for folder in ablation_dirs():
        if (folder / f"{name_or_path}.yaml").is_file():
            return folder / f"{name_or_path}.yaml"
    return ablation_dirs()[0] / f"{name_or_path}.yaml"


def source_folder_problem(path: Path) -> str | None:
    """A path in the folders vramlab reads its matrices and its code from, where no result or report belongs (a
    result file there would pass for a matrix file or a module, and git would show it among the sources)."""
    resolved = Path(path).resolve()
    package = Path(__file__).resolve().parents[1]
    for folder, what in [*((d, "matrix files") for d in ablation_dirs()), (package, "code")]:
        if folder.exists() and (resolved == folder.resolve() or folder.resolve() in resolved.parents):
            return f"{path} lies in {folder}/, the folder of vramlab's {what}"
    return None


def available_matrices() -> list[str]:
    return sorted({p.stem for folder in ablation_dirs() for p in folder.glob("*.yaml")})


def shipped_matrices() -> dict[str, Path]:
    """The matrices that come with vramlab (the source checkout's ablations/, or the installed copy)."""
    shipped: dict[str, Path] = {}
    for folder in ablation_dirs()[-2:]:
        for file in sorted(folder.glob("*.yaml")):
            shipped.setdefault(file.stem, file)
    return shipped


def results_folder_owner(marker: Path) -> str:
    """The matrix a results folder's .matrix file names (harness/spec/owners.py); a damaged one is one line."""
    try:
        owner = marker.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError:
        owner = ""
    if not owner or "\0" in owner or "\n" in owner:
        raise MatrixError(f"{marker} is damaged (not a matrix path); delete it, or write the path of the matrix file "
                          "whose results the folder holds in it")
    return owner


def foreign_folder(path: Path, folder: Path, owner: str) -> str:
    """What is said where a matrix file would write into the results folder of another."""
    return (f"{path}: {folder}/ holds the results of another matrix file ({owner}), as its .matrix file says; "
            "rename this file (its name becomes the results folder's), or give another results folder")


# folders of results/ and reports/ that hold no matrix's cells: a matrix of that name would write among them
RESERVED_NAMES = {"superseded": "results/superseded/ (the results that new measurements replaced)",
                  "benchmarks": "results/benchmarks/ (the harness's own benchmarks and reproductions)",
                  "memory-history": "results/memory-history/ (the allocator histories of GPU cells)",
                  "estimate": "reports/estimate/ (the memory estimate's calibration)"}


def _first_non_ascii(name: str) -> str:
    """Where a name is refused for a letter outside ASCII (ä), that letter: it reads as a letter to a person."""
    letter = next((c for c in name if not c.isascii()), None)
    return f" ({letter!r} is not ASCII)" if letter and letter.isprintable() else ""


def matrix_name(path: Path) -> str:
    """The name that becomes results/<name>/ and reports/<name>/: it can never leave those folders."""
    name = path.stem if path.suffix in (".yaml", ".yml") else path.name
    if not MATRIX_NAME.match(name):
        raise MatrixError(f"{path}: the matrix name {name!r} (from the file name) must start with a letter or "
                          "digit and hold only letters, digits, '-' and '_', all ASCII (a-z, A-Z, 0-9): it names the "
                          f"results folder; rename the file{_first_non_ascii(name)}")
    return name


_CELL_ID_LIKE = re.compile(r"[0-9a-fA-F]{12}")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", re.ASCII)  # "２e-4" stays text
_YAML_BOOLEANS = {"off", "on", "yes", "no", "true", "false"}
_YAML_BOOLEANS_BACK = {False: "off", True: "on"}
# words researchers use for a level, and the level they mean
_SYNONYMS = {"device": {"gpu": "cuda", "nvidia": "cuda", "cuda:0": "cuda"},
             "quantization": {"4bit": "nf4", "qlora": "nf4", "bnb": "nf4"},
             "kernels": {"flash": "none"}}
# what a matrix file may cost before it is read: a matrix is settings, never data
MAX_MATRIX_BYTES = 2**20
MAX_EXPANDED = 4 * 2**20  # values and characters once its aliases are expanded
MAX_DEPTH = 64


def _kind(value: Any) -> str:
    if isinstance(value, dt.date):  # a WrittenDate (harness/spec/yaml_dates.py) as a plain one
        return "a date"
    return {dict: "a mapping", list: "a list", str: "text", int: "a number", float: "a number",
            bool: "true/false", type(None): "nothing"}.get(type(value), type(value).__name__)


class UniqueKeyLoader(yaml.SafeLoader):
    """Safe YAML that refuses a key written twice in one mapping (plain YAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` merges a mapping in; a key written beside it overrides it, as YAML says
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is written twice (first on line {seen[key] + 1}); the second would "
                                "silently replace the first", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", construct_written_date)


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> MatrixError:
        return MatrixError(f"{self.source}: {where}: {message}")

    def setting_name(self, where: str, name: Any) -> None:
        if name not in SETTINGS:
            raise self.fail(where, f"unknown setting {name!r}{did_you_mean(name, list(SETTINGS))}")

    def value(self, where: str, name: str, value: Any) -> Any:
        """The value as the cell will hold it (a float written '2e-4' becomes 2e-4), or a clear error."""
        self.setting_name(where, name)
        setting = SETTINGS[name]
        if setting.kind is float and isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
            if out_of_range(value.strip()):
                raise self.fail(f"{where}.{name}", str(out_of_range(value.strip())))
            value = float(value)  # YAML 1.1 reads 2e-4 (no dot) as a string; the researcher meant a number
        problem = setting.check(value)
        if problem:
            levels = setting.levels or ()
            if isinstance(value, bool) and any(str(level) in _YAML_BOOLEANS for level in levels):
                problem += (f"; YAML reads unquoted {_YAML_BOOLEANS_BACK[value]} as {str(value).lower()}: "
                            f"write it in quotes, {name}: \"{_YAML_BOOLEANS_BACK[value]}\"")
            elif isinstance(value, dt.date):
                problem += f"; YAML reads unquoted {value} as a date: write it in quotes, {name}: \"{value}\""
            elif str(value).lower() in _SYNONYMS.get(name, {}):
                problem += f"; did you mean {_SYNONYMS[name][str(value).lower()]!r}?"
            else:
                problem += did_you_mean(value, levels)
            raise self.fail(f"{where}.{name}", problem)
        return setting.canonical(value) if setting.canonical else value

    def assignment(self, where: str, mapping: Any, allow_name: bool = False) -> dict[str, Any]:
        if not isinstance(mapping, dict):
            raise self.fail(where, f"expected a mapping of setting: value, got {_kind(mapping)}")
        for name, value in list(mapping.items()):
            if allow_name and name == "name":
                if not isinstance(value, str) or not value.strip():
                    raise self.fail(f"{where}.name", "a cell name must be a non-empty string")
                if not CELL_NAME.match(value):
                    raise self.fail(f"{where}.name", f"{value[:60]!r}{'…' if len(value) > 60 else ''} is not a "
                                    "cell name: up to 100 letters, digits and . _ + = @ , - (starting with a letter "
                                    "or digit), so that it reads the same in file names, tables and LaTeX")
                if _CELL_ID_LIKE.fullmatch(value):
                    raise self.fail(f"{where}.name", f"{value!r} reads as a cell id (12 hex digits): a command given "
                                    "it (run-cell, --cell) could not tell the name from another cell's id; name the "
                                    "cell by what it varies, such as lora-r16")
                continue
            mapping[name] = self.value(where, name, value)
        return mapping

    def entries(self, where: str, value: Any) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list of mappings (- {{setting: value}}), got {_kind(value)}")
        return value


def load_matrix(name_or_path: str) -> tuple[str, dict[str, Any]]:
    if not str(name_or_path).strip():
        raise MatrixError("the matrix is named by an empty string; give a matrix name (such as smoke) or the path "
                          "of a .yaml file")
    path = matrix_path(name_or_path)
    kind = not_a_regular_file(path)
    if kind is not None:
        raise MatrixError(f"{path} is {kind}, not a matrix file; give a YAML file (such as ablations/smoke.yaml)")
    if not path.is_file():
        known = available_matrices()
        given = Path(name_or_path)
        searched = "" if "/" in name_or_path or given.suffix in (".yaml", ".yml") else \
            f"; looked in {', '.join(str(d) for d in ablation_dirs())}"
        raise MatrixError(f"no matrix file {str(path)!r}{did_you_mean(Path(name_or_path).stem, known)} "
                          f"(known: {', '.join(known) or 'none'}{searched})")
    name = matrix_name(path)
    if name in RESERVED_NAMES:
        raise MatrixError(f"{path}: the name {name!r} is taken by {RESERVED_NAMES[name]}; name your file "
                          "differently, since its name becomes results/<name>/ and reports/<name>/")
    shipped_all = shipped_matrices()
    # Smoke beside smoke: on a case-insensitive filesystem (macOS, Windows) their folders are one and the same
    twin = next((other for other in shipped_all if other != name and other.lower() == name.lower()), None)
    if twin is not None:
        raise MatrixError(f"{path}: the name {name!r} differs only in case from {twin!r}, a matrix that ships with "
                          f"vramlab ({shipped_all[twin]}); on a filesystem that ignores case (macOS, Windows) their "
                          "results/ and reports/ folders would be one; name your file differently")
    shipped = shipped_all.get(name)
    if shipped is not None and path.resolve().parent.name != "ablations" and path.resolve() != shipped.resolve():
        raise MatrixError(f"{path}: a matrix named {name!r} ships with vramlab ({shipped}); name your file "
                          "differently, since its name becomes results/<name>/ and reports/<name>/")
    with path.open("rb") as handle:
        raw = handle.read(MAX_MATRIX_BYTES + 1)
    if len(raw) > MAX_MATRIX_BYTES:
        raise MatrixError(f"{path}: {path.stat().st_size:,} bytes, more than the limit of {MAX_MATRIX_BYTES // 2**20} "
                          "MiB for a matrix file (a matrix holds settings; data goes in files it names)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MatrixError(f"{path}: not UTF-8 text (byte {err.start}: {err.object[err.start:err.start + 1]!r}); "
                          "save the file as UTF-8") from None
    try:
        # a SafeLoader subclass: no arbitrary objects; it refuses control characters (NUL, BEL) as it starts
        loader = UniqueKeyLoader(text)
    except yaml.YAMLError as err:
        raise _not_yaml(path, err) from None
    try:
        node = loader.get_single_node()
        if node is not None:
            _bounded(node, path)
            key_problem = key_trap(node, text)
            if key_problem is not None:
                raise MatrixError(f"{path}: {key_problem}")
            trap = number_traps(node)
            if trap is not None:
                key, line, why = trap
                raise MatrixError(f"{path}: line {line}: {key}: {why}")
        spec = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as err:
        raise _not_yaml(path, err) from None
    except RecursionError:
        raise MatrixError(f"{path}: nested deeper than YAML can be read here; a matrix is at most a few levels "
                          "deep") from None
    finally:
        loader.dispose()
    return name, spec


def set_value(key: str, text: str) -> Any:
    """The value of `--set KEY=VALUE` as a matrix file would give it, its YAML 1.1 number forms told alike; a
    setting's level written as `vramlab settings` lists it is that level (a shell has no quotes to keep `on` a word,
    where YAML would read it as true)."""
    setting = SETTINGS.get(key)
    every_level = list(setting.levels or ()) if setting else []
    levels = [level for level in every_level if not isinstance(level, bool)]
    if text.strip() in {str(level) for level in levels}:
        return text.strip()
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    trap = number_traps(node) if node is not None else None
    if trap is not None:
        raise MatrixError(f"--set {key}={text}: {trap[2]}")
    value = yaml.safe_load(text)
    if isinstance(value, bool) and levels and len(levels) == len(every_level):
        # yes, no, true, false: YAML's booleans, never a level here; the matrix file's advice (quotes) would not help
        raise MatrixError(f"--set {key}={text}: {text.strip()} is not one of its levels, "
                          f"{', '.join(map(str, levels))}{did_you_mean(text.strip(), [str(lv) for lv in levels])}")
    return value


def _not_yaml(path: Path, err: yaml.YAMLError) -> MatrixError:
    return MatrixError(f"{path}: not valid YAML: {' '.join(str(err).split())[:500]}")


def _bounded(root: yaml.Node, path: Path) -> None:
    """Refuse a document whose aliases expand it beyond MAX_EXPANDED values and characters (nine levels of nine
    aliases of one word make 387 million words out of 400 bytes: a billion-laughs file), or nested deeper than
    MAX_DEPTH, before anything is built from it. Aliased nodes are one object in the composed graph, so each is
    measured once."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise MatrixError(f"{path}: line {node.start_mark.line + 1}: nested deeper than {MAX_DEPTH} levels; a "
                              "matrix is at most a few levels deep")
        if id(node) in sizes:
            return sizes[id(node)]
        if isinstance(node, yaml.ScalarNode):
            total = 1 + len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size(child, depth + 1) for child in node.value)
        else:
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        if total > MAX_EXPANDED:
            raise MatrixError(f"{path}: line {node.start_mark.line + 1}: its aliases (*name) expand it to more than "
                              f"{MAX_EXPANDED:,} values and characters, far more than any matrix needs")
        sizes[id(node)] = total
        return total

    size(root, 0)


def expand(name_or_path: str, check_model: bool = True) -> list[Cell]:
    """The matrix's cells, checked. `check_model=False` leaves out the checks against the model's own config,
    for commands that only read results (aggregate): they need not have the model on this machine."""
    name, spec = load_matrix(name_or_path)
    return expand_spec(name, spec, source=str(matrix_path(name_or_path)), check_model=check_model)


def expand_spec(name: str, spec: Any, source: str = "<matrix>", check_model: bool = True) -> list[Cell]:
    check = _Checker(source)
    if not isinstance(spec, dict):
        raise check.fail("top level", "a matrix file must be a mapping")
    for key in spec:
        if key not in TOP_LEVEL_KEYS:
            raise check.fail("top level", f"unknown key {key!r}{did_you_mean(key, TOP_LEVEL_KEYS)}")
    for key in SECTIONS:
        if key in spec and spec[key] is None:
            raise check.fail(key, "an empty section: give what goes under it, or remove the line")
    if not isinstance(spec.get("description", ""), str):
        raise check.fail("description", f"expected text, got {_kind(spec['description'])}; write it in quotes")
    if "description" in spec and not spec["description"].strip():  # optional, but a blank one lists as nothing
        raise check.fail("description", "empty; say in a line what the matrix is for, or leave the key out")
    hidden = hidden_character(spec.get("description", ""))
    if hidden:
        raise check.fail("description", f"holds {hidden}, which no report can show as text (and a direction "
                         "override would make it read other than it is); remove it")
    problem = _predicted_oom_problem(spec.get("predicted_oom", "run"))
    if problem:
        raise check.fail("predicted_oom", problem)
    problem = device_slots_problem(spec.get("concurrent_cells", 1))
    if problem:
        raise check.fail("concurrent_cells", problem)
    if not {"design", "axes", "cells"} & set(spec):  # no design to name the missing part by: say both
        raise check.fail("top level", "neither `axes` nor `cells`, so the matrix makes no cell; give `axes` (every "
                         "combination of their levels is a cell) or `cells` (a list of cells, each its settings), "
                         "beside `fixed`")
    design = spec.get("design", "full" if "axes" in spec else "list")
    if design not in DESIGNS:
        raise check.fail("design", f"{design!r} is not one of {', '.join(DESIGNS)}{did_you_mean(design, DESIGNS)}")
    # a section the chosen design does not read would be ignored without a word
    unread = {"full": ("cells", "baseline"), "one_at_a_time": ("cells",), "list": ("axes", "baseline")}[design]
    for key in unread:
        if key in spec:
            raise check.fail(key, f"the {design} design does not read `{key}`; "
                             + {"cells": "list cells need `design: list`",
                                "baseline": "a baseline goes with `design: one_at_a_time`",
                                "axes": "a list design takes each cell's settings from `cells` (and `fixed`)"}[key])

    fixed = check.assignment("fixed", spec.get("fixed") or {})
    axes = spec.get("axes") or {}
    if not isinstance(axes, dict):
        raise check.fail("axes", "expected a mapping of setting: [levels]")
    for axis, levels in axes.items():
        check.setting_name("axes", axis)
        if not isinstance(levels, list) or not levels:
            raise check.fail(f"axes.{axis}", "expected a non-empty list of levels")
        axes[axis] = levels = [check.value("axes", axis, level) for level in levels]
        if len({json.dumps(level, sort_keys=True) for level in levels}) != len(levels):
            raise check.fail(f"axes.{axis}", f"a level is listed twice in {levels}")
        if axis in fixed:
            raise check.fail(f"axes.{axis}", "is also fixed; a setting is either fixed or an axis")
    size = math.prod(len(levels) for levels in axes.values()) if design == "full" else 0
    if size > max_cells():
        raise check.fail("axes", f"the full design would make {size:,} cells, more than the limit of {max_cells():,} "
                                 "(set VRAMLAB_MAX_CELLS to allow more)")

    base = {**defaults(), **fixed}
    varied_list: list[dict[str, Any]]
    names: list[str | None]
    if design == "full":
        if not axes:
            raise check.fail("axes", "the full design needs at least one axis")
        varied_list = [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]
        names = [None] * len(varied_list)
    elif design == "one_at_a_time":
        baseline = check.assignment("baseline", spec.get("baseline") or {})
        for axis, level in baseline.items():
            if axis not in axes:  # it would set that setting in every cell, over what fixed: says, without a word
                where = " (fixed: sets it for every cell)" if axis in (spec.get("fixed") or {}) else ""
                raise check.fail(f"baseline.{axis}", f"{axis} is not an axis{where}; a baseline names a level of each "
                                 f"axis ({', '.join(axes)}): move it to fixed: or add it to axes:")
            if axis in axes and level not in axes[axis]:
                raise check.fail(f"baseline.{axis}", f"level {level!r} is not among the axis levels {axes[axis]}")
        missing = [a for a in axes if a not in baseline]
        if missing:
            raise check.fail("baseline", f"one_at_a_time needs a baseline level for axes {', '.join(missing)}")
        varied_list, names = [dict(baseline)], ["baseline"]
        for axis, levels in axes.items():
            for level in levels:
                if level != baseline[axis]:
                    varied_list.append({**baseline, axis: level})
                    names.append(f"{axis}={level}")
    else:
        explicit = spec.get("cells")
        if not isinstance(explicit, list) or not explicit:
            raise check.fail("cells", "the list design needs a non-empty list of cells")
        varied_list, names = [], []
        for i, entry in enumerate(explicit):
            entry = dict(check.assignment(f"cells[{i}]", entry, allow_name=True))
            names.append(entry.pop("name", None))
            varied_list.append(entry)

    for i, extra in enumerate(check.entries("include", spec.get("include"))):
        extra = dict(check.assignment(f"include[{i}]", extra, allow_name=True))
        if not set(extra) - {"name"}:
            raise check.fail(f"include[{i}]", "the entry sets no setting, so it would add the cell of `fixed` and the "
                             "defaults alone; give the settings that make the cell, or remove the entry")
        names.append(extra.pop("name", None))
        varied_list.append(extra)

    exclusions = [check.assignment(f"exclude[{i}]", e) for i, e in enumerate(check.entries("exclude",
                                                                                          spec.get("exclude")))]

    try:
        plan = EvaluationPlan.parse(spec.get("evaluation"))
    except EvaluationSpecError as err:
        raise check.fail("evaluation", str(err)) from None

    problem = unknown_task_problem(plan.tasks)
    if problem:
        raise check.fail("evaluation", f"tasks: {problem}")

    try:
        ceiling = CeilingSpec.parse(spec.get("ceiling"))
    except CeilingSpecError as err:
        raise check.fail("ceiling", str(err)) from None

    seeds = _seeds(check, spec, fixed, axes)
    cells: list[Cell] = []
    seen: dict[str, str] = {}
    unmatched = set(range(len(exclusions)))
    for varied, given_name in zip(varied_list, names, strict=True):
        hits = {i for i, ex in enumerate(exclusions) if all(varied.get(k, base.get(k)) == v for k, v in ex.items())}
        if hits:
            unmatched -= hits
            continue
        contradiction = name_contradiction(given_name, {**base, **varied}) if given_name else None
        if contradiction:
            raise check.fail(f"cells.{given_name}", f"{contradiction}; name the cell by what it is")
        repeats = [{}] if seeds is None or "seed" in varied else [{"seed": seed} for seed in seeds]
        for repeat in repeats:
            label = given_name or _readable_name(varied)
            settings = _pinned(check, label, {**base, **varied, **repeat})
            cell = Cell(matrix=name, name=f"{label}/seed={repeat['seed']}" if repeat else label,
                        settings=settings, varied={**varied, **repeat})
            if cell.cell_id in seen:
                raise check.fail("cells", f"cells {seen[cell.cell_id]!r} and {cell.name!r} have the same settings, "
                                          "so they are one cell; remove one or make them differ")
            if cell.name in seen.values():
                raise check.fail("cells", f"two cells are named {cell.name!r}; names tell cells apart in reports")
            seen[cell.cell_id] = cell.name
            cells.append(cell)
            if len(cells) > max_cells():
                raise check.fail("cells", f"more than {max_cells():,} cells (set VRAMLAB_MAX_CELLS to allow more)")
    if not cells:
        raise check.fail("exclude", "every cell was excluded")
    if unmatched:
        raise check.fail(f"exclude[{min(unmatched)}]", "matches no cell, so it excludes nothing (a level it names "
                                                      "may have left the axes); remove it or correct it")
    _idle_setting(check, _written(spec), cells, plan)
    _shared_device(check, spec.get("concurrent_cells", 1), cells)
    _skip_on_a_gpu(check, spec.get("predicted_oom", "run"), cells)
    _bounded_training(check, cells)
    _held_out_is_held_out(check, plan, cells)
    _evaluation_can_act(check, plan, spec.get("evaluation") or {}, cells)
    if ceiling is not None and len({c.settings["context"] for c in cells}) > 1:
        raise check.fail("ceiling", "`context` varies between cells, but it is what the ceiling searches (from low "
                                    "to high): each search would be repeated once per context; set context once "
                                    "(in fixed, or not at all) and the range with low and high")
    for cell in cells if check_model else ():
        _check_against_model(check, cell)
        if ceiling is not None:
            _ceiling_within_positions(check, cell, ceiling)

    try:
        resolve(spec, cells)
    except ReportSpecError as err:
        raise check.fail("report", str(err)) from None
    _comparisons(check, spec, plan, cells)
    return cells


def _comparisons(check: _Checker, spec: dict[str, Any], plan: EvaluationPlan,
                 cells: list[Cell]) -> ComparisonPlan | None:
    """The matrix's `comparisons:` section checked against its groups and tasks; None where it has none."""
    if "comparisons" not in spec:
        return None
    groups = list(dict.fromkeys(group_name(cell.name) for cell in cells))
    try:
        families = {task: PROJECT_TASKS[task].family if task in PROJECT_TASKS else None for task in plan.tasks}
        parsed = parse_comparisons(spec["comparisons"], groups, families)
    except ComparisonSpecError as err:
        raise check.fail("comparisons", str(err)) from None
    seeds = Counter(group_name(cell.name) for cell in cells)
    compared = dict.fromkeys(arm for c in parsed.comparisons for arm in (c.a, c.b) if arm in seeds)
    short = next((group for group in compared if seeds[group] < parsed.min_seeds), None)
    if short is not None:  # a verdict that could never be given is a design mistake, found before any cell runs
        raise check.fail("comparisons", f"min_seeds: {parsed.min_seeds}, but {short!r} has {seeds[short]} seed"
                                        f"{'s' if seeds[short] != 1 else ''} in this matrix, so its comparisons "
                                        "could never get a verdict; add seeds or lower min_seeds")
    return parsed


def _written(spec: dict[str, Any]) -> dict[str, str]:
    """Each setting the matrix file writes (fixed, an axis, a baseline, a list or included cell), by where it is first
    written; `exclude` only names cells, so it writes nothing."""
    written: dict[str, str] = {}
    places = [("fixed", spec.get("fixed")), ("axes", spec.get("axes")), ("baseline", spec.get("baseline"))]
    for section in ("cells", "include"):
        places += [(f"{section}[{i}]", entry) for i, entry in enumerate(spec.get(section) or [])]
    for where, mapping in places:
        for name in mapping or {}:
            if name in SETTINGS:
                written.setdefault(name, where)
    return written


def _pinned(check: _Checker, label: str, settings: dict[str, Any]) -> dict[str, Any]:
    """A hub id's revision as the commit it names (harness/stack/models/hub.py): the cell's id, and its result, are
    that commit's, whatever the branch or tag says later."""
    revision = settings.get("revision", UNPINNED)
    if revision == UNPINNED or not is_hub_id(str(settings["model"])):  # elsewhere it acts in no cell: _idle_setting
        return settings
    try:
        return {**settings, "revision": commit_of(str(settings["model"]), revision)}
    except HubModelError as err:
        raise check.fail(f"{label}.revision", str(err)) from None


# the cell settings that the evaluation tasks scored under the cell's own condition read (harness/tasks/catalog.py)
_READ_BY_FAMILY = {"recall": ("truncation", "truncation_decay"), "section_bpb": ("truncation", "truncation_decay")}


def _idle_setting(check: _Checker, written: dict[str, str], cells: list[Cell], plan: EvaluationPlan) -> None:
    """A written setting that acts in none of the cells (harness/core/setting.py, `acts_when`) changes their ids but
    not what they measure, so the same runs would be measured again under other ids. A matrix where it acts in some
    cells and not in others is left alone: there it is the axis it means to be, and the other cells take it along.
    A setting an evaluation task reads (the cell's own truncation, for recall) acts there whatever the training."""
    evaluated = {name for t in plan.tasks if t in PROJECT_TASKS and PROJECT_TASKS[t].condition == "own"
                 for name in _READ_BY_FAMILY.get(PROJECT_TASKS[t].family, ())}
    for name, where in written.items():
        setting = SETTINGS[name]
        if name in evaluated:
            continue
        at_default = all(cell.settings.get(name) == setting.default for cell in cells)  # asks for nothing
        if setting.acts_when is not None and not at_default and not any(setting.acts(c.settings) for c in cells):
            raise check.fail(f"{where}.{name}", f"{name} has no effect: it acts only in cells with "
                             f"{setting.acts_where}, and no cell of this matrix has {setting.acts_where}; remove it "
                             "(it would change the cells' ids, not what they measure)")


def _shared_device(check: _Checker, concurrent: int, cells: list[Cell]) -> None:
    """concurrent_cells shares one GPU between cells (harness/process/device_lease.py): on the CPU no device is
    leased, so it would share nothing and only record every cell's speed as not measured."""
    if concurrent > 1 and all(cell.settings.get("device") == "cpu" for cell in cells):
        raise check.fail("concurrent_cells", f"{concurrent} cells per GPU, but every cell of this matrix runs on the "
                         "CPU (device: cpu), where no GPU is shared (Snakemake's --cores says how many cells run at "
                         "once); remove it, as it would only record each cell's speed as not measured")


def _skip_on_a_gpu(check: _Checker, predicted_oom: str, cells: list[Cell]) -> None:
    """predicted_oom: skip skips a GPU cell the estimate says cannot fit its budget (harness/run/measure.py): a cell
    on the CPU has no device budget to miss, so on an all-CPU matrix it would skip nothing."""
    if predicted_oom == "skip" and all(cell.settings.get("device") == "cpu" for cell in cells):
        raise check.fail("predicted_oom", "skip has no effect: it skips GPU cells predicted not to fit their budget, "
                         "but every cell of this matrix runs on the CPU (device: cpu); remove it")


# training sequences one cell may ask for: a million at a second each is eleven days, and a cell's time limit grows
# 30 s with each (harness/process/supervisor.py), so past it a limit means nothing
MAX_TRAINING_SEQUENCES = 1_000_000


def _bounded_training(check: _Checker, cells: list[Cell]) -> None:
    for cell in cells:
        s = cell.settings
        sequences = sequences_needed(s)
        if sequences > MAX_TRAINING_SEQUENCES:
            raise check.fail(cell.name, f"(warmup_steps + steps) x grad_accum x batch_size = "
                             f"({s['warmup_steps']:,} + {s['steps']:,}) x {s['grad_accum']:,} x {s['batch_size']:,} = "
                             f"{sequences:,} training sequences, more than a cell may train "
                             f"({MAX_TRAINING_SEQUENCES:,}); lower one of them")


def _held_out_is_held_out(check: _Checker, plan: EvaluationPlan, cells: list[Cell]) -> None:
    """The evaluation's seed is never that of the documents a cell trained on: scored on them, recall and bits per
    byte would measure memorisation (harness/tasks/catalog.py, scores_training_documents)."""
    for cell in cells:
        task = next((t for t in plan.tasks if scores_training_documents(t, plan.seed, cell.settings)), None)
        if task is not None:
            raise check.fail("evaluation", f"seed: {plan.seed} is the seed of the training documents of data: "
                             f"grant-reports, which cell {cell.name} trains on, so {task} would score it on the "
                             f"documents it trained on; give another seed (the default is "
                             f"{EvaluationPlan.seed})")


# the evaluation options each family of this project's tasks reads (harness/tasks/catalog.py, parameters)
_OPTION_FAMILIES = {"examples": ("recall", "ruler"), "documents": ("recall", "section_bpb"),
                    "recall_targets": ("recall",)}


def _evaluation_can_act(check: _Checker, plan: EvaluationPlan, section: dict[str, Any], cells: list[Cell]) -> None:
    """An option no listed task reads asks for something that will not happen: said now, not found after the
    training. (An evaluation of cells of random weights is kept: it records each task as n/a, which `validate`
    says, and the report pipeline is tested on such cells.)"""
    families = {PROJECT_TASKS[t].family for t in plan.tasks if t in PROJECT_TASKS}
    for option, readers in _OPTION_FAMILIES.items():
        if option in section and not families & set(readers):
            users = sorted(t.name for t in PROJECT_TASKS.values() if t.family in readers)
            raise check.fail(f"evaluation.{option}", f"no task listed reads it (only {', '.join(users)} do); "
                             "remove it or list such a task")


def check_measurable(name_or_path: str, cells: list[Cell]) -> None:
    """A matrix whose every cell a declared conflict skips measures nothing, so it is refused before any cell runs,
    naming each conflict and its reason; one with some cells skipped runs the others (and records the skips)."""
    if not cells or any(cell.conflict is None for cell in cells):
        return
    conflicts = {cell.conflict.name: cell.conflict.why(cell.settings) for cell in cells if cell.conflict}
    said = "; ".join(f"{name}: {reason}" for name, reason in conflicts.items())
    raise MatrixError(f"{matrix_path(name_or_path)}: every one of its {len(cells)} cells is skipped by a declared "
                      f"conflict, so it measures nothing ({said})")


def check_models_here(name_or_path: str, cells: list[Cell]) -> None:
    """What `validate` asks beyond the matrix: that each model its cells would load can be had on this machine (a
    package: model's parts installed, a model folder's weights and tokenizer there). Matrices are expanded and
    estimated without them (a split model's header is registered, harness/stack/models/parts.py; a folder's config
    is enough), so that results are aggregated, reported and estimated anywhere."""
    for cell in cells:
        problem = None if cell.conflict else missing_parts_problem(str(cell.settings["model"]))
        if problem:
            raise MatrixError(f"{matrix_path(name_or_path)}: {cell.name}.model: {problem}; without them no cell of "
                              "this model can run on this machine")
        problem = None if cell.conflict else unloadable_folder(str(cell.settings["model"]))
        if problem:
            raise MatrixError(f"{matrix_path(name_or_path)}: {cell.name}.model: {problem}")


def _ceiling_within_positions(check: _Checker, cell: Cell, ceiling: CeilingSpec) -> None:
    """A search whose range passes what a probe may reach (PROBE_POSITIONS_FACTOR x the model's positions) would
    have run-cell refuse its probes there, one after another; said once, before any probe."""
    try:
        model = facts(cell.settings["model"], cell.settings.get("revision", UNPINNED))
    except ModelSourceError:
        return  # _check_against_model has said it
    if model is not None and model.max_positions and ceiling.high > model.max_positions * PROBE_POSITIONS_FACTOR:
        raise check.fail("ceiling.high", f"{ceiling.high:,} tokens, but a probe of {cell.name} may reach "
                         f"{model.max_positions * PROBE_POSITIONS_FACTOR:,} ({PROBE_POSITIONS_FACTOR} x the "
                         f"{model.max_positions:,} positions of {cell.settings['model']}); give a high within it")


# A ceiling probe may pass the model's positions by this factor: how far memory goes is what it measures, and RoPE
# scaling (YaRN, factor 4 in Qwen3's card) extends the positions without changing the size of any tensor.
PROBE_POSITIONS_FACTOR = 4


def check_cell(name_or_path: str, cell: Cell) -> None:
    """A cell made outside the matrix (a ceiling probe at another context) checked as the matrix's own are, up to
    PROBE_POSITIONS_FACTOR times the model's positions."""
    _check_against_model(_Checker(str(matrix_path(name_or_path))), cell, positions_factor=PROBE_POSITIONS_FACTOR)


def _check_against_model(check: _Checker, cell: Cell, positions_factor: int = 1) -> None:
    """What the model's config tells before any weight is loaded: positions, vocabulary, layer names."""
    s = cell.settings
    try:
        model = facts(s["model"], s.get("revision", UNPINNED))
    except ModelSourceError as err:
        raise check.fail(f"{cell.name}.model", str(err)) from None
    if model is None:  # a hub id: loaded from the hub's cache, or from the hub
        problem = hub_problem(s["model"], s.get("revision", UNPINNED))
        if problem:
            raise check.fail(f"{cell.name}.model", problem)
        return
    for shape in ("hidden_size", "intermediate_size", "layers", "heads", "kv_heads", "head_dim", "vocab_size"):
        size = getattr(model, shape)
        if size is not None and (not isinstance(size, int) or size < 1):  # no model is built from it
            raise check.fail(f"{cell.name}.model", f"{s['model']}: its config gives {shape} {size!r}, not a size")
    if model.hidden_size and s["lora_rank"] > model.hidden_size:  # min(in, out) of every layer is at most that
        raise check.fail(f"{cell.name}.lora_rank", f"{s['lora_rank']:,} is more than the hidden size "
                         f"{model.hidden_size:,} of {s['model']}: past the full rank of every layer it adapts")
    problem = chat_template_problem(s)
    if problem:
        raise check.fail(f"{cell.name}.data", problem)
    if model.max_positions and s["context"] > model.max_positions * positions_factor:
        scaled = (f" (a ceiling probe may reach {positions_factor} x that, {model.max_positions * positions_factor:,},"
                  " as RoPE scaling extends them)" if positions_factor > 1 else "")
        raise check.fail(f"{cell.name}.context", f"{s['context']:,} tokens, but {s['model']} has "
                                                 f"{model.max_positions:,} positions{scaled}")
    if model.vocab_size and isinstance(s["vocabulary"], int) and s["vocabulary"] >= model.vocab_size:
        raise check.fail(f"{cell.name}.vocabulary", f"{s['vocabulary']:,} is not smaller than the "
                                                    f"{model.vocab_size:,} tokens of {s['model']}")
    layers = model.linear_layers
    if layers:
        unknown = [t for t in s["lora_targets"] if t not in layers]
        if unknown:
            raise check.fail(f"{cell.name}.lora_targets", f"{', '.join(unknown)} match no layer of a "
                                                         f"{model.model_type} model (its layers: {', '.join(layers)})")


def _seeds(check: _Checker, spec: dict[str, Any], fixed: dict[str, Any], axes: dict[str, Any]) -> list[int] | None:
    seeds = spec.get("seeds")
    if seeds is None:
        return None
    if not isinstance(seeds, list) or not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise check.fail("seeds", f"expected a non-empty list of integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise check.fail("seeds", f"a seed is listed twice in {seeds}")
    problem = next((p for p in map(SETTINGS["seed"].check, seeds) if p), None)
    if problem:
        raise check.fail("seeds", problem)
    if "seed" in fixed or "seed" in axes:
        raise check.fail("seeds", "`seed` is also fixed or an axis; repeat cells with `seeds` or vary `seed`, not both")
    return seeds


def matrix_options(name_or_path: str) -> dict[str, Any]:
    """How a matrix runs, beside what its cells are: how many cells may share the device at once, and whether
    cells predicted not to fit are run."""
    _, spec = load_matrix(name_or_path)
    concurrent = spec.get("concurrent_cells", 1)
    problem = device_slots_problem(concurrent)
    if problem:
        raise MatrixError(f"{matrix_path(name_or_path)}: concurrent_cells: {problem}")
    predicted_oom = spec.get("predicted_oom", "run")
    problem = _predicted_oom_problem(predicted_oom)
    if problem:
        raise MatrixError(f"{matrix_path(name_or_path)}: predicted_oom: {problem}")
    return {"concurrent_cells": concurrent, "predicted_oom": predicted_oom}


def _predicted_oom_problem(value: Any) -> str | None:
    if value in PREDICTED_OOM:
        return None
    return f"{value!r} is not one of {', '.join(PREDICTED_OOM)}{did_you_mean(value, PREDICTED_OOM)}"


def ceiling_spec(name_or_path: str) -> Any:
    """The matrix's `ceiling:` section (harness/spec/ceiling.py), or None."""
    _, spec = load_matrix(name_or_path)
    try:
        return CeilingSpec.parse(spec.get("ceiling"))
    except CeilingSpecError as err:
        raise MatrixError(f"{matrix_path(name_or_path)}: ceiling: {err}") from None


def evaluation_plan(matrix: str) -> EvaluationPlan:
    """The matrix's `evaluation:` section (harness/tasks/plan.py), parsed."""
    _, spec = load_matrix(matrix)
    try:
        return EvaluationPlan.parse(spec.get("evaluation") if isinstance(spec, dict) else None)
    except EvaluationSpecError as err:
        raise MatrixError(f"{matrix_path(matrix)}: evaluation: {err}") from None


def comparison_plan(matrix: str) -> ComparisonPlan | None:
    """The matrix's `comparisons:` section (harness/spec/comparisons.py), parsed; None where it has none (the report
    then derives its comparisons from the cells)."""
    name, spec = load_matrix(matrix)
    cells = expand_spec(name, spec, source=str(matrix_path(matrix)), check_model=False)
    return _comparisons(_Checker(str(matrix_path(matrix))), spec, evaluation_plan(matrix), cells)


def design_of(matrix: str) -> ReportDesign:
    """The report's design: the matrix's `report:` section resolved against its cells (harness/spec/design.py)."""
    _, spec = load_matrix(matrix)
    return resolve(spec, expand(matrix))


def _readable_name(varied: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in varied.items()) or "default"


def find_cell(matrix: str, cell_id: str) -> Cell:
    """The cell with this id (or, as `vramlab cells` lists them, this name)."""
    cells = expand(matrix)
    for cell in cells:
        if cell.cell_id == cell_id:
            return cell
    for cell in cells:
        if cell.name == cell_id:
            return cell
    known = [c.cell_id for c in cells] + [c.name for c in cells]
    raise MatrixError(f"matrix {matrix!r} has no cell with the id or name {cell_id!r}{did_you_mean(cell_id, known)} "
                      "(`vramlab cells MATRIX` lists them)")
