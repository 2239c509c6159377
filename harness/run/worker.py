"""The measuring process of one cell, as its supervisor (harness/process/supervisor.py) starts it: fresh with
`python -m harness.run ARGS`, or forked from a warm-start spare; `vramlab run-cell-worker` is the same."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

from harness.core.cell_arguments import cell_arguments
from harness.core.command_line import Parser
from harness.core.console import run_command, start_logging
from harness.results import adapter_folder, result_path
from harness.run import bytecode, worker_status
from harness.run.measure import run
from harness.spec.ceiling import probe_cell
from harness.spec.cells import Cell
from harness.spec.matrix import MatrixError, check_cell, find_cell, matrix_options
from harness.spec.settings import SETTINGS


def cell_and_paths(args: argparse.Namespace) -> tuple[Cell, Path, Path | None]:
    """The cell (a probe at --context is a cell of its own), its result file and where its adapter is kept."""
    cell = find_cell(args.matrix, args.cell)
    if args.context is not None:
        problem = SETTINGS["context"].check(args.context)
        if problem:
            raise MatrixError(f"--context: {problem}")
        cell = probe_cell(cell, args.context)
        check_cell(args.matrix, cell)  # as validate checks the matrix's cells: the context against the model
    out = Path(args.out) if args.out else result_path(Path(args.results_dir or "results"), cell.matrix, cell.cell_id)
    adapter = adapter_folder(out.parent.parent, cell.matrix, cell.cell_id) if args.keep_adapter else None
    return cell, out, adapter


def measure(args: argparse.Namespace) -> int:
    """The cell measured into its result file, whatever happens to it (harness/run/measure.py)."""
    with worker_status.worker():
        cell, out, adapter = cell_and_paths(args)
        run(cell, out, adapter, shared_device=args.shared_device,
            predicted_oom=matrix_options(args.matrix)["predicted_oom"])
    return 0


def main(argv: list[str] | None = None) -> int:
    bytecode.enable()  # (where the entry point did not already)
    start_logging()
    parser = Parser(prog="python -m harness.run", description=__doc__.split("\n\n")[0])
    cell_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(lambda: measure(args))


def end_worker(code: int) -> NoReturn:
    """How a measuring process ends once its result is written: the interpreter's teardown (freeing pinned host
    memory, the CUDA context, every module) takes seconds that nobody waits for, and the kernel frees all of it
    at exit. A forked one must also never return into the spare it was forked from."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
