"""Result files on disk: written atomically, read strictly, migrated from older schemas, checked, and set
aside (never deleted) when damaged.

A file under its final name is always complete: it is written to a temporary file in the same folder and
renamed, so a cell killed half-way leaves nothing that looks finished.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from harness.core.atomic_files import atomic_path
from harness.core.errors import UsageError
from harness.core.json_objects import KeyTwice, no_key_twice
from harness.core.made_folders import make_folders
from harness.core.path_problems import mode_kind, not_a_regular_file
from harness.results.model import CELL_SCHEMA_VERSION, EVALUATION_SCHEMA_VERSION, CellResult, EvaluationResult


class ResultFileError(UsageError):
    """A result file that cannot be used; the message names the file and the field."""


class NewerSchemaError(ResultFileError):
    """A result file written by a newer vramlab: valid there, so it is kept (never set aside as damaged, never
    measured again) and refused here until vramlab is upgraded."""


def _refuse_newer(path: Path, version: Any, known: int) -> None:
    if isinstance(version, int) and not isinstance(version, bool) and version > known:
        raise NewerSchemaError(f"{path}: schema_version: written by a newer vramlab (schema {version}; this one reads "
                               f"up to {known}): upgrade vramlab to use it; the file is kept as it is")


def result_path(results_dir: Path, matrix: str, cell_id: str) -> Path:
    return Path(results_dir) / matrix / f"{cell_id}.json"


def evaluation_path(results_dir: Path, matrix: str, cell_id: str, task: str) -> Path:
    return Path(results_dir) / matrix / "evaluations" / cell_id / f"{task}.json"


def evaluation_folders_problems(folder: Path) -> list[str]:
    """One line for each entry of an evaluations/ folder under `folder` (a matrix's results, or their parent) that is
    no folder: a cell's evaluations are a folder of task files, and a file in its place reads as no evaluation."""
    entries = [*Path(folder).glob("evaluations/*"), *Path(folder).glob("*/evaluations/*")]
    return [f"{entry}: a file where the folder of cell {entry.name}'s evaluations belongs, so its evaluations read "
            "as none; move it away (the evaluations are evaluations/<cell id>/<task>.json)"
            for entry in sorted(entries) if not entry.is_dir()]


def orphaned_evaluation(path: Path, result: CellResult | EvaluationResult) -> str | None:
    """An evaluation in its matrix's folder whose cell has no result file beside it, in a line: with no cell (its
    settings, its memory) to put the scores beside, no report can carry it."""
    if not isinstance(result, EvaluationResult) or path.parent.parent.name != "evaluations":
        return None
    cell = path.parent.parent.parent / f"{result.cell_id}.json"
    if cell.is_file():
        return None
    return (f"{path}: an evaluation of cell {result.cell_id}, which has no result {cell}; an evaluation without its "
            "cell's result cannot be reported: restore the cell's result or remove the evaluation")


# what `vramlab check --fresh` found of a matrix's results, beside them (harness/results/freshness_file.py): no result
FRESHNESS_FILE = "freshness.json"


def result_files(folder: Path, pattern: str = "*.json", files_only: bool = True) -> list[Path]:
    """The files under `folder` that `pattern` matches, sorted, without hidden ones: a result is written to a
    temporary file beside it (`.<id>.*.tmp.json`, empty until its rename, harness/core/atomic_files.py), which a
    reader that meets it mid-write must not take for a result; nor is anything under a hidden folder one, nor the
    matrix's freshness record.
    `files_only` False keeps what bears a result's name but is no regular file (a folder, a link to a device), for
    a check that must name it rather than pass over it."""
    folder = Path(folder)
    return sorted(p for p in folder.glob(pattern)
                  if (p.is_file() or (not files_only and os.path.lexists(p))) and p.name != FRESHNESS_FILE
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def adapter_folder(results_dir: Path, matrix: str, cell_id: str) -> Path:
    """Trained adapters are kept here, outside git, for the evaluation stage."""
    return Path(results_dir) / matrix / "adapters" / cell_id


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN; a diverged loss is recorded as null
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


_FRAME = re.compile(r'File "(/[^"]+)"')


def portable_traceback(text: str, roots: list[str] | None = None) -> str:
    """A traceback whose file names are relative to the import root they were found under (the checkout, a
    site-packages folder): results name no local path, and the frames still say which module raised."""
    found = roots if roots is not None else [str(Path(p).resolve()) for p in sys.path if p and Path(p).is_dir()]
    ordered = sorted({r.rstrip("/") for r in found}, key=len, reverse=True)

    def short(match: re.Match[str]) -> str:
        name = match.group(1)
        root = next((r for r in ordered if name.startswith(r + "/")), None)
        return f'File "{name[len(root) + 1:] if root else Path(name).name}"'

    return _FRAME.sub(short, text)


def write_atomic(path: Path, result: BaseModel) -> None:
    """Validated again on the way out, then written whole or not at all, with the usual permissions."""
    payload = _jsonable(result.model_dump(mode="json"))
    if isinstance(payload.get("traceback"), str):
        payload["traceback"] = portable_traceback(payload["traceback"])
    type(result).model_validate(payload)
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        json.dump(payload, handle, indent=2, allow_nan=False)
        handle.write("\n")


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


# a result is numbers and a few lines of text (the largest committed one, an evaluation with its items, is 44 KB): a
# file far beyond that is no result, and reading it whole would take the machine's memory
MAX_RESULT_BYTES = 64 * 2**20


def _too_large(path: Path, size: int | None) -> ResultFileError:
    said = f"{size:,} bytes, more" if size is not None else "more bytes"
    return ResultFileError(f"{path}: {said} than the limit of {MAX_RESULT_BYTES // 2**20} MiB for a result file, so "
                           "it is not a result")


def _read_bounded(path: Path) -> bytes:
    """The file's bytes, at most the limit: a path that is no regular file once its links are followed (a FIFO
    would block, /dev/zero never ends, and either says size 0) is refused by what it is, before anything is read.
    Opened without blocking, and judged by the descriptor, so the file checked is the file read."""
    kind = not_a_regular_file(path)  # a folder cannot be opened to be judged by its descriptor
    if kind is not None:
        raise ResultFileError(f"{path}: {kind}, not a file, so it is not a result")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        mode, size = os.fstat(fd).st_mode, os.fstat(fd).st_size
        kind = mode_kind(mode)
        if kind is not None:
            raise ResultFileError(f"{path}: {kind}, not a file, so it is not a result")
        if size > MAX_RESULT_BYTES:
            raise _too_large(path, size)
        data = handle.read(MAX_RESULT_BYTES + 1)  # a file that grew since its size was read is bounded all the same
    if len(data) > MAX_RESULT_BYTES:
        raise _too_large(path, None)
    return data


def _load_json(path: Path) -> Any:
    try:
        text = _read_bounded(Path(path)).decode("utf-8")
    except UnicodeDecodeError as err:
        raise ResultFileError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise ResultFileError(f"{path}: cannot be read: {err.strerror}") from None
    if not text.strip():
        raise ResultFileError(f"{path}: empty file")
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=no_key_twice)
    except KeyTwice as twice:
        raise ResultFileError(f"{path}: {twice}; the file was edited after vramlab wrote it: keep the one value "
                              "meant, or remove the file so that the cell is measured again") from None
    except ValueError as err:
        raise ResultFileError(f"{path}: not valid JSON: {err}") from None
    except RecursionError:  # arrays or objects nested deeper than Python's parser goes: no result is
        raise ResultFileError(f"{path}: not a result: its JSON is nested too deep to read") from None


def migrate_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: `quality` (always null, evaluations have their own files now) is dropped, and the model
    is named by its source instead of the local paths schema 1 recorded (a cache folder, the GGUF inside a
    virtual environment). Every measurement is kept as it was."""
    data = dict(data)
    data.pop("quality", None)
    model = dict(data.get("model") or {})
    if model:
        model.pop("path", None)
        source = model.get("source", "")
        if source.startswith("arch:"):
            model.setdefault("kind", "arch")
        elif "gguf_file" in model:
            model["gguf_file"] = Path(model["gguf_file"]).name
            model.setdefault("kind", "package" if source.startswith("package:") else "gguf")
        data["model"] = model
    data["schema_version"] = 2
    return data


def migrate_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 -> 3: the behaviour fingerprint (CellResult.fingerprint) is new; a schema-2 result has none, and is
    told as "no fingerprint recorded" (harness/results/freshness.py), never given one it was not measured with."""
    return {**data, "schema_version": 3}


MIGRATIONS = {1: migrate_v1, 2: migrate_v2}  # each takes a result one version up
# versions whose migration adds nothing to the file: `vramlab migrate` leaves them as they are, so that a result keeps
# saying which schema it was written in
READ_AS_THEY_ARE = {2: "no fingerprint recorded"}


def _field_path(error: dict[str, Any]) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(top level)"


def _explain(path: Path, err: ValidationError) -> ResultFileError:
    problems = [f"{_field_path(e)}: {e['msg']}{_given(e)}" for e in err.errors()[:5]]
    more = f" (+{err.error_count() - 5} more)" if err.error_count() > 5 else ""
    return ResultFileError(f"{path}: " + "; ".join(problems) + more)


def _given(error: ErrorDetails) -> str:
    """A value of the wrong type is named with its type: "a valid number" alone hides that the file holds text."""
    value = error.get("input")
    if not error["type"].endswith("_type") or not isinstance(value, str | int | float | bool):
        return ""
    return f", not {_kind(value)} {json.dumps(value)[:40]}"


def _kind(value: Any) -> str:
    return {str: "text", float: "a decimal number", bool: "true/false"}.get(type(value), type(value).__name__)


def _number_meant(version: Any) -> str | None:
    """How to write a schema_version given otherwise than as a whole number, where it would pass for one this
    vramlab reads ("2" reads as text, 2.0 == 2 and true == 1 as keys), or None."""
    if isinstance(version, str) and version.strip().isdigit():
        return f"write it as {int(version)}"
    if isinstance(version, float) and version.is_integer():
        return f"write it as {int(version)}"
    if isinstance(version, bool):
        return "write the schema it was written in as a whole number"
    return None


def _unknown_schema(version: Any) -> str:
    """What a schema_version that is neither one this vramlab reads nor a newer one's is: a whole number below the
    first schema (older than any vramlab wrote; a newer one's is told by _refuse_newer), or no schema number."""
    if isinstance(version, int) and not isinstance(version, bool):
        return f"{version} is older than any schema vramlab has written"
    return f"{json.dumps(version)[:40]} is not a schema number"


def _written_schema(data: dict[str, Any]) -> int:
    """The schema a cell result's fields are of, whatever its schema_version says: every schema-1 result wrote
    'quality' (null; migrating drops it), every schema-3 one writes 'fingerprint' (null where none was taken), and a
    schema-2 one neither."""
    if "quality" in data:
        return 1
    return 3 if "fingerprint" in data else 2


# what a result of each schema is, once its schema_version is set back to it
_READ_AS = {1: "which `vramlab migrate` rewrites in the current schema", 2: "which this vramlab reads as it is (no "
            "fingerprint recorded)", 3: "the current schema"}


def _relabelled(version: Any, data: dict[str, Any]) -> str | None:
    """A cell result whose schema_version is another schema's than its fields are, in a line naming the schema it
    was written in; None where they agree (or the version is none this vramlab reads, told elsewhere)."""
    written = _written_schema(data)
    if version not in (*MIGRATIONS, CELL_SCHEMA_VERSION) or version == written:
        return None
    if version == 1:
        clue = "without the 'quality' field every schema-1 result has"
    elif written == 1:
        clue = "with the 'quality' field only schema 1 wrote"
    elif version == CELL_SCHEMA_VERSION:
        clue = f"without the 'fingerprint' field every schema-{version} result has (null where none was taken)"
    else:
        clue = f"with the 'fingerprint' field schema {written} added"
    return (f"schema_version {version}, but {clue}: a schema-{written} result relabelled after vramlab wrote it; set "
            f"its schema_version back to {written}, {_READ_AS[written]}")


def parse(path: Path, data: Any) -> CellResult | EvaluationResult:
    """Validate what a file holds as the result kind it says it is."""
    if not isinstance(data, dict):
        raise ResultFileError(f"{path}: not a vramlab result file: it holds a {type(data).__name__}, not one JSON "
                              "object")
    if "schema_version" not in data:  # a foreign JSON file: no vramlab wrote it, an older or a newer one
        raise ResultFileError(f"{path}: not a vramlab result file: it has no schema_version")
    model: type[CellResult] | type[EvaluationResult]
    version = data.get("schema_version")
    meant = _number_meant(version)
    if meant is not None:
        raise ResultFileError(f"{path}: schema_version: {json.dumps(version)} is {_kind(version)}, not the whole "
                              f"number vramlab writes there; the file was edited after vramlab wrote it: {meant}")
    if data.get("kind") == "evaluation":
        _refuse_newer(path, version, EVALUATION_SCHEMA_VERSION)
        model = EvaluationResult
    else:
        _refuse_newer(path, version, CELL_SCHEMA_VERSION)
        relabelled = _relabelled(version, data)
        if relabelled:
            raise ResultFileError(f"{path}: {relabelled}")
        if version not in MIGRATIONS and version != CELL_SCHEMA_VERSION:
            raise ResultFileError(f"{path}: schema_version: {_unknown_schema(version)} (this vramlab reads schemas "
                                  f"1 to {CELL_SCHEMA_VERSION}); the file was edited after vramlab wrote it, or no "
                                  "vramlab wrote it")
        while version in MIGRATIONS:
            data = MIGRATIONS[version](data)
            version = data["schema_version"]
        model = CellResult
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise _explain(path, err) from None


def read(path: Path) -> CellResult:
    result = parse(path, _load_json(path))
    if not isinstance(result, CellResult):
        raise ResultFileError(f"{path}: an evaluation result where a cell result was expected")
    return result


def read_data(path: Path) -> dict[str, Any]:
    """A cell result's JSON as its file holds it (before any migration), read and validated as `read` does: for
    a reader that works on the file's own fields (the estimate's calibration)."""
    data = _load_json(path)
    if not isinstance(parse(path, data), CellResult):
        raise ResultFileError(f"{path}: an evaluation result where a cell result was expected")
    return data


def read_evaluation(path: Path) -> EvaluationResult:
    result = parse(path, _load_json(path))
    if not isinstance(result, EvaluationResult):
        raise ResultFileError(f"{path}: a cell result where an evaluation result was expected")
    return result


def check(path: Path) -> CellResult | EvaluationResult:
    """Any result file, validated; its name must be its cell id (and task)."""
    return check_place(path, parse(path, _load_json(path)))


def check_place(path: Path, result: CellResult | EvaluationResult) -> CellResult | EvaluationResult:
    """`result` is the one its file's name and folder say: its cell's (and task's), in its matrix's folder."""
    expected = f"{result.task}.json" if isinstance(result, EvaluationResult) else f"{result.cell_id}.json"
    # a replaced result, kept under superseded/, is named <cell_id>.<commit or time>.json (superseded_path)
    kept = "superseded" in path.parts and re.fullmatch(rf"{re.escape(expected[:-5])}\.[0-9A-Za-z]+\.json", path.name)
    if path.name != expected and not kept:
        raise ResultFileError(f"{path}: cell_id/task: the file of this result would be named {expected}")
    if isinstance(result, EvaluationResult) and path.parent.name != result.cell_id:
        raise ResultFileError(f"{path}: cell_id: {result.cell_id} does not match its folder {path.parent.name}")
    # a matrix's results folder (it holds the owner file .matrix) holds that matrix's results only
    if isinstance(result, CellResult) and (path.parent / ".matrix").is_file() and result.matrix != path.parent.name:
        raise ResultFileError(f"{path}: matrix: a result of {result.matrix!r} in the results folder of "
                              f"{path.parent.name!r}; move it to {path.parent.parent / result.matrix}/")
    return result


def set_aside(path: Path, folder: str = "damaged") -> Path:
    """Move a damaged result out of the way (never delete it), so that its cell is measured again; `folder`
    'superseded' for a valid result that is redone for another reason (harness/results/existing.py)."""
    target = path.parent / folder / f"{path.name}.{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%S%f')}"
    make_folders(target.parent)
    os.replace(path, target)
    return target


def superseded_path(path: Path, matrix: str) -> Path:
    """Where a result that stood is kept once it is replaced: results/superseded/<matrix>/, as the committed ones
    are, with its path below the matrix's folder (a reproduction's, a probe's), named <cell_id>.<UTC time>.json
    (the committed ones are named by commit). The matrix's folder is the one its owner file .matrix marks, else
    the nearest named after the matrix, else the file's own folder."""
    path = Path(path)
    named = [p for p in path.parents if p.name == matrix]
    top = next((p for p in named if (p / ".matrix").is_file()), named[0] if named else None)
    root, below = (top.parent, path.relative_to(top)) if top else (path.parent, Path(path.name))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    return root / "superseded" / matrix / below.parent / f"{path.stem}.{stamp}{path.suffix}"


def supersede(path: Path, matrix: str) -> Path:
    """Move a result that stands out of the way of its replacement (never delete it); returns where it went."""
    target = superseded_path(path, matrix)
    make_folders(target.parent)
    os.replace(path, target)
    return target


def migrate_files(paths: list[Path]) -> list[tuple[Path, str, bool]]:
    """Rewrite cell results of an older schema in the current one; measurements are carried over as they are.
    Each file with what became of it and whether that is fine: migrated, already current, or why it cannot be
    (not a result, damaged, a newer schema): a file given is never skipped without a word."""
    outcomes = []
    for path in paths:
        try:
            data = _load_json(path)
            # another cell's result under this name is said as check says it, and left as it is
            result = check_place(path, parse(path, data))
        except ResultFileError as err:
            outcomes.append((path, f"not migrated: {err}", False))
            continue
        version = data.get("schema_version") if isinstance(data, dict) and data.get("kind") != "evaluation" else None
        if version in MIGRATIONS and version not in READ_AS_THEY_ARE:
            write_atomic(path, result)
            outcomes.append((path, f"migrated {path}", True))
        elif version in READ_AS_THEY_ARE:
            outcomes.append((path, f"{path}: already in the current schema as it is (schema {version}: "
                                   f"{READ_AS_THEY_ARE[version]}), left as it is", True))
        else:
            outcomes.append((path, f"{path}: already in the current schema, left as it is", True))
    return outcomes
