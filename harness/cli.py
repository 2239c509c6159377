"""`vramlab` (also `python -m harness`): the commands the Snakefile calls, usable by hand too."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from harness import bytecode, environment_variables
from harness.cells import Cell
from harness.console import console_stream
from harness.errors import UsageError, one_line
from harness.estimate.arguments import check_estimate_arguments
from harness.gguf_file import open_gguf
from harness.log_file import log_file_problem
from harness.matrix import (
    MATRIX_NAME,
    MatrixError,
    check_cell,
    expand,
    find_cell,
    matrix_identity,
    matrix_options,
    matrix_path,
)
from harness.path_problems import explain_os_error
from harness.results import ResultFileError, adapter_folder, result_path
from harness.settings import SETTINGS
from harness.workload.userdata import DataError


def _cmd_validate(args: argparse.Namespace) -> int:
    cells = expand(args.matrix)
    skipped = [c for c in cells if c.conflict]
    print(f"{args.matrix}: {len(cells)} cells, {len(skipped)} skipped by declared conflicts")
    return 0


def _cmd_cells(args: argparse.Namespace) -> int:
    for cell in expand(args.matrix):
        if args.json:
            print(json.dumps(cell.as_dict(), sort_keys=True))
        else:
            note = f"  [skipped: {cell.conflict.name}]" if cell.conflict else ""
            print(f"{cell.cell_id}  {cell.name}{note}")
    return 0


def _cmd_settings(args: argparse.Namespace) -> int:
    from harness.settings import table

    print(table())
    return 0


def _estimated_cells(args: argparse.Namespace) -> list[Cell]:
    """The matrix's cells, or the one cell that --set describes (over the defaults)."""
    import yaml

    from harness.matrix import expand_spec

    if args.matrix and args.set:
        raise MatrixError("estimate: give a matrix or --set settings of one cell, not both")
    if args.matrix:
        cells = expand(args.matrix)
        return [c for c in cells if c.name == args.cell or c.cell_id == args.cell] if args.cell else cells
    if not args.set:
        raise MatrixError("estimate: give a matrix (e.g. seed-16gb) or one cell's settings with --set KEY=VALUE")
    settings: dict = {"name": "cell"}
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep:
            raise MatrixError(f"--set {pair!r}: write it as KEY=VALUE (e.g. --set context=32768)")
        settings[key.strip()] = yaml.safe_load(value)
    return expand_spec("estimate", {"design": "list", "cells": [settings]}, source="--set")


def _cmd_estimate(args: argparse.Namespace) -> int:
    from harness.estimate.table import as_json, cell_estimate, render

    check_estimate_arguments(args.chart, args.results_dir, args.calibrate, args.set)
    if args.calibrate:
        from harness.estimate.calibration import rows, table

        sources = [Path(d) for d in args.calibrate]
        print(table(rows(sources), sources))
        return 0
    cells = _estimated_cells(args)
    if not cells:
        raise MatrixError(f"{args.matrix} has no cell named or with id {args.cell!r}")
    estimated = []
    for cell in cells:
        est, why_not = cell_estimate(cell)
        print(json.dumps(as_json(cell, est, why_not), sort_keys=True) if args.json else render(cell, est, why_not))
        if est is not None:
            estimated.append((cell, est))
    if args.chart and estimated:
        from harness.estimate.chart import components_chart

        print(components_chart(estimated, Path(args.results_dir), Path(args.chart)), file=sys.stderr)
    return 0


def _cell_and_paths(args: argparse.Namespace) -> tuple[Cell, Path, Path | None]:
    cell = find_cell(args.matrix, args.cell)
    if args.context is not None:
        from harness.ceiling import probe_cell
        from harness.settings import SETTINGS

        problem = SETTINGS["context"].check(args.context)
        if problem:
            raise MatrixError(f"--context: {problem}")
        cell = probe_cell(cell, args.context)
        check_cell(args.matrix, cell)  # as validate checks the matrix's cells: the context against the model
    out = Path(args.out) if args.out else result_path(Path(args.results_dir), cell.matrix, cell.cell_id)
    adapter = adapter_folder(out.parent.parent, cell.matrix, cell.cell_id) if args.keep_adapter else None
    return cell, out, adapter


def _cell_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matrix", required=True)
    p.add_argument("--cell", required=True, help="the cell id")
    p.add_argument("--out", help="result file (default results/<matrix>/<cell_id>.json)")
    p.add_argument("--results-dir", default="results")
    p.add_argument("--keep-adapter", action="store_true",
                   help="save the trained adapter under results/<matrix>/adapters/<cell_id>/ for evaluation")
    p.add_argument("--shared-device", action="store_true",
                   help="other cells run on the device at the same time: throughput is recorded as not measured")
    p.add_argument("--context", type=int, metavar="TOKENS",
                   help="the cell at another context, a cell of its own (a probe of `vramlab ceiling`)")
    p.add_argument("--memory-history", metavar="FILE",
                   help="record the allocator's history (CUDA): the snapshot to FILE, and what is alive at the "
                        "allocated peak, by the code that made it, to FILE.peak.json (harness/memory_history.py)")


def _out_problem(cell: Cell, out: Path, matrix: str) -> str | None:
    """--out names this cell's result file: a file named by the cell's id, so that no other file is ever taken for a
    damaged result and set aside, or written over; in no folder another matrix owns (its .matrix file)."""
    owner = next((p / ".matrix" for p in [out.parent, *out.parent.parents] if (p / ".matrix").is_file()), None)
    if owner is not None and owner.read_text().strip() != matrix_identity(matrix_path(matrix)):
        return (f"--out {out}: {owner.parent}/ holds the results of another matrix ({owner.read_text().strip()}); "
                f"give a path in this matrix's folder (e.g. {owner.parent.parent / cell.matrix / out.name})")
    if out.is_dir():
        return f"--out {out} is a folder; give the path of the result file (e.g. {out / (cell.cell_id + '.json')})"
    if out.name != f"{cell.cell_id}.json":
        return (f"--out {out}: a result file is named by its cell's id; give a path ending in {cell.cell_id}.json "
                f"(e.g. {out.parent / (cell.cell_id + '.json')})")
    return None


def _existing_result(cell: Cell, out: Path, force: bool, out_given: bool) -> tuple[str | None, Any]:
    """What stands in the way of measuring `cell` into `out`: a reason to stop (the result there is kept), or a
    damaged or stale file to set aside first (harness/results/existing.py), or neither. A result is replaced only
    by a newer measurement of the same cell, named with --out, on a machine that can measure it (or with
    --force); reads only."""
    from harness.results import read
    from harness.results.existing import review_cell
    from harness.supervise import cuda_present
    from harness.techniques import needs_cuda

    redo = review_cell(out, cell.cell_id, cell.settings)
    if redo is not None or not out.is_file() or force:
        return None, redo
    existing = read(out)
    env = existing.environment
    where = (env.gpu or env.cpu) if env else "another machine"
    if not out_given:
        return (f"{out} already holds the {existing.status.value} result of this cell from {where}; it is kept "
                "(delete the file to measure the cell again, give --out to measure it into another file, or "
                "--force to replace it)"), None
    if needs_cuda(cell.settings) and not cuda_present():
        return (f"{out} holds the {existing.status.value} result of this cell from {where}; this machine has no "
                "CUDA GPU, so here the cell could only be skipped: the result is kept (--force replaces it)"), None
    return None, None


def _cmd_run_cell(args: argparse.Namespace) -> int:
    """Every argument is checked before any file is touched; then, under the cell's lock, an existing result is
    kept, or set aside where it is damaged, and the cell is measured."""
    from harness.supervise import SupervisorError, time_limit

    cell, out, _ = _cell_and_paths(args)
    problem = _out_problem(cell, out, args.matrix)
    try:
        limit = time_limit(cell.settings, args.time_limit)
    except SupervisorError as err:
        problem = problem or str(err)
    if not problem and args.log:
        problem = log_file_problem(Path(args.log))
    given = getattr(args, "memory_history", None)
    if not problem and given and Path(given).is_dir():
        problem = f"--memory-history {given} is a folder; give the path of a file"
    problem = problem or _existing_result(cell, out, args.force, args.out is not None)[0]
    if problem:
        print(f"vramlab: {problem}", file=sys.stderr)
        return 2
    if getattr(args, "memory_history", None):
        from harness.memory_history import ENV

        os.environ[ENV] = str(Path(args.memory_history).resolve())  # the worker inherits it
    if args.warm_start:
        from harness import warm_start
        from harness.backends import name_for

        # not already in the spare that took this command (which checks all of the above again itself)
        if warm_start.SERVING is None and warm_start.applies_to(cell.settings):
            kinds = warm_start.kinds_for({name_for(c.settings) for c in expand(args.matrix)
                                          if warm_start.applies_to(c.settings)})
            code = warm_start.run_in_spare([a for a in args.argv if a != "--warm-start"], name_for(cell.settings),
                                           kinds)
            if code is not None:
                return code
            warm_start.launch_spares(kinds)  # for the next cells
    from harness.results.lock import result_lock

    def waiting(holder: str, lock: Path) -> None:
        print(f"vramlab: cell {cell.name} ({cell.cell_id}) is being measured by another run ({holder}; lock "
              f"{lock}); waiting for it to end, so that the cell is never measured twice at once", file=sys.stderr)

    with result_lock(out, waiting) as waited:
        if waited and out.is_file() and _existing_result(cell, out, False, False)[0]:
            print(f"vramlab: cell {cell.name} ({cell.cell_id}) was measured by the run this one waited for; its "
                  f"result {out} is kept", file=sys.stderr)
            return 0
        refusal, redo = _existing_result(cell, out, args.force, args.out is not None)
        if refusal:
            print(f"vramlab: {refusal}", file=sys.stderr)
            return 2
        if redo is not None:
            print(f"vramlab: {redo.reason}; moved to {redo.set_aside()}, and the cell is measured again",
                  file=sys.stderr)
        return _supervised(args, cell, out, limit)


def _supervised(args: argparse.Namespace, cell: Cell, out: Path, limit: float) -> int:
    from harness.supervise import supervise

    # the worker is given the resolved result file, so that both processes look at the same one
    worker_args = ["--matrix", args.matrix, "--cell", args.cell, "--out", str(out)]
    worker_args += ["--keep-adapter"] * args.keep_adapter + ["--shared-device"] * args.shared_device
    worker_args += ["--context", str(args.context)] if args.context is not None else []
    if args.log is None:
        logging.getLogger("vramlab").info("cell %s of %s: %s (time limit %g s)", cell.cell_id, cell.matrix,
                                          cell.name, limit)
        return supervise(cell, out, worker_args, limit)
    # a ceiling probe is no cell of the matrix: where the matrix stands says nothing about it
    ids = [c.cell_id for c in expand(args.matrix)] if args.context is None else None
    return _run_cell_quietly(ids, cell, out, worker_args, limit, Path(args.log))


def _run_cell_quietly(ids: list[str] | None, cell: Cell, out: Path, worker_args: list[str], limit: float,
                      log_file: Path) -> int:
    """The console gets where the matrix stands, one progress line for this cell and its outcome; the log file
    gets everything, the worker's output included."""
    from harness.console import send_to_log
    from harness.progress import StepLine, matrix_standing
    from harness.results import read
    from harness.supervise import supervise

    def standing() -> str:
        return matrix_standing(ids, out.parent) if ids is not None else "a ceiling probe"

    console = send_to_log(log_file)
    logging.getLogger("vramlab").info("cell %s of %s: %s (time limit %g s)", cell.cell_id, cell.matrix, cell.name,
                                      limit)
    console.write(f"vramlab: {standing()}; cell {cell.name} ({cell.cell_id}) starts, "
                  f"its log: {log_file}\n")
    line = StepLine(f"cell {cell.name}", console)
    code = supervise(cell, out, worker_args, limit, progress=line.update)
    try:
        result = read(out)
        outcome = result.status.value + (f": {result.reason}" if result.reason else "")
    except (OSError, ResultFileError):
        outcome = "no result (see its log)"
    line.close(f"vramlab: cell {cell.name}: {outcome[:300]}; {standing()}")
    return code


def _cmd_run_cell_worker(args: argparse.Namespace) -> int:
    from harness.run_cell import run
    from harness.supervise import worker

    with worker():
        cell, out, adapter = _cell_and_paths(args)
        run(cell, out, adapter, shared_device=args.shared_device,
            predicted_oom=matrix_options(args.matrix)["predicted_oom"])
    return 0


def _cmd_spare(args: argparse.Namespace) -> int:
    from harness.warm_start import serve

    return serve(args.kind, args.launcher)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from harness.evaluation.plan import evaluation_plan
    from harness.evaluation.stage import evaluate_cell

    if not args.task and not evaluation_plan(args.matrix).tasks:
        raise UsageError(f"{args.matrix} has no `evaluation:` section, so there is nothing to evaluate; add one "
                         "(tasks: [...]) or name a task with --task")
    if args.task:
        from harness.evaluation.names import unknown_task_problem
        from harness.evaluation.plan import TASK_NAME

        bad = next((t for t in args.task if not TASK_NAME.match(t)), None)
        problem = f"{bad!r} is not a task name (letters, digits, '_', '.', '-')" if bad else \
            unknown_task_problem(args.task)
        if problem:
            raise UsageError(f"--task: {problem}")
    if args.log is None:
        evaluate_cell(args.matrix, args.cell, Path(args.results_dir), tasks=args.task or None)
        return 0
    from harness.console import send_to_log
    from harness.results import evaluation_path, read_evaluation

    cell = find_cell(args.matrix, args.cell)  # before the log file is opened: a bad argument touches no file
    tasks = args.task or evaluation_plan(args.matrix).task_names()
    console = send_to_log(Path(args.log))
    console.write(f"vramlab: evaluating cell {cell.name} on {len(tasks)} tasks, its log: {args.log}\n")
    evaluate_cell(args.matrix, args.cell, Path(args.results_dir), tasks=tasks)
    outcomes = []
    for task in tasks:
        try:
            path = evaluation_path(Path(args.results_dir), cell.matrix, cell.cell_id, task)
            outcomes.append(f"{task} {read_evaluation(path).status.value}")
        except (OSError, ResultFileError):
            outcomes.append(f"{task} missing")
    console.write(f"vramlab: evaluated cell {cell.name}: {', '.join(outcomes)}\n")
    return 0


def _cmd_ceiling(args: argparse.Namespace) -> int:
    from harness.ceiling import search_all
    from harness.ceiling_report import write_report
    from harness.matrix import ceiling_spec

    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give how many searches run at once, 1 or more")
    spec = ceiling_spec(args.matrix)
    if spec is None:
        print(f"vramlab: {args.matrix} has no `ceiling:` section (low, high, resolution) to search",
              file=sys.stderr)
        return 2
    cells = [c for c in expand(args.matrix) if not args.cell or c.cell_id in args.cell or c.name in args.cell]
    if not cells:
        print(f"vramlab: no cell of {args.matrix} is named {args.cell}", file=sys.stderr)
        return 2
    searches = search_all(args.matrix, cells, spec, Path(args.results_dir), args.jobs, warm=args.warm_start)
    for found in searches:
        print(f"vramlab: {found.cell.name}: {found.row()['answer']}", file=sys.stderr)
    paths = write_report(cells[0].matrix, searches, Path(args.reports_dir))
    print(paths[1].read_text())
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from harness.reproduce import MACHINE_LABEL, machine_label, write_comparison

    if args.machine is not None and not MACHINE_LABEL.match(args.machine):
        raise UsageError(f"--machine {args.machine!r}: a machine is named by its folder under "
                         "results/<matrix>/reproductions/: letters, digits, '-' and '_'")
    path = write_comparison(args.matrix, Path(args.results_dir), Path(args.reports_dir),
                            args.machine or machine_label())
    print(path.read_text().splitlines()[0])
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from harness.results import check

    paths = [p for given in args.paths for p in (sorted(Path(given).rglob("*.json")) if Path(given).is_dir()
                                                 else [Path(given)])]
    # in a results folder, not result files: set-aside damage, adapters, the untrained-baseline cache
    paths = [p for p in paths if not {"damaged", "adapters", "baselines"} & set(p.parts)]
    bad = 0
    for path in paths:
        try:
            check(path)
        except ResultFileError as err:
            bad += 1
            print(f"vramlab check: {err}", file=sys.stderr)
    print(f"{len(paths) - bad} of {len(paths)} result files valid")
    return 1 if bad or not paths else 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from harness.results.schemas import write_schemas

    for path in write_schemas(Path(args.out) if args.out else None):
        print(path)
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    from harness.results.store import migrate_files

    outcomes = migrate_files([Path(p) for p in args.paths])
    for _, said, fine in outcomes:
        print(said if fine else f"vramlab migrate: {said}", file=sys.stdout if fine else sys.stderr)
    return 0 if all(fine for _, _, fine in outcomes) else 1


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from harness.aggregate import aggregate

    aggregate(args.matrix, Path(args.results_dir), Path(args.reports_dir), partial=args.partial)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from harness.report import build_report

    if args.all:
        from harness.rebuild import rebuild_all

        if args.matrix_name:
            raise MatrixError("report --all rebuilds every committed matrix; give no matrix name with it")
        out = Path(args.out) if args.out else None
        for path in rebuild_all(Path(args.results_dir), Path(args.reports_dir), out):
            print(path)
        return 0
    if not args.matrix_name:
        raise MatrixError("report: give a matrix name (reports/<matrix>/), or --all for every committed matrix")
    if not MATRIX_NAME.match(args.matrix_name):
        raise UsageError(f"report: {args.matrix_name!r} is not a matrix name (the folder under --reports-dir, e.g. "
                         "smoke); give --reports-dir for reports kept elsewhere")
    build_report(Path(args.reports_dir) / args.matrix_name)
    return 0


def _cmd_prepare_model(args: argparse.Namespace) -> int:
    from harness.model_info import ModelSourceError, facts
    from harness.models import PackageModelError, resolve

    problem = SETTINGS["seed"].check(args.seed)
    if problem:
        raise UsageError(f"--seed: {problem}")
    try:
        known = facts(args.source)  # the source checked first: a preset, a readable GGUF file, a model folder
    except ModelSourceError as err:
        raise UsageError(str(err)) from None
    if known is None:
        raise UsageError(f"{args.source!r} is no arch:, gguf: or package: source and no local model folder: a Hugging "
                         "Face id is downloaded by transformers when a cell loads it, so there is nothing to prepare")
    try:
        print(resolve(args.source, seed=args.seed).path)
    except PackageModelError as err:
        raise UsageError(str(err)) from None
    return 0


def _cmd_tokenizer_check(args: argparse.Namespace) -> int:
    from harness.gguf_tokenizer import check_file
    from harness.models import PackageModelError, source_gguf

    try:
        file = source_gguf(args.source)
        open_gguf(file)  # a file that is no GGUF (or a truncated one) is named here, not in a traceback
    except (PackageModelError, FileNotFoundError, ValueError) as err:
        print(f"vramlab: {err}", file=sys.stderr)
        return 2
    findings = check_file(file)
    for finding in findings:
        print(finding.line())
    agree = sum(f.ok for f in findings)
    print(f"{args.source}: {agree} of {len(findings)} checks agree with the GGUF file")
    return 0 if agree == len(findings) else 1


def _cmd_default_matrix(args: argparse.Namespace) -> int:
    from harness.workflow import default_matrix

    name, why = default_matrix()
    print(f"{name}\t{why}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="vramlab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check a matrix file and count its cells")
    p.add_argument("matrix", help="a name under ablations/ or a path to a YAML file")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("cells", help="list a matrix's cells with their ids")
    p.add_argument("matrix")
    p.add_argument("--json", action="store_true", help="one JSON object per cell")
    p.set_defaults(func=_cmd_cells)

    p = sub.add_parser("settings", help="every setting a matrix may use: levels or type, default, owner, help")
    p.set_defaults(func=_cmd_settings)

    p = sub.add_parser("estimate", help="predicted device memory of a matrix's cells (or of one cell), by "
                                        "component, against each budget: no GPU, no weights")
    p.add_argument("matrix", nargs="?", help="a name under ablations/ or a path to a YAML file")
    p.add_argument("--cell", help="only this cell of the matrix (its name or id)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="one cell instead of a matrix: a setting over the defaults (repeatable; model may be any "
                        "architecture: arch:<preset>, a folder with config.json, a GGUF file)")
    p.add_argument("--json", action="store_true", help="one JSON object per cell")
    p.add_argument("--chart", metavar="PNG", help="also draw the cells' predicted components as stacked bars, with "
                                                  "the measured device peak where results/<matrix>/ has one")
    p.add_argument("--results-dir", default="results")
    p.add_argument("--calibrate", nargs="+", metavar="RESULTS_DIR",
                   help="instead: predicted against measured for every ok GPU cell in these result folders")
    p.set_defaults(func=_cmd_estimate)

    p = sub.add_parser("run-cell", help="run one cell in a fresh process under a wall-clock limit and write its "
                                        "result file, whatever happens to that process")
    _cell_arguments(p)
    p.add_argument("--force", action="store_true",
                   help="replace an existing result even where this machine cannot measure the cell")
    p.add_argument("--log", metavar="FILE.log", help="send everything the cell prints to FILE.log and show only "
                                                     "its progress on the console")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="end the cell after this long and record it as 'timeout' (default: $VRAMLAB_TIME_LIMIT, "
                        "else 1800 s + 30 s per training sequence)")
    p.add_argument("--warm-start", action="store_true",
                   help="hand the cell to a process that imported the libraries ahead while the previous cell ran, "
                        "and leave one for the next cell; the cell still runs in a process of its own that never "
                        "touched CUDA before it (harness/warm_start.py); its result records how it started")
    p.set_defaults(func=_cmd_run_cell)

    # the measuring process that run-cell starts and watches; no help: it is not meant to be called by hand
    p = sub.add_parser("run-cell-worker")
    _cell_arguments(p)
    p.set_defaults(func=_cmd_run_cell_worker)

    # a process that imports ahead for the next `run-cell --warm-start` (harness/warm_start.py); no help either
    p = sub.add_parser("spare")
    p.add_argument("--launcher", type=int, required=True, help="the run-cell process that started it")
    p.add_argument("--kind", choices=("any", "huggingface"), default="any")
    p.set_defaults(func=_cmd_spare)

    p = sub.add_parser("evaluate", help="evaluate a trained cell on the matrix's tasks (lm-eval)")
    p.add_argument("--matrix", required=True)
    p.add_argument("--cell", required=True, help="the cell id")
    p.add_argument("--task", action="append", help="only this task (repeatable); default: the matrix's tasks")
    p.add_argument("--log", metavar="FILE.log", help="send everything the evaluation prints to FILE.log and show "
                                                     "only a line per cell on the console")
    p.add_argument("--results-dir", default="results")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("ceiling", help="the longest context each cell of a matrix with a `ceiling:` section "
                                       "trains at within its budget, by bisection over real probes")
    p.add_argument("matrix")
    p.add_argument("--cell", action="append", help="only this cell (id or name; repeatable)")
    p.add_argument("--jobs", type=int, default=1,
                   help="searches at once, their probes sharing the device: peaks stay measurements, speed does "
                        "not (default 1)")
    p.add_argument("--results-dir", default="results")
    p.add_argument("--reports-dir", default="reports")
    p.add_argument("--warm-start", action="store_true", help="start each probe as `run-cell --warm-start` does")
    p.set_defaults(func=_cmd_ceiling)

    p = sub.add_parser("compare", help="compare this machine's reproduction of a matrix with its published results")
    p.add_argument("matrix")
    p.add_argument("--machine", help="the reproduction's folder under results/<matrix>/reproductions/ "
                                     "(default: this host)")
    p.add_argument("--results-dir", default="results")
    p.add_argument("--reports-dir", default="reports")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("check", help="validate result files (or folders of them); exit 1 naming each bad one")
    p.add_argument("paths", nargs="+")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("schema", help="write the JSON Schemas of result files, generated from the result model")
    p.add_argument("--out", help="folder (default: harness/results/schema)")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("migrate", help="rewrite result files of an older schema in the current one, in place")
    p.add_argument("paths", nargs="+")
    p.set_defaults(func=_cmd_migrate)

    p = sub.add_parser("aggregate", help="gather a matrix's result files into reports/<matrix>/cells.csv")
    p.add_argument("matrix")
    p.add_argument("--results-dir", default="results")
    p.add_argument("--reports-dir", default="reports")
    p.add_argument("--partial", action="store_true",
                   help="cells without a result file yet become 'pending' rows instead of an error")
    p.set_defaults(func=_cmd_aggregate)

    p = sub.add_parser("report", help="Markdown, LaTeX and charts from reports/<matrix>/cells.csv")
    p.add_argument("matrix_name", nargs="?")
    p.add_argument("--reports-dir", default="reports")
    p.add_argument("--all", action="store_true",
                   help="every matrix with a reports/<matrix>/cells.csv: aggregate its results, then its report")
    p.add_argument("--results-dir", default="results", help="with --all: the result files to aggregate")
    p.add_argument("--out", help="with --all: write the rebuilt reports here instead of over --reports-dir")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("prepare-model", help="build a model into the cache (arch: random weights, GGUF conversion)")
    p.add_argument("source")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_prepare_model)

    p = sub.add_parser("tokenizer-check", help="compare the tokenizer transformers builds from a GGUF model (package: "
                                               "or gguf:) with the file's own vocabulary; exit 1 where they differ")
    p.add_argument("source")
    p.set_defaults(func=_cmd_tokenizer_check)

    p = sub.add_parser("default-matrix", help="the matrix `snakemake` runs when none is given, and why")
    p.set_defaults(func=_cmd_default_matrix)
    # listed without run-cell-worker: argparse names every choice unless given the list to show
    sub.metavar = "{" + ",".join(name for name in sub.choices if name != "run-cell-worker") + "}"
    return top


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="[vramlab %(asctime)s] %(message)s", datefmt="%H:%M:%S")
    args = parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        environment_variables.check_all()  # before the bytecode cache goes under VRAMLAB_CACHE
        bytecode.enable()  # before the command imports torch and the training stack
        return args.func(args)
    except (MatrixError, ResultFileError, DataError, UsageError) as err:
        return _refuse(one_line(err))
    except OSError as err:  # a path given to a command that cannot be read or written (a file for a folder, ...)
        return _refuse(one_line(explain_os_error(err)))
    except KeyboardInterrupt:
        # every file is written whole or not at all (harness/atomic_files.py): nothing is left half-written
        return _refuse("interrupted; nothing was left half-written", code=130)


def _refuse(message: str, code: int = 2) -> int:
    """The error on the console, also when stdout and stderr were sent to a log file (and then in the log too)."""
    print(f"vramlab: {message}", file=console_stream())
    if console_stream() is not sys.stderr:
        print(f"vramlab: {message}", file=sys.stderr)
    return code

if __name__ == "__main__":
    sys.exit(main())
