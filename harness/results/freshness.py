"""Is a result what the current code would give under its cell id? `vramlab check --fresh` computes each component
of a cell's behaviour fingerprint again on this machine (no GPU: the model file, the tokenizer, the kept token set,
the training data's token ids, each evaluation's data) and compares it with what the result recorded; a result
that differs in any is stale. A result from before fingerprints were recorded is judged on what it did record
(the GGUF file's sha256, the training data's fingerprint, a sliced vocabulary's count of protected tokens, the
evaluation data's sha256). Each component is computed once per (model source, settings it depends on) in a run.
Why it is so: docs/freshness.md."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.environment import git_state
from harness.results.freshness_file import (
    CellFreshness,
    Component,
    ComponentCheck,
    FreshnessRecord,
    Verdict,
    file_sha256,
    standing,
)
from harness.results.model import CellResult, EvaluationResult, EvaluationStatus, GitRecord, Status, now
from harness.results.store import ResultFileError, check, result_files, supersede
from harness.spec.fingerprint_here import CannotTell, Current
from harness.spec.matrix import MatrixError, matrix_name, matrix_path

MODEL, TOKENIZER, KEPT, TRAINING = "model file", "tokenizer", "kept token set", "training data"


def _short(digest: str | None) -> str | None:
    return digest[:12] if digest else None


def _compare(component: str, recorded: str | None, compute: Callable[[], str], said: Callable[[str], str]
             | None = None) -> ComponentCheck:
    """One component: not recorded, cannot be told here, the same, or different (what differs in words)."""
    if recorded is None:
        return ComponentCheck(component=component, state=Component.not_recorded)
    try:
        found = compute()
    except CannotTell as err:
        return ComponentCheck(component=component, state=Component.cannot_tell, recorded=recorded, detail=str(err))
    if found == recorded:
        return ComponentCheck(component=component, state=Component.same, recorded=recorded, now=found)
    detail = said(found) if said else f"{_short(found)} now, {_short(recorded)} recorded"
    return ComponentCheck(component=component, state=Component.differs, recorded=recorded, now=found, detail=detail)


def _tokenizer_check(result: CellResult, current: Current) -> ComponentCheck:
    fingerprint, settings = result.fingerprint, result.config
    if fingerprint is not None:
        def said(_: str) -> str:
            _, size, added = current.tokenizer_digest(settings)
            return (f"{size:,} tokens, {added} added now; {fingerprint.tokenizer_tokens:,} tokens, "
                    f"{fingerprint.added_tokens} added recorded")

        return _compare(TOKENIZER, fingerprint.tokenizer, lambda: current.tokenizer_digest(settings)[0], said)
    # an older result: a sliced vocabulary recorded how many special, added and byte tokens the tokenizer had
    protected = (result.records.get("vocabulary") or {}).get("protected_tokens")
    if protected is None or settings.get("vocabulary", "native") == "native":
        return ComponentCheck(component=TOKENIZER, state=Component.not_recorded)
    check = _compare(TOKENIZER, str(protected), lambda: str(len(current.kept(settings)[1])),
                     lambda found: f"{found} special, added and byte tokens now, {protected} recorded")
    return check.model_copy(update={"detail": check.detail or "special, added and byte tokens: the count only"}) \
        if check.state is Component.same else check


def _kept_check(result: CellResult, current: Current) -> ComponentCheck | None:
    settings = result.config
    if settings.get("vocabulary", "native") == "native":
        return None
    recorded = result.fingerprint.kept_tokens if result.fingerprint else None
    return _compare(KEPT, recorded, lambda: current.kept_digest(settings))


def _evaluation_checks(result: CellResult, folder: Path, current: Current, matrix: str) -> list[ComponentCheck]:
    checks = []
    for path in result_files(folder / "evaluations" / result.cell_id):
        component = f"evaluation data ({path.stem})"
        try:
            evaluation = check(path)
        except ResultFileError as err:  # `vramlab check` names the damage; here it only leaves the data untold
            checks.append(ComponentCheck(component=component, state=Component.cannot_tell, detail=str(err)[:300]))
            continue
        if not isinstance(evaluation, EvaluationResult) or evaluation.status is not EvaluationStatus.ok:
            continue
        config = evaluation.task_config
        if not current.project_task(evaluation.task) or config.get("source") != "vramlab":
            checks.append(ComponentCheck(component=component, state=Component.cannot_tell,
                                         detail="lm-eval owns the data of this task"))
            continue
        try:
            parameters, _ = current.evaluation_data(matrix, result.config, evaluation.task)
        except CannotTell as err:
            checks.append(ComponentCheck(component=component, state=Component.cannot_tell, detail=str(err)))
            continue
        if config.get("parameters") is not None and config["parameters"] != parameters:
            checks.append(ComponentCheck(component=component, state=Component.differs,
                                         recorded=json.dumps(config["parameters"], sort_keys=True),
                                         now=json.dumps(parameters, sort_keys=True),
                                         detail="the matrix asks for other task parameters now"))
            continue
        checks.append(_compare(component, config.get("data_sha256"), _data_digest(current, matrix, result.config,
                                                                                  evaluation.task)))
    return checks


def _data_digest(current: Current, matrix: str, settings: dict[str, Any], task: str) -> Callable[[], str]:
    return lambda: current.evaluation_data(matrix, settings, task)[1]


def judge(result: CellResult, path: Path, current: Current, matrix: str | None = None) -> CellFreshness:
    """One cell result against what the current code gives; `matrix` the matrix file whose `evaluation:` section
    says what its evaluation data is (default: the result's matrix, by name)."""
    common: dict[str, Any] = {"cell_id": result.cell_id, "name": result.name, "result_sha256": file_sha256(path),
              "fingerprint_recorded": result.fingerprint is not None}
    if result.status is not Status.ok:
        return CellFreshness(**common, verdict=Verdict.not_judged)
    fingerprint, settings = result.fingerprint, result.config
    if fingerprint is not None and fingerprint.version != current.version:
        why = f"fingerprint version {fingerprint.version}; this vramlab computes version {current.version}"
        digests = [ComponentCheck(component=c, state=Component.cannot_tell, detail=why)
                   for c in (MODEL, TOKENIZER, *([KEPT] if fingerprint.kept_tokens else []))]
    else:
        model = fingerprint.model if fingerprint else (result.model.gguf_sha256 if result.model else None)
        digests = [_compare(MODEL, model, lambda: current.model(settings)), _tokenizer_check(result, current),
                   *filter(None, [_kept_check(result, current)])]
    data = fingerprint.training_data if fingerprint else (result.data or {}).get("fingerprint")
    components = [*digests, _compare(TRAINING, data, lambda: current.training(settings).fingerprint),
                  *_evaluation_checks(result, path.parent, current, matrix or result.matrix)]
    states = {c.state for c in components}
    verdict = Verdict.stale if Component.differs in states else \
        Verdict.fresh if states == {Component.same} else Verdict.unknown
    return CellFreshness(**common, verdict=verdict, components=components)


def matrix_results(folder: Path) -> tuple[str, list[tuple[Path, CellResult]]]:
    """The matrix of a results folder and its cell results (a damaged file is `vramlab check`'s to name). The folder
    is one matrix's, named after it: the aggregate reads a matrix's freshness.json from <results-dir>/<matrix>/, so a
    record written in a folder of another name (or of no matrix's results) would judge nothing a report reads."""
    results = []
    for path in result_files(folder):  # the cell results: not its reproductions, probes or set-aside files
        try:
            result = check(path)
        except ResultFileError:
            continue  # damaged: `vramlab check` names it, and it has no behaviour to judge
        if isinstance(result, CellResult):
            results.append((path, result))
    matrices = sorted({r.matrix for _, r in results})
    if not matrices:
        raise ResultFileError(f"{folder}: holds no cell result of a matrix (a benchmark's tables, probes or damaged "
                              "files are not judged), so --fresh has nothing to judge; give a matrix's results folder "
                              "(results/<matrix>)")
    if len(matrices) > 1:
        raise ResultFileError(f"{folder}: holds results of {len(matrices)} matrices ({', '.join(matrices)}); check "
                              "one matrix's results folder at a time")
    named = Path(folder).resolve().name
    if named != matrices[0]:
        raise ResultFileError(f"{folder}: its results are of the matrix {matrices[0]!r}, but the folder is named "
                              f"{named!r}; `vramlab aggregate {matrices[0]}` reads the freshness record in "
                              f"<results-dir>/{matrices[0]}/ only, so check that folder (results/{matrices[0]}), or "
                              f"name this one {matrices[0]}")
    return matrices[0], results


def check_folder(folder: Path, matrix: str | None = None, current: Current | None = None,
                 progress: Callable[[CellFreshness], None] | None = None) -> FreshnessRecord:
    """Every cell result in a matrix's results folder, judged (a damaged file is `vramlab check`'s to name);
    `matrix` as judge takes it."""
    folder = Path(folder)
    name, results = matrix_results(folder)
    if matrix is not None and matrix_name(matrix_path(matrix)) != name:
        raise MatrixError(f"--matrix {matrix}: the results in {folder} are of the matrix {name!r}, not of "
                          f"{matrix_name(matrix_path(matrix))!r}")
    current = current or Current()
    cells = []
    for path, result in results:
        cells.append(judge(result, path, current, matrix))
        if progress is not None:
            progress(cells[-1])
    return FreshnessRecord(matrix=name, checked_at=now(),
                           checked_with=GitRecord.model_validate(git_state()), fingerprint_version=current.version,
                           host=socket.gethostname(), cells=cells)


def supersede_stale(folder: Path, record: FreshnessRecord) -> list[tuple[Path, Path]]:
    """Move each stale cell's result and its evaluations to results/superseded/<matrix>/ (never deleted), so that
    Snakemake runs the cell again; where a tokenizer differs, the untrained baselines' cache goes too (its key
    names the model file, not the tokenizer). Returns each (file, where it went)."""
    folder = Path(folder)
    moved = []
    stale = standing_stale(record, folder)
    for cell in stale:
        for path in [folder / f"{cell.cell_id}.json", *result_files(folder / "evaluations" / cell.cell_id)]:
            moved.append((path, supersede(path, record.matrix)))
    if any(c.component == TOKENIZER for cell in stale for c in cell.stale_components()):
        moved += [(path, supersede(path, record.matrix))
                  for path in result_files(folder / "evaluations" / "baselines")]
    return moved


def standing_stale(record: FreshnessRecord, folder: Path) -> list[CellFreshness]:
    """The stale verdicts of the record on the result files that are there now."""
    return [cell for cell in standing(record, folder).values() if cell.verdict is Verdict.stale]
