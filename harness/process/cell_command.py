"""`vramlab run-cell`: check every argument before any file is touched, keep or set aside a result already there,
hold the cell's lock, hand the cell to a warm-start spare where one waits, and supervise its measuring process.
A spare runs the same command it is handed (`main`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from harness.core.cache import check_cache_usable
from harness.core.cell_arguments import run_cell_arguments
from harness.core.command_line import Parser
from harness.core.console import run_command, send_to_log, start_logging
from harness.core.environment import cuda_present
from harness.core.log_file import log_file_problem
from harness.core.path_problems import file_in_the_way
from harness.core.progress import StepLine, matrix_standing
from harness.process import warm_start
from harness.process.device_lease import cell_lease, slots_wanted
from harness.process.job_clock import within_job
from harness.process.supervisor import supervise, time_limit
from harness.results import ResultFileError, Status, read
from harness.results.existing import Redo, replaced, review_cell
from harness.results.lock import result_lock
from harness.results.published_results import lost_published_problem
from harness.run.memory_history import ENV as MEMORY_HISTORY_ENV
from harness.run.worker import cell_and_paths
from harness.run.worker_status import SupervisorError
from harness.spec.cells import Cell
from harness.spec.design import random_weights
from harness.spec.matrix import (
    available_matrices,
    expand,
    foreign_folder,
    matrix_path,
    results_folder_owner,
    source_folder_problem,
)
from harness.spec.owners import owner_file, owner_problem, same_file
from harness.stack.backends import name_for
from harness.stack.models.model_folder import unloadable_folder
from harness.stack.techniques import needs_cuda


def main(argv: list[str]) -> int:
    """The `vramlab run-cell ...` command line a warm-start spare was handed (harness/process/spare.py)."""
    start_logging()
    parser = Parser(prog="vramlab")
    run_cell_arguments(parser.add_subparsers(dest="command", required=True).add_parser("run-cell"))
    args = parser.parse_args(argv)
    args.argv = list(argv)
    return run_command(lambda: run_cell(args))


def _out_problem(cell: Cell, out: Path, matrix: str, out_given: bool) -> str | None:
    """--out names this cell's result file: a file named by the cell's id, so that no other file is ever taken for a
    damaged result and set aside, or written over; in no folder another matrix owns (its .matrix file), nor one
    named after another matrix (outside a results folder, where no .matrix says whose it is)."""
    folder, owner = _owner_above(out)
    if owner is not None and not _owned_by(folder, owner, matrix):
        if not out_given:  # the results folder the matrix's name gives: the file is to be renamed, not --out
            return foreign_folder(matrix_path(matrix), folder, owner)
        return (f"--out {out}: {folder}/ holds the results of another matrix ({owner}); "
                f"give a path in this matrix's folder (e.g. {folder.parent / cell.matrix / out.name})")
    # a results folder without .matrix is still the checkout's own matrix's, where one has its name
    taken = None if owner is not None else owner_problem(out.parent.parent, out.parent.name, matrix_path(matrix),
                                                          "results")
    if taken:
        return f"{'--out ' + str(out) + ': ' if out_given else ''}{taken}"
    if owner is None and out.parent.name != cell.matrix and out.parent.name in available_matrices():
        return (f"--out {out}: its folder is named after the matrix {out.parent.name!r}, so it would pass for that "
                f"matrix's results; give a folder named {cell.matrix} "
                f"(e.g. {out.parent.parent / cell.matrix / out.name})")
    taken = source_folder_problem(out)
    if taken:
        return f"{'--out ' if out_given else ''}{taken}; give a path under a results folder"
    if out.is_dir():
        return f"--out {out} is a folder; give the path of the result file (e.g. {out / (cell.cell_id + '.json')})"
    if out.name != f"{cell.cell_id}.json":
        return (f"--out {out}: a result file is named by its cell's id; give a path ending in {cell.cell_id}.json "
                f"(e.g. {out.parent / (cell.cell_id + '.json')})")
    return None


def _owned_by(folder: Path | None, owner: str, matrix: str) -> bool:
    """Whether the matrix file `matrix` names is the one that owns `folder` (owner: what its .matrix says)."""
    return folder is not None and same_file(owner_file(owner, folder.parent), matrix_path(matrix))


def _owner_above(path: Path) -> tuple[Path | None, str | None]:
    """The nearest results folder above `path` that has an owner file (.matrix), and the matrix it names."""
    marker = next((p / ".matrix" for p in [path.parent, *path.parent.parents] if (p / ".matrix").is_file()), None)
    return (marker.parent, results_folder_owner(marker)) if marker is not None else (None, None)


def _log_place_problem(log: Path, matrix: str) -> str | None:
    """A log goes into no results folder another matrix owns (its .matrix file), as a result does not."""
    folder, owner = _owner_above(log)
    if owner is not None and not _owned_by(folder, owner, matrix):
        return f"--log {log}: {folder}/ holds the results of another matrix ({owner}); give a log path elsewhere"
    taken = source_folder_problem(log)
    if taken:
        return f"--log {log}: {taken}; give a log path elsewhere"
    if log.resolve().is_relative_to(Path("reports").resolve()):  # the reports `vramlab report` writes, and only those
        return (f"--log {log} is inside reports/, which holds the reports `vramlab report` writes; give a log path "
                "elsewhere")
    return None


def _memory_history_problem(cell: Cell, given: str | None) -> str | None:
    """--memory-history records CUDA's allocator: a cell on the CPU has none, and a path nothing can be written to
    is said before the cell runs, not after it."""
    if not given:
        return None
    device = cell.settings["device"]
    if device == "cpu" or (not needs_cuda(cell.settings) and not cuda_present()):
        return (f"--memory-history records the CUDA allocator's history, and cell {cell.name} runs on the CPU "
                f"here (device: {device}), so there would be nothing to record; leave it out")
    if Path(given).is_dir():
        return f"--memory-history {given} is a folder; give the path of a file"
    blocker = file_in_the_way(Path(given))
    if blocker is not None:
        return f"--memory-history {given}: {blocker} is a file, not a folder, so the history cannot be written under it"
    return None


def _existing_result(cell: Cell, out: Path, force: bool, out_given: bool) -> tuple[str | None, Redo | None]:
    """What stands in the way of measuring `cell` into `out`: a reason to stop (the result there is kept), or a
    file to set aside first: a damaged or stale one (harness/results/existing.py), or a result that stands and is
    replaced, kept in results/superseded/<matrix>/. A result is replaced only by a newer measurement of the same
    cell, named with --out or with --force, and never by a machine that could only skip the cell; reads only."""
    redo = review_cell(out, cell.cell_id, cell.settings)
    if redo is not None or not out.is_file():
        return None, redo
    existing = read(out)
    env = existing.environment
    where = env.machine if env else "another machine"
    if needs_cuda(cell.settings) and not cuda_present() and existing.status is not Status.skipped:
        return (f"{out} holds the {existing.status.value} result of this cell from {where}; this machine has no "
                "CUDA GPU, so here the cell could only be skipped: the result is kept, with --force too (measure "
                "it again on a machine with a GPU)"), None
    if not out_given and not force:
        return (f"{out} already holds the {existing.status.value} result of this cell from {where}; it is kept "
                "(delete the file to measure the cell again, give --out to measure it into another file, or "
                "--force to replace it)"), None
    return None, replaced(out, cell.matrix)


def run_cell(args: argparse.Namespace) -> int:
    """Every argument is checked before any file is touched; then, under the cell's lock, an existing result is
    kept, or set aside where it is damaged, and the cell is measured."""
    cell, out, _ = cell_and_paths(args)
    check_cache_usable()  # a cache that cannot be used would fail the cell half-way, and its error would stick
    # a published result (or its folder's .matrix) lost here: before the owner's check, which an edited .matrix fails
    problem = lost_published_problem(out.parent, [out.name]) or _out_problem(cell, out, args.matrix,
                                                                             args.out is not None)
    # --out outside --results-dir would drop the folder without a word; inside it, the two agree
    if args.out is not None and args.results_dir is not None and \
            not Path(args.out).resolve().is_relative_to(Path(args.results_dir).resolve()):
        problem = problem or (f"--out {args.out} is not under --results-dir {args.results_dir}: --out names the "
                              "result file, --results-dir the folder its default path is under; give one")
    try:
        limit, shortened = within_job(time_limit(cell.settings, args.time_limit))
    except SupervisorError as err:
        problem, shortened = problem or str(err), None
    try:
        slots_wanted(args.device_slots)
    except ValueError as err:
        problem = problem or f"--device-slots: {err}"
    if not problem and args.log:
        problem = log_file_problem(Path(args.log)) or _log_place_problem(Path(args.log), args.matrix)
    problem = problem or _memory_history_problem(cell, getattr(args, "memory_history", None))
    unloadable = None if cell.conflict else unloadable_folder(str(cell.settings["model"]))
    problem = problem or (unloadable and f"{cell.name}.model: {unloadable}")
    problem = problem or _existing_result(cell, out, args.force, args.out is not None)[0]
    if problem:
        print(f"vramlab: {problem}", file=sys.stderr)
        return 2
    if args.keep_adapter and random_weights(cell.settings["model"]):
        print(f"vramlab: note: --keep-adapter keeps no adapter of {cell.name}: its model ({cell.settings['model']}) "
              "has random weights, which are never evaluated", file=sys.stderr)
    if shortened:
        print(f"vramlab: cell {cell.name}: {shortened}", file=sys.stderr)
    if getattr(args, "memory_history", None):
        os.environ[MEMORY_HISTORY_ENV] = str(Path(args.memory_history).resolve())  # the worker inherits it
    # not in the spare that took this command, which checks all of the above again itself
    if args.warm_start and warm_start.SERVING is None and warm_start.applies_to(cell.settings):
        kinds = warm_start.kinds_for({name_for(c.settings) for c in expand(args.matrix)
                                      if warm_start.applies_to(c.settings)})
        code = warm_start.run_in_spare([a for a in args.argv if a != "--warm-start"], name_for(cell.settings), kinds)
        if code is not None:
            return code
        warm_start.launch_spares(kinds)  # for the next cells
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
        if redo is None:
            return _supervised(args, cell, out, limit)
        standing = read(out).status if redo.matrix else None  # a result that stands, replaced on purpose
        moved = redo.set_aside()
        print(f"vramlab: {redo.reason}; moved to {moved}, and the cell is measured again", file=sys.stderr)
        code = _supervised(args, cell, out, limit)
        return code if standing is None else _no_skip_over(standing, out, moved, code)


def _no_skip_over(standing: Status, out: Path, moved: Path, code: int) -> int:
    """A machine that could only skip the cell (a technique it lacks, found once the cell started) never replaces
    a measured result with that skip: the result set aside comes back, and the command says so (exit 2)."""
    try:
        new = read(out)
    except (OSError, ResultFileError):
        return code
    if new.status is not Status.skipped or standing is Status.skipped:
        return code
    os.replace(moved, out)
    print(f"vramlab: the cell could only be skipped here ({(new.reason or '')[:300]}); the {standing.value} result it "
          f"would have replaced is back in {out}", file=sys.stderr)
    return 2


def _supervised(args: argparse.Namespace, cell: Cell, out: Path, limit: float) -> int:
    """The cell under its supervisor, on a device leased for it alone (or one of `--device-slots` sharing one),
    harness/process/device_lease.py."""
    slots = slots_wanted(args.device_slots)
    # the worker is given the resolved result file, so that both processes look at the same one
    worker_args = ["--matrix", args.matrix, "--cell", args.cell, "--out", str(out)]
    worker_args += ["--keep-adapter"] * args.keep_adapter + ["--shared-device"] * (args.shared_device or slots > 1)
    worker_args += ["--context", str(args.context)] if args.context is not None else []

    def waiting(holders: list[str]) -> None:
        print(f"vramlab: cell {cell.name} ({cell.cell_id}) waits for a device: every one is held "
              f"({'; '.join(holders)[:500] or 'by other cells'})", file=sys.stderr)

    with cell_lease(cell.settings, slots, waiting) as lease:
        env = lease.env() if lease is not None else {}
        if args.log is None:
            logging.getLogger("vramlab").info("cell %s of %s: %s (time limit %g s)%s", cell.cell_id, cell.matrix,
                                              cell.name, limit, f", device {lease.device.entry}" if lease else "")
            return supervise(cell, out, worker_args, limit, extra_env=env)
        # a ceiling probe is no cell of the matrix: where the matrix stands says nothing about it
        ids = [c.cell_id for c in expand(args.matrix)] if args.context is None else None
        return _run_cell_quietly(ids, cell, out, worker_args, limit, Path(args.log), env)


def _run_cell_quietly(ids: list[str] | None, cell: Cell, out: Path, worker_args: list[str], limit: float,
                      log_file: Path, extra_env: dict[str, str] | None = None) -> int:
    """The console gets where the matrix stands, one progress line for this cell and its outcome; the log file
    gets everything, the worker's output included."""
    def standing() -> str:
        return matrix_standing(ids, out.parent) if ids is not None else "a ceiling probe"

    console = send_to_log(log_file)
    logging.getLogger("vramlab").info("cell %s of %s: %s (time limit %g s)", cell.cell_id, cell.matrix, cell.name,
                                      limit)
    console.write(f"vramlab: {standing()}; cell {cell.name} ({cell.cell_id}) starts, "
                  f"its log: {log_file}\n")
    line = StepLine(f"cell {cell.name}", console)
    code = supervise(cell, out, worker_args, limit, progress=line.update, extra_env=extra_env)
    try:
        result = read(out)
        outcome = result.status.value + (f": {result.reason}" if result.reason else "")
    except (OSError, ResultFileError):
        outcome = "no result (see its log)"
    line.close(f"vramlab: cell {cell.name}: {outcome[:300]}; {standing()}")
    return code
