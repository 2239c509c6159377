"""What each `vramlab` command does, once harness/cli.py has read its command line: the commands the Snakefile
calls, usable by hand too. Imported only after the arguments are read, so that `vramlab --help`, `--version` and a
usage error load none of the libraries these need."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd

from harness import matrix_commands
from harness.core.atomic_files import write_text_atomic
from harness.core.cache import check_cache_usable
from harness.core.console import send_to_log
from harness.core.environment import cuda_present
from harness.core.errors import UsageError
from harness.core.log_file import log_file_problem
from harness.core.path_problems import (
    FOLDER_ROOM,
    among_the_other_kind,
    broken_link,
    file_in_the_way,
    link_loop,
    linked_folder_problem,
    not_a_regular_file,
    published_folder,
    too_long,
    unexpanded_home,
    unmakeable,
    written_as_root,
)
from harness.core.suggest import did_you_mean
from harness.estimate import calibration
from harness.estimate.arguments import check_estimate_arguments
from harness.estimate.chart import components_chart
from harness.estimate.table import as_json, cell_estimate, render
from harness.evaluation.stage import evaluate_cell
from harness.process import cell_command, spare
from harness.process.ceiling import search_all
from harness.process.device_lease import cell_lease, slots_wanted
from harness.report import calibration as calibration_report
from harness.report import card_check
from harness.report.aggregate import aggregate
from harness.report.build import build_report
from harness.report.ceiling import settled_search
from harness.report.ceiling_report import write_report
from harness.report.claims import build as claims
from harness.report.export import export
from harness.report.readme import block_names, check_sources_committed, local_matrices, rewritten
from harness.report.rebuild import rebuild_all
from harness.report.reproduce import MACHINE_LABEL, machine_label, write_comparison
from harness.report.tables_agree import check_tables
from harness.results import ResultFileError, check, evaluation_path, read_evaluation, result_path
from harness.results.budget_spelling import respell_all
from harness.results.ceiling import ProbeMissing, Search
from harness.results.freshness import check_folder, matrix_results, standing_stale
from harness.results.freshness import supersede_stale as supersede_stale_results
from harness.results.freshness_file import Verdict, read_freshness, write_freshness
from harness.results.published_results import lost_published_problem, stray_files
from harness.results.reproduction_folders import reproduction_folder_problem
from harness.results.results_dir_mistakes import missing_results_dir, results_dir_mistake
from harness.results.schemas import SCHEMA_DIR, write_schemas
from harness.results.store import (
    FRESHNESS_FILE,
    evaluation_folders_problems,
    migrate_files,
    orphaned_evaluation,
    result_files,
)
from harness.run import worker
from harness.spec.ceiling import CeilingSpec
from harness.spec.cells import Cell
from harness.spec.matrix import (
    MATRIX_NAME,
    MatrixError,
    available_matrices,
    ceiling_spec,
    evaluation_plan,
    expand,
    expand_spec,
    find_cell,
    matrix_options,
    matrix_path,
    set_value,
    source_folder_problem,
)
from harness.spec.owners import check_reports_folder, check_results_folder
from harness.spec.settings import SETTINGS
from harness.stack.models.facts import ModelSourceError, facts
from harness.stack.models.gguf_file import GGUFFileError, open_gguf
from harness.stack.models.gguf_tokenizer import check_file
from harness.stack.models.model_folder import unloadable_folder
from harness.stack.models.sources import PackageModelError, resolve, source_gguf
from harness.stack.techniques import needs_cuda
from harness.tasks.names import unknown_task_problem
from harness.tasks.plan import TASK_NAME


def _cmd_readme(args: argparse.Namespace) -> int:
    path = Path(args.file)
    # Path drops a trailing slash: README.md/ would be read and rewritten as README.md, which it does not name
    if args.file.endswith(("/", os.sep)) or path.is_dir():
        raise UsageError(f"readme: --file {args.file} names a folder (it is one, or ends in a slash); give the README "
                         "file itself, such as --file README.md")
    if (kind := not_a_regular_file(path)) is not None:
        raise UsageError(f"readme: --file {args.file} is {kind}, not a regular file; give the README file itself, "
                         "such as --file README.md")
    if not path.is_file():
        raise UsageError(f"readme: no file {path}; run it in the repository's folder, or give --file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(f"readme: {path} is not UTF-8 text (byte {err.start} is 0x{err.object[err.start]:02x}); "
                         "save it as UTF-8") from None
    # a README saved with Windows line ends is read and written back with them: the block markers are matched
    # line by line, and with a \r before each line end no block matched, so stale blocks read as current
    crlf = "\r\n" in text
    text = text.replace("\r\n", "\n")
    names = block_names(text)
    if not names:
        raise UsageError(f"readme: {path} has no generated block (<!-- generated: NAME --> ... "
                         "<!-- end generated: NAME -->)")
    root = path.parent
    if not (root / "reports").is_dir() or not (root / "results").is_dir():  # the blocks are read from the two
        raise UsageError(f"readme: {path} has no reports/ and results/ beside it ({root.resolve()}/), which its "
                         "generated blocks are made from; give a README at the root of a checkout, such as "
                         "--file README.md")
    check_sources_committed(root)
    again, changed = rewritten(text, root)
    if "matrices" in names and (local := local_matrices()):
        print(f"vramlab readme: the matrices table leaves out {', '.join(f'{n} ({f})' for n, f in local.items())}: "
              "matrix files git does not track; commit one to list it", file=sys.stderr)
    if args.check:
        if changed:
            print(f"vramlab readme: {len(changed)} of the {len(names)} generated blocks of {path} differ from what "
                  f"the reports give ({', '.join(changed)}); run `vramlab readme` to rewrite them", file=sys.stderr)
            return 1
        print(f"{path}: its {len(names)} generated blocks are what the reports give")
        return 0
    if changed:
        write_text_atomic(path, again.replace("\n", "\r\n") if crlf else again)
    print(f"{path}: {len(changed)} of its {len(names)} generated blocks rewritten"
          + (f" ({', '.join(changed)})" if changed else ""))
    return 0


def _estimated_cells(args: argparse.Namespace) -> list[Cell]:
    """The matrix's cells, or the one cell that --set describes (over the defaults)."""
    if args.matrix and args.set:
        raise MatrixError("estimate: give a matrix or --set settings of one cell, not both")
    if args.matrix:
        cells = expand(args.matrix)
        return [c for c in cells if c.name == args.cell or c.cell_id == args.cell] if args.cell else cells
    if not args.set:
        raise MatrixError("estimate: give a matrix (e.g. seed-16gb) or one cell's settings with --set KEY=VALUE")
    cell_settings: dict = {"name": "cell"}
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep:
            raise MatrixError(f"--set {pair!r}: write it as KEY=VALUE (e.g. --set context=32768)")
        cell_settings[key.strip()] = set_value(key.strip(), value)
    return expand_spec("estimate", {"design": "list", "cells": [cell_settings]}, source="--set")


def _cmd_estimate(args: argparse.Namespace) -> int:
    check_estimate_arguments(args.chart, args.calibrate, args.set)
    if args.calibrate and (args.matrix or args.set or args.cell is not None):
        raise UsageError("estimate: --calibrate reads the results folders it names, over every cell in them; give it "
                         "without a matrix, --cell or --set")
    if args.cell is not None and not args.cell.strip():
        raise UsageError("estimate: --cell is empty; give a cell's id or name, or leave --cell out for every cell")
    if args.results_dir and not args.chart:
        raise UsageError(f"estimate: --results-dir {args.results_dir} is read only to draw the measured peaks beside "
                         "the estimate in --chart; give --chart too, or leave --results-dir out")
    if args.chart and args.results_dir and not Path(args.results_dir).is_dir():
        raise UsageError(f"estimate: --results-dir {args.results_dir} does not exist; give the folder of the results "
                         "to draw beside the estimate")
    if args.calibrate:
        sources = [Path(d) for d in args.calibrate]
        found = calibration.rows(sources)
        if not found:  # an empty table would read as a calibration that found nothing wrong
            raise UsageError(f"--calibrate: no ok GPU cell in {', '.join(map(str, sources))}; give results folders "
                             "that hold GPU measurements (e.g. results/seed-16gb)")
        print(calibration_report.table(found, sources))
        return 0
    cells = _estimated_cells(args)
    if not cells:
        raise MatrixError(f"{args.matrix} has no cell named or with id {args.cell!r}")
    estimated = []
    skip = bool(args.matrix) and matrix_options(args.matrix)["predicted_oom"] == "skip"
    for cell in cells:
        est, why_not = cell_estimate(cell)
        print(json.dumps(as_json(cell, est, why_not), sort_keys=True) if args.json
              else render(cell, est, why_not, skip=skip))
        if est is not None:
            estimated.append((cell, est))
    if args.chart and estimated:
        print(components_chart(estimated, Path(args.results_dir or "results"), Path(args.chart)), file=sys.stderr)
    return 0


def _cmd_spare(args: argparse.Namespace) -> int:
    problem = spare.launcher_problem(args.launcher)
    if problem:
        raise UsageError(f"spare: {problem}")
    return spare.serve(args.kind, args.launcher)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    if not args.task and not evaluation_plan(args.matrix).tasks:
        raise UsageError(f"{args.matrix} has no `evaluation:` section, so there is nothing to evaluate; add one "
                         "(tasks: [...]) or name a task with --task")
    if args.task:
        bad = next((t for t in args.task if not TASK_NAME.match(t)), None)
        problem = f"{bad!r} is not a task name (letters, digits, '_', '.', '-')" if bad else \
            unknown_task_problem(args.task)
        if problem:
            raise UsageError(f"--task: {problem}")
        twice = next((t for t, n in Counter(args.task).items() if n > 1), None)
        if twice:
            raise UsageError(f"--task {twice} is given more than once; give each task once")
    try:
        slots = slots_wanted(args.device_slots)
    except ValueError as err:
        raise UsageError(f"--device-slots: {err}") from None
    check_cache_usable()  # as before a cell: a cache that cannot be used would record an error of the evaluation
    cell = find_cell(args.matrix, args.cell)
    check_results_folder(Path(args.results_dir), cell.matrix, matrix_path(args.matrix))
    # a published evaluation deleted here would be made again as new (harness/results/published_results.py)
    tasks = args.task or evaluation_plan(args.matrix).task_names()
    lost = lost_published_problem(Path(args.results_dir) / cell.matrix,
                                  [f"evaluations/{cell.cell_id}/{task}.json" for task in tasks])
    if lost:
        raise UsageError(lost)
    if args.log and (problem := log_file_problem(Path(args.log))):  # said first: the log is the command's own output
        raise UsageError(problem)
    trained = result_path(Path(args.results_dir), cell.matrix, cell.cell_id)
    if not trained.exists():  # not an OS error: the cell is not trained there, and training comes first
        folder = "" if args.results_dir == "results" else f" --results-dir {args.results_dir}"
        raise UsageError(f"cell {cell.cell_id} ({cell.name}) has no result in {trained.parent}/: it was not trained "
                         f"there; train it first (vramlab run-cell --matrix {args.matrix} --cell {cell.cell_id}"
                         f"{folder} --keep-adapter) or give the --results-dir it was trained into")
    with _evaluation_lease(args, slots):
        return _evaluate(args)


@contextlib.contextmanager
def _evaluation_lease(args: argparse.Namespace, slots: int) -> Iterator[None]:
    """An evaluation on a GPU holds a device as a cell does (harness/process/device_lease.py); this process has not
    started CUDA yet, so naming the device in its own environment is enough."""
    with cell_lease(find_cell(args.matrix, args.cell).settings, slots) as lease:
        if lease is not None:
            os.environ.update(lease.env())
        yield


def _evaluate(args: argparse.Namespace) -> int:
    if args.log is None:
        evaluate_cell(args.matrix, args.cell, Path(args.results_dir), tasks=args.task or None)
        return 0

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


def _settled_searches(matrix: str, cells: list[Cell], spec: CeilingSpec, results_dir: Path) -> list[Search]:
    """The searches not asked for, where their kept probes settle them; one that needs a probe is left out."""
    settled = []
    for cell in cells:
        try:
            settled.append(settled_search(matrix, cell, spec, results_dir))
        except ProbeMissing:
            continue
    return settled


def _cmd_ceiling(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give how many searches run at once, 1 or more")
    check_cache_usable()  # once here, not in each probe's run-cell
    spec = ceiling_spec(args.matrix)
    if spec is None:
        print(f"vramlab: {args.matrix} has no `ceiling:` section (low, high, resolution) to search",
              file=sys.stderr)
        return 2
    every = expand(args.matrix)
    _own_folders(args.matrix, every[0].matrix, args)
    cells = [c for c in every if not args.cell or c.cell_id in args.cell or c.name in args.cell]
    if not cells:
        print(f"vramlab: no cell of {args.matrix} is named {args.cell}", file=sys.stderr)
        return 2
    if not cuda_present():  # a probe of a GPU cell here could only be skipped, and the search would end on nothing
        settled = {found.cell.cell_id for found in _settled_searches(args.matrix, cells, spec, Path(args.results_dir))}
        unsettled = [c for c in cells if needs_cuda(c.settings) and c.cell_id not in settled]
        if unsettled:
            raise UsageError(f"{len(unsettled)} of the searches asked for need probes on a CUDA GPU (first: "
                             f"{unsettled[0].name}) and this machine has none; run them on a machine with a GPU "
                             "(searches their kept probes settle are reported anywhere)")
    searches = search_all(args.matrix, cells, spec, Path(args.results_dir), args.jobs, warm=args.warm_start)
    for found in searches:
        print(f"vramlab: {found.cell.name}: {found.row()['answer']}", file=sys.stderr)
    # the report is the matrix's: the searches not asked for this time come from their kept probes, where settled
    searches += _settled_searches(args.matrix, [c for c in every if c not in cells], spec, Path(args.results_dir))
    order = {c.cell_id: i for i, c in enumerate(every)}
    searches.sort(key=lambda found: order[found.cell.cell_id])
    paths = write_report(cells[0].matrix, searches, Path(args.reports_dir))
    print(paths[1].read_text())
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    # claims/ under --reports-dir is written as a matrix's folder is (owner_problem judges those)
    linked = linked_folder_problem(Path(args.reports_dir), "claims", "reports")
    if linked is not None:
        raise UsageError(f"--reports-dir {args.reports_dir}: {linked}")
    paths = claims.write(Path(args.results_dir), Path(args.reports_dir))
    print(paths[1].read_text().split("\n\n")[2])
    return 0


def _machine(given: str | None, folder: str) -> str:
    """--machine, the folder name of a machine's results (`folder`, in words), or this host's; checked also where
    the command would not use it yet (a dry run), so that the real run is not the first to refuse it."""
    if given is not None and not MACHINE_LABEL.match(given):
        raise UsageError(f"--machine {given[:80]!r}: a machine is named by its folder under {folder}: letters, "
                         "digits, '-' and '_', starting with a letter or digit")
    return given or machine_label()


def _cmd_compare(args: argparse.Namespace) -> int:
    machine = _machine(args.machine, "results/<matrix>/reproductions/")
    name = expand(args.matrix)[0].matrix
    missing = missing_results_dir(Path(args.results_dir), args.results_dir, f"{name} and its reproductions")
    if missing:  # else it would be told to hold no reproduction, and a run advised into a folder mistyped
        raise UsageError(missing)
    _own_folders(args.matrix, name, args)
    problem = reproduction_folder_problem(Path(args.results_dir), name, machine)
    if problem:  # before any file there is read as a reproduction, and a move of it advised
        raise UsageError(problem)
    path = write_comparison(args.matrix, Path(args.results_dir), Path(args.reports_dir), machine)
    print(path.read_text().splitlines()[0])
    return 0


def _own_folders(matrix: str, name: str, args: argparse.Namespace) -> None:
    """The results and reports folders a command writes into are this matrix file's, never another's of the same
    name (harness/spec/owners.py)."""
    check_results_folder(Path(args.results_dir), name, matrix_path(matrix))
    check_reports_folder(Path(args.reports_dir), name, matrix_path(matrix))


def _cmd_card_check(args: argparse.Namespace) -> int:
    results_dir = Path(args.results_dir)
    folder = "results/card-check/reproductions/"
    checks = card_check.plan(results_dir)
    if args.dry_run:
        _machine(args.machine, folder)
        print("\n".join(card_check.described(checks)))
        return 0
    card = card_check.sixteen_gb_card()  # a machine without a 16 GB card is told so before anything runs
    machine = _machine(args.machine, folder)
    print(f"card-check on {card} ({machine}):\n" + "\n".join(card_check.described(checks)[1:]))
    card_check.run(checks, results_dir, machine)
    path = card_check.write(checks, results_dir, Path(args.reports_dir), machine)
    print(f"{path}: " + path.read_text().splitlines()[2])
    return 0


def _given_results(given: list[str]) -> list[Path]:
    """The files named, and under each folder named every file a result's name could have (hidden ones aside: a
    result's temporary file mid-write), that is no set-aside damage, adapter or untrained-baseline cache; each once.
    A result named .JSON (or .Json) is among them, so that check names it where no reader would find it."""
    paths = [p for g in given for p in (result_files(Path(g), "**/*.[jJ][sS][oO][nN]", files_only=False)
                                        if Path(g).is_dir() else [Path(g)])]
    kept = [Path(p) for p in _once(list(map(str, paths)))]
    return [p for p in kept if not {"damaged", "adapters", "baselines"} & set(p.parts)]


def _once(given: list[str]) -> list[str]:
    """Each path as first given, once: a folder given twice (smoke and ./smoke/), or a file and its folder, is read
    and counted once."""
    first: dict[str, str] = {}
    for path in given:
        first.setdefault(os.path.abspath(path), path)
    return list(first.values())


def _no_result_here(path: Path, said: str) -> bool:
    """A benchmark script's own table, or what --memory-history keeps of a peak: JSON in a results folder, but no
    result, which a folder's check or migration passes over (and counts)."""
    return ("benchmarks" in path.parts or path.name.endswith(".peak.json")) and "no schema_version" in said


def _fresh_folders(args: argparse.Namespace) -> list[Path]:
    """--fresh judges a matrix's results folder whole: each path given must be one (it holds cell results)."""
    if args.supersede_stale and not args.fresh:
        raise UsageError("check: --supersede-stale moves the results --fresh finds stale; give --fresh with it")
    if args.matrix is not None and not args.fresh:
        raise UsageError("check: --matrix says which matrix file --fresh reads the evaluation of; give --fresh with it")
    if not args.fresh:
        return []
    for given in map(Path, args.paths):
        if not given.is_dir():
            raise UsageError(f"check --fresh: {given} is not a folder; give a matrix's results folder (results/<matrix>"
                             "), whose cell results are judged together and its freshness.json written there")
        if not result_files(given):
            raise UsageError(f"check --fresh: {given} holds no cell result file; give a matrix's results folder "
                             "(results/<matrix>)")
        matrix_results(given)  # one matrix's, in a folder of its name: else a record there would judge nothing read
    return [Path(p) for p in args.paths]


def _check_freshness(folder: Path, supersede_stale: bool, matrix: str | None) -> int:
    """Judge a matrix's results against what the current code gives, one line a cell; write freshness.json."""
    record = check_folder(folder, matrix, progress=lambda cell: print(f"vramlab check: {cell.line()}", flush=True))
    new = not (folder / FRESHNESS_FILE).exists()
    path = write_freshness(folder, record)
    counts = Counter(cell.verdict.value for cell in record.cells)
    # a new file among the published results shows in `git status`: said with what to do with it
    published = (f"; a new file in the published {folder}/: commit it with the results for the published report to "
                 f"carry it, or delete it to leave the folder as it was"
                 if new and published_folder(folder) is not None else "")
    print(f"{record.matrix}: {len(record.cells)} cell results: "
          + ", ".join(f"{counts[v.value]} {v.value}" for v in Verdict) + f"; written to {path} (`vramlab aggregate "
          f"{record.matrix}` and `vramlab report {record.matrix}` carry it into the report){published}")
    stale = standing_stale(record, folder)
    if supersede_stale:
        for source, target in supersede_stale_results(folder, record):
            print(f"vramlab check: moved {source} to {target}")
        if stale:
            print(f"{record.matrix}: {len(stale)} stale results moved to the superseded folder; `snakemake --config "
                  f"matrix={record.matrix}` measures their cells again")
        return 0
    return 1 if stale else 0


def _check_one(path: Path) -> None:
    """One file `check` reads: a freshness record, or a result (an evaluation with its cell's result beside it)."""
    if path.name == FRESHNESS_FILE:
        read_freshness(path.parent)
        return
    orphan = orphaned_evaluation(path, check(path))
    if orphan:
        raise ResultFileError(orphan)


def _cmd_check(args: argparse.Namespace) -> int:
    args.paths = _once(args.paths)
    fresh = _fresh_folders(args)  # before anything is read: a bad argument checks nothing
    bad, checked, other = 0, 0, 0
    for path in _given_results(args.paths):
        try:
            _check_one(path)
        except ResultFileError as err:
            if Path(path) not in map(Path, args.paths) and _no_result_here(path, str(err)):
                other += 1
                continue
            bad += 1
            print(f"vramlab check: {err}", file=sys.stderr)
        checked += 1
    if not checked:  # nothing named is a result: said, where the count alone would not say why it fails
        print(f"vramlab check: no result file in {', '.join(args.paths)}", file=sys.stderr)
    strays = list(dict.fromkeys(line for given in args.paths if Path(given).is_dir() for line in
                                [*stray_files(Path(given)), *evaluation_folders_problems(Path(given))]))
    for line in strays:
        print(f"vramlab check: {line}", file=sys.stderr)
    print(f"{checked - bad} of {checked} result files valid"
          + (f" ({other} JSON files are a benchmark's own tables or memory-history peaks, not results: not checked)"
             if other else "")
          + (f"; {len(strays)} stray files or folders among the published results (named above)" if strays else ""))
    stale = [_check_freshness(folder, args.supersede_stale, args.matrix) for folder in fresh]
    stale += [_recorded_stale(Path(given)) for given in args.paths if Path(given) not in fresh]
    return 1 if bad or not checked or strays or any(stale) else 0


def _recorded_stale(folder: Path) -> int:
    """Without --fresh, the stale results the folder's freshness record (a check --fresh before) names, where the
    record still judges the file there: each one line, and the count."""
    record = read_freshness(folder) if (folder / FRESHNESS_FILE).is_file() else None
    if record is None:
        return 0
    stale = standing_stale(record, folder)
    for cell in stale:
        print(f"vramlab check: {cell.line()} (by {folder / FRESHNESS_FILE}, {record.checked_at})", file=sys.stderr)
    return len(stale)


def _cmd_schema(args: argparse.Namespace) -> int:
    for path in write_schemas(Path(args.out) if args.out else None):
        print(path)
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    outcomes = [(path, said, fine) for path, said, fine in migrate_files(_given_results(args.paths))
                if fine or path in map(Path, args.paths) or not _no_result_here(path, said)]
    if not outcomes:  # as check says it: a folder given with nothing to migrate is no success to keep quiet about
        print(f"vramlab migrate: no result file in {', '.join(args.paths)}", file=sys.stderr)
        return 1
    for _, said, fine in outcomes:
        print(said if fine else f"vramlab migrate: {said}", file=sys.stdout if fine else sys.stderr)
    # a budget written in another spelling than its canonical one had another cell id (harness/core/budget.py)
    kept = 0
    for respelled in respell_all([path for path, _, fine in outcomes if fine and path.is_file()]):
        kept += respelled.new is None
        print(respelled.describe() if respelled.new else f"vramlab migrate: {respelled.describe()}",
              file=sys.stdout if respelled.new else sys.stderr)
    return 0 if all(fine for _, _, fine in outcomes) and not kept else 1


def _cmd_aggregate(args: argparse.Namespace) -> int:
    folder = Path(args.reports_dir) / Path(args.matrix).stem
    marked = written_as_root(folder)
    # root passes access(2) where the kernel still refuses a folder (/proc): said before the note that root writes
    if marked is not None and not folder.is_dir() and (why := unmakeable(folder)) is not None:
        raise UsageError(f"--reports-dir {args.reports_dir}: the folder {folder} cannot be made in {marked} ({why}); "
                         "give a folder that can be")
    if marked is not None:
        print(f"vramlab: {marked} is marked read-only (no write permission), but this process runs as root, which "
              "may write it all the same: its reports are made again there from the result files", file=sys.stderr)
    mistake = results_dir_mistake(Path(args.results_dir), Path(args.matrix).stem, args.results_dir)
    if mistake:  # else every cell would be pending, which reads as a matrix not run
        raise UsageError(f"aggregate: {mistake.replace('results_dir', '--results-dir', 1)}")
    aggregate(args.matrix, Path(args.results_dir), Path(args.reports_dir), partial=args.partial)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    if args.results_dir is not None and not Path(args.results_dir).is_dir():  # else nothing is checked or rebuilt
        raise UsageError(f"report: --results-dir {args.results_dir} does not exist; give the folder of the result "
                         "files (default: results)")
    if args.all:
        if args.matrix_name:
            raise MatrixError("report --all rebuilds every committed matrix; give no matrix name with it")
        out = Path(args.out) if args.out else None
        if out is not None and out.resolve() == Path(args.reports_dir).resolve():  # --out is for sparing that folder
            raise UsageError(f"report --all: --out {args.out} is the reports folder itself (--reports-dir "
                             f"{args.reports_dir}), which --out is to spare; leave --out out to rebuild the reports "
                             "in place, or give a folder of its own")
        skipped: list[str] = []
        for path in rebuild_all(Path(args.results_dir or "results"), Path(args.reports_dir), out, skipped=skipped):
            print(path)
        for line in skipped:  # one report that cannot be rebuilt stops none of the others
            print(f"vramlab: {line}", file=sys.stderr)
        return 2 if skipped else 0
    if args.out:
        raise UsageError("report: --out go with --all (a rebuild from the result files); a report of one matrix is "
                         "made from its reports/<matrix>/cells.csv, in place")
    if not args.matrix_name:
        raise MatrixError("report: give a matrix name (reports/<matrix>/), or --all for every committed matrix")
    if not MATRIX_NAME.match(args.matrix_name):
        raise UsageError(f"report: {args.matrix_name!r} is not a matrix name (the folder under --reports-dir, e.g. "
                         "smoke); give --reports-dir for reports kept elsewhere")
    folder = Path(args.reports_dir) / args.matrix_name
    # the report is written in place: through a link, into the folder the link names
    linked = linked_folder_problem(Path(args.reports_dir), args.matrix_name, "reports")
    if linked is not None:
        raise UsageError(f"report: --reports-dir {args.reports_dir}: {linked}")
    known = available_matrices()
    if not folder.is_dir() and args.matrix_name not in known and not Path(f"{args.matrix_name}.yaml").is_file():
        raise UsageError(f"report: no matrix named {args.matrix_name!r}"
                         f"{did_you_mean(args.matrix_name, known)} (known: {', '.join(known)}), and no report "
                         f"folder {folder}/")
    _tables_are_the_matrix(folder, args.matrix_name)
    # the checkout's reports are checked against its results; reports kept elsewhere, against --results-dir if given
    results_dir = args.results_dir or ("results" if Path(args.reports_dir).resolve() == Path("reports").resolve()
                                       else None)
    if results_dir is not None:
        check_tables(args.matrix_name, Path(results_dir), Path(args.reports_dir))
    build_report(folder)
    return 0


def _tables_are_the_matrix(folder: Path, name: str) -> None:
    """A report is titled by its folder: tables of another matrix's cells there (copied, or aggregated under another
    --reports-dir) would be reported under this matrix's name."""
    cells_csv = folder / "cells.csv"
    if not cells_csv.is_file() or not matrix_path(name).is_file():
        return
    try:
        ids = set(pd.read_csv(cells_csv, dtype={"cell_id": str}, usecols=["cell_id"])["cell_id"])
    except (ValueError, OSError, pd.errors.ParserError):
        return  # the report's own reader says what is wrong with the table
    # an id that is no cell id at all is the table's damage, which the report's reader names
    foreign = sorted(i for i in ids - {c.cell_id for c in expand(name, check_model=False)}
                     if isinstance(i, str) and re.fullmatch(r"[0-9a-f]{12}", i))
    if foreign:
        raise UsageError(f"{cells_csv}: {len(foreign)} of its {len(ids)} cells (first: {foreign[0]}) are no cells of "
                         f"the matrix {name}, so a report of them titled {name} would be another matrix's; aggregate "
                         f"{name} again (`vramlab aggregate {name}`)")


def _cmd_export(args: argparse.Namespace) -> int:
    if importlib.util.find_spec(args.to) is None:
        raise UsageError(f"export --to {args.to}: {args.to} is not installed here; pip install 'vramlab[{args.to}]'")
    out = args.out or str(Path("exports") / args.to)
    print(export(args.matrix, args.to, out, Path(args.results_dir), Path(args.reports_dir)))
    return 0


def _cmd_prepare_model(args: argparse.Namespace) -> int:
    problem = SETTINGS["seed"].check(args.seed)
    if problem:
        raise UsageError(f"--seed: {problem}")
    try:
        known = facts(args.source)  # the source checked first: a preset, a readable GGUF file, a model folder
    except ModelSourceError as err:
        raise UsageError(str(err)) from None
    problem = unloadable_folder(args.source)
    if problem:
        raise UsageError(problem)
    if known is None:
        raise UsageError(f"{args.source!r} is no arch:, gguf: or package: source and no local model folder: a Hugging "
                         "Face id is downloaded by transformers when a cell loads it, so there is nothing to prepare")
    try:
        print(resolve(args.source, seed=args.seed).path)
    except PackageModelError as err:
        raise UsageError(str(err)) from None
    return 0


def _cmd_tokenizer_check(args: argparse.Namespace) -> int:
    try:
        file = source_gguf(args.source)
        open_gguf(file)  # a file that is no GGUF (or a truncated one) is named here, not in a traceback
    except (PackageModelError, FileNotFoundError, ValueError) as err:
        print(f"vramlab: {err}", file=sys.stderr)
        return 2
    try:
        findings = check_file(file)
    except GGUFFileError as err:
        print(f"vramlab: {err}", file=sys.stderr)
        return 2
    for finding in findings:
        print(finding.line())
    agree = sum(f.ok for f in findings)
    print(f"{args.source}: {agree} of {len(findings)} checks agree with the GGUF file")
    return 0 if agree == len(findings) else 1


PATH_OPTIONS = ("results_dir", "reports_dir", "out", "chart")


def _no_empty_paths(args: argparse.Namespace) -> None:
    """A path option given as '' (a quoting slip, an unset shell variable) names nothing: taken as its default or as
    this folder, it would write where the person did not say."""
    for option in PATH_OPTIONS:
        value = getattr(args, option, None)
        if isinstance(value, str) and not value.strip():
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} {value!r}: an empty path names no file or folder; give one, or leave {flag} "
                             "out for its default")


def _folder_arguments(args: argparse.Namespace) -> None:
    """--results-dir and --reports-dir name folders: a file there (or above) is refused before anything is read,
    which would otherwise be told as results missing under it."""
    _no_empty_paths(args)
    _no_unexpanded_home(args)
    for option in ("results_dir", "reports_dir"):
        value = getattr(args, option, None)
        if value is None:
            continue
        flag = "--" + option.replace("_", "-")
        if (long := too_long(Path(value), FOLDER_ROOM)) is not None:
            raise UsageError(f"{flag} {value[:80]}...: {long}; give a shorter folder")
        blocker = file_in_the_way(Path(value) / "x")
        if blocker is not None:
            raise UsageError(f"{flag} {value}: {blocker} is a file, not a folder; give a folder "
                             f"(e.g. {option.split('_')[0]})")
        if (broken := broken_link(Path(value))) is not None:  # else a traceback where it is resolved below
            raise UsageError(f"{flag} {value}: {broken}; give a folder (e.g. {option.split('_')[0]})")
        taken = source_folder_problem(Path(value))  # tables or results there would lie among the sources
        if taken:
            raise UsageError(f"{flag} {value}: {taken}; give a folder of its own")
        _not_published(flag, Path(value))
        if option == "reports_dir":
            _not_among_results(flag, value, "give the reports a folder of their own (default: reports)")
    out = getattr(args, "out", None)
    # an --out that is not a URI, through a link to nowhere: else the OS's bare "File exists" where it is made
    if isinstance(out, str) and out and "://" not in out and (broken := broken_link(Path(out))) is not None:
        raise UsageError(f"--out {out}: {broken}; give a folder that exists or can be made")
    if args.command == "report" and out and (taken := source_folder_problem(Path(out))):
        raise UsageError(f"--out {out}: {taken}; give a folder of its own")
    if args.command == "report" and out:
        _not_published("--out", Path(out))
    if args.command == "readme":
        if link_loop(Path(args.file)):  # else told as no file, or a traceback where it is resolved
            raise UsageError(f"readme: --file {args.file}: a symlink on its path loops (leads back to itself), so "
                             "there is no file to read; give the README file itself, such as --file README.md")
        _not_among_results("--file", args.file, "give the repository's README, such as --file README.md")


def _not_among_results(flag: str, value: str, remedy: str) -> None:
    """Reports (or a README) are never written into a checkout's published results/, at its top or deeper: a folder
    there reads as a matrix's results, and `check results` as invalid ones (t16-046, t16-052)."""
    problem = among_the_other_kind(Path(value), "reports")
    if problem:
        raise UsageError(f"{flag} {value}: {problem}; {remedy}")


def _not_published(flag: str, folder: Path) -> None:
    """A folder a command writes its own results or reports under is no folder of the published ones (results/<m>/,
    reports/<m>/): its files would be taken for theirs, and git would show them among them."""
    published = published_folder(folder)
    if published is not None:
        raise UsageError(f"{flag} {folder}: {folder} lies in {published}/, a folder of published results or reports; "
                         "give a folder of its own")


def _undecodable(text: str) -> bool:
    """Whether a command-line argument holds bytes that were no UTF-8 (Python keeps them as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _inside(path: Path, *folders: Path) -> bool:
    return any(path.resolve().is_relative_to(folder.resolve()) for folder in folders)


def _no_unexpanded_home(args: argparse.Namespace) -> None:
    """A path option that starts with a literal ~ (quoted, so the shell left it): taken as it is, it would write
    into a folder named ~ in the working folder, not the home folder meant."""
    for option in PATH_OPTIONS:
        value = getattr(args, option, None)
        if isinstance(value, str) and (problem := unexpanded_home(value)) is not None:
            raise UsageError(f"--{option.replace('_', '-')} {value}: {problem}")


def _output_arguments(args: argparse.Namespace) -> None:
    """Files a command writes where the user says never go among the result files, nor over a report's own files:
    those are replaced only by measuring or by `vramlab report`."""
    results = Path(getattr(args, "results_dir", None) or "results")
    out = getattr(args, "out", None)
    if args.command == "report" and out and _inside(Path(out), results):
        raise UsageError(f"--out {out} is inside the results folder {results}; give a folder of its own for the "
                         "rebuilt reports")
    if args.command == "report" and out:
        _not_among_results("--out", out, "give the rebuilt reports a folder of their own")
    if args.command == "schema" and out and _inside(Path(out), results, Path("reports")):
        raise UsageError(f"--out {out} is inside {results} or reports, which hold results and reports only; give "
                         "another folder (default: harness/results/schema)")
    if args.command == "export" and args.out and (_undecodable(args.out) or not args.out.isprintable()):
        shown = os.fsencode(args.out).decode("utf-8", "backslashreplace")
        raise UsageError(f"--out {shown}: the path holds bytes that are no UTF-8 text (or a "
                         "control character), which a tracker cannot name its runs by; give a path in plain text")
    if args.command == "export" and args.out and "://" in args.out and args.to != "mlflow":
        raise UsageError(f"--out {args.out}: a URI is for --to mlflow (a tracking server or database); {args.to} "
                         "writes its runs into a folder: give a folder")
    if args.command == "export" and args.out and "://" not in args.out:
        if _inside(Path(args.out), results, Path(args.reports_dir)):
            raise UsageError(f"--out {args.out} is inside {results} or {args.reports_dir}, which hold results and the "
                             "reports `vramlab report` writes; give a folder of its own for the tracker's runs")
        if taken := source_folder_problem(Path(args.out)):
            raise UsageError(f"--out {args.out}: {taken}; give a folder of its own")
    chart = getattr(args, "chart", None)
    if args.command == "estimate" and chart and _inside(Path(chart), results, Path("reports")):
        raise UsageError(f"--chart {chart} is inside {results} or reports, which hold results and the reports "
                         "`vramlab report` writes; give another file for the estimate's chart")
    if args.command == "estimate" and chart and (taken := source_folder_problem(Path(chart))):
        raise UsageError(f"--chart {chart}: {taken}; give another file")
    if args.command == "schema" and out and not _inside(Path(out), SCHEMA_DIR) and \
            (taken := source_folder_problem(Path(out))):
        raise UsageError(f"--out {out}: {taken}; give a folder of its own (default: "
                         f"{SCHEMA_DIR.relative_to(Path(__file__).resolve().parents[1])})")


def _cmd_run_cell(args: argparse.Namespace) -> int:
    return cell_command.run_cell(args)


def _cmd_run_cell_worker(args: argparse.Namespace) -> int:
    return worker.measure(args)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    **matrix_commands.HANDLERS, "readme": _cmd_readme,
    "estimate": _cmd_estimate, "run-cell": _cmd_run_cell, "run-cell-worker": _cmd_run_cell_worker,
    "spare": _cmd_spare, "evaluate": _cmd_evaluate, "ceiling": _cmd_ceiling, "claims": _cmd_claims,
    "compare": _cmd_compare, "check": _cmd_check, "schema": _cmd_schema, "migrate": _cmd_migrate,
    "aggregate": _cmd_aggregate, "report": _cmd_report, "prepare-model": _cmd_prepare_model,
    "tokenizer-check": _cmd_tokenizer_check, "card-check": _cmd_card_check,
    "export": _cmd_export,
}


def run(args: argparse.Namespace) -> int:
    """The command harness/cli.py read, once its folders and output files are known to be usable."""
    _folder_arguments(args)
    _output_arguments(args)
    return HANDLERS[args.command](args)
