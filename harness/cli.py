"""vramlab: measure memory-saving techniques for fine-tuning LLMs inside one 16 GB GPU. A matrix file
(ablations/*.yaml) expands into cells; each cell trains in a process of its own and writes one result file; the
reports are built from the result files.

Start with `vramlab matrices`, then `snakemake --cores 1` (the default matrix for this machine, compared with the
published results) or `snakemake --cores 1 --config matrix=NAME`. Each command's --help says more."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from harness import __version__
from harness.core.cell_arguments import cell_arguments, device_slots_argument, run_cell_arguments, spare_arguments
from harness.core.command_line import Parser
from harness.core.console import run_command, start_logging
from harness.core.trackers import TRACKERS
from harness.run import bytecode

MATRIX = "a matrix: a name under ablations/ (`vramlab matrices` lists them) or a path to a YAML file"
RESULTS_DIR = "the folder of the result files, one subfolder per matrix"
REPORTS_DIR = "the folder of the reports, one subfolder per matrix"


def _folders(p: argparse.ArgumentParser, results: bool = True, reports: bool = True) -> None:
    if results:
        p.add_argument("--results-dir", default="results", help=RESULTS_DIR)
    if reports:
        p.add_argument("--reports-dir", default="reports", help=REPORTS_DIR)


def parser() -> argparse.ArgumentParser:
    top = Parser(prog="vramlab", description=__doc__)
    top.add_argument("--version", action="version", version=f"vramlab {__version__}",
                     help="print vramlab's version and exit")
    # COMMAND in the usage line: argparse would spell out every choice, the unlisted run-cell-worker and spare too
    sub = top.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")

    p = sub.add_parser("matrices", help="the matrices there are: name, description, cells, what running one needs")
    p.add_argument("--json", action="store_true", help="one JSON object per matrix")

    p = sub.add_parser("validate", help="check a matrix file and count its cells")
    p.add_argument("matrix", help=MATRIX)

    p = sub.add_parser("cells", help="list a matrix's cells with their ids")
    p.add_argument("matrix", help=MATRIX)
    p.add_argument("--json", action="store_true", help="one JSON object per cell")

    sub.add_parser("settings", help="every setting a matrix may use: levels or type, default, owner, help")

    p = sub.add_parser("estimate", help="predicted device memory of a matrix's cells (or of one cell), by "
                                        "component, against each budget: no GPU, no weights")
    p.add_argument("matrix", nargs="?", help=MATRIX)
    p.add_argument("--cell", help="only this cell of the matrix (its name or id)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="one cell instead of a matrix: a setting over the defaults (repeatable; model may be any "
                        "architecture: arch:<preset>, a folder with config.json, a GGUF file)")
    p.add_argument("--json", action="store_true", help="one JSON object per cell")
    p.add_argument("--chart", metavar="PNG", help="also draw the cells' predicted components as stacked bars, with "
                                                  "the measured device peak where results/<matrix>/ has one")
    p.add_argument("--results-dir", help="with --chart: the results whose measured peaks it draws (default: results)")
    p.add_argument("--calibrate", nargs="+", metavar="RESULTS_DIR",
                   help="instead: predicted against measured for every ok GPU cell in these result folders")

    p = sub.add_parser("run-cell", help="run one cell in a fresh process under a wall-clock limit and write its "
                                        "result file, whatever happens to that process")
    run_cell_arguments(p)

    # the measuring process that run-cell starts and watches: not meant to be called by hand, so not listed
    cell_arguments(sub.add_parser("run-cell-worker", description="the measuring process run-cell starts"))
    # a process that imports ahead for the next `run-cell --warm-start` (harness/process/warm_start.py): not listed
    spare_arguments(sub.add_parser("spare", description="a process importing ahead for the next run-cell"))

    p = sub.add_parser("evaluate", help="evaluate a trained cell on the matrix's tasks (lm-eval)")
    p.add_argument("--matrix", required=True, help=MATRIX)
    p.add_argument("--cell", required=True, help="the cell id (`vramlab cells MATRIX` lists them)")
    p.add_argument("--task", action="append", help="only this task (repeatable; default: the matrix's tasks)")
    p.add_argument("--log", metavar="FILE.log", help="send everything the evaluation prints to FILE.log and show "
                                                     "only a line per cell on the console")
    _folders(p, reports=False)
    device_slots_argument(p)

    p = sub.add_parser("ceiling", help="the longest context each cell of a matrix with a `ceiling:` section "
                                       "trains at within its budget, by bisection over real probes")
    p.add_argument("matrix", help=MATRIX)
    p.add_argument("--cell", action="append", help="only this cell (id or name; repeatable)")
    p.add_argument("--jobs", type=int, default=1,
                   help="searches at once, spread over the machine's GPUs (a probe per GPU; more than the GPUs "
                        "share them: peaks stay measurements, speed does not)")
    _folders(p)
    p.add_argument("--warm-start", action="store_true", help="start each probe as `run-cell --warm-start` does")

    p = sub.add_parser("claims", help="each published claim (harness/report/claims/published.yaml) beside the "
                                      "cell or ceiling search that measures it, with a verdict: reports/claims/")
    _folders(p)

    p = sub.add_parser("compare", help="compare this machine's reproduction of a matrix with its published results")
    p.add_argument("matrix", help=MATRIX)
    p.add_argument("--machine", help="the reproduction's folder under results/<matrix>/reproductions/ "
                                     "(default: this host)")
    _folders(p)

    p = sub.add_parser("card-check", help="the emulated 16 GB card checked on a real one (RTX 4080, RTX 4060 Ti "
                       "16 GB): a cell and two ceiling boundaries, compared with the emulated results "
                       "(docs/card-check.md)")
    p.add_argument("--dry-run", action="store_true",
                   help="say what would run and what it is compared with; run nothing")
    _folders(p)
    p.add_argument("--machine", help="the folder name of this machine's results (default: its host name)")

    p = sub.add_parser("check", help="validate result files (or folders of them); exit 1 naming each bad one")
    p.add_argument("paths", nargs="+", metavar="PATH", help="a result file, or a folder searched for them")
    p.add_argument("--fresh", action="store_true",
                   help="also judge each matrix results folder given against what the current code gives here (model "
                        "file, tokenizer, kept tokens, training and evaluation data: minutes, no GPU); a result that "
                        "differs is stale (exit 1); writes <folder>/freshness.json, which the report reads")
    p.add_argument("--supersede-stale", action="store_true",
                   help="with --fresh: move the stale results (and their evaluations) to results/superseded/<matrix>/, "
                        "so that Snakemake measures their cells again")
    p.add_argument("--matrix", help="with --fresh: the matrix file of the results, where it is not "
                                    "ablations/<matrix>.yaml (its `evaluation:` section says what the evaluation "
                                    "data is)")

    p = sub.add_parser("schema", help="write the JSON Schemas of result files, generated from the result model")
    p.add_argument("--out", help="the folder to write them to (default: harness/results/schema)")

    p = sub.add_parser("migrate", help="rewrite result files of an older schema in the current one, in place, and "
                                     "move those whose budget is not in its canonical spelling to their new id")
    p.add_argument("paths", nargs="+", metavar="PATH", help="a result file, or a folder searched for them")

    p = sub.add_parser("aggregate", help="gather a matrix's result files into reports/<matrix>/cells.csv")
    p.add_argument("matrix", help=MATRIX)
    _folders(p)
    p.add_argument("--partial", action="store_true",
                   help="cells without a result file yet become 'pending' rows instead of an error")

    p = sub.add_parser("report", help="Markdown, LaTeX and charts from reports/<matrix>/cells.csv")
    p.add_argument("matrix_name", nargs="?", metavar="matrix",
                   help="the report's folder under --reports-dir (a matrix's name, e.g. smoke); none with --all")
    p.add_argument("--reports-dir", default="reports", help=REPORTS_DIR)
    p.add_argument("--all", action="store_true",
                   help="every matrix with a reports/<matrix>/cells.csv: aggregate its results, then its report")
    p.add_argument("--results-dir", help="with --all: the result files to aggregate (default: results); with a "
                                         "matrix: the result files its tables must agree with (default: results, "
                                         "for this checkout's reports/)")
    p.add_argument("--out", help="with --all: write the rebuilt reports here instead of over --reports-dir")

    p = sub.add_parser("export", help="a matrix's results as runs of an experiment tracker, offline: MLflow (its "
                                      "file store), TensorBoard (event files) or W&B (offline runs); settings as "
                                      "parameters, peaks, speed, MFU and scores as metrics, the loss per step, the "
                                      "report's figures")
    p.add_argument("matrix", help=MATRIX)
    p.add_argument("--to", required=True, choices=TRACKERS, help="the tracker (each an extra: "
                                                                 "pip install 'vramlab[mlflow]', ...)")
    p.add_argument("--out", help="where the runs go (default: exports/<tracker>); for mlflow also any tracking URI "
                                 "(sqlite:///runs.db, http://host:5000)")
    p.add_argument("--results-dir", default="results", help=RESULTS_DIR)
    p.add_argument("--reports-dir", default="reports", help="where the matrix's report is (its figures)")

    p = sub.add_parser("prepare-model", help="build a model into the cache (arch: random weights, GGUF conversion)")
    p.add_argument("source", help="a model source: arch:<preset>, package:<name>, gguf:<file> or a model folder")
    p.add_argument("--seed", type=int, default=0, help="the seed of an arch: model's random weights")

    p = sub.add_parser("tokenizer-check", help="compare the tokenizer transformers builds from a GGUF model (package: "
                                               "or gguf:) with the file's own vocabulary; exit 1 where they differ")
    p.add_argument("source", help="a GGUF model source: package:<name> or gguf:<file>")

    sub.add_parser("default-matrix", help="the matrix `snakemake` runs when none is given, and why")

    p = sub.add_parser("readme", help="rewrite the README's generated blocks (tables, summaries, figures) from the "
                                      "committed reports and results")
    p.add_argument("--check", action="store_true",
                   help="write nothing: exit 1 naming the blocks that differ from what the reports give")
    p.add_argument("--file", default="README.md", help="the README whose blocks are rewritten")
    return top


def main(argv: list[str] | None = None) -> int:
    start_logging()
    args = parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)

    def command() -> int:
        bytecode.enable()  # before the commands import torch and the training stack (python -m harness did first)
        return _commands(args.command)(args)

    # a vramlab command ends on SIGTERM as on Ctrl-C; the measuring worker (its own entry point) keeps the default
    return run_command(command, end_on_sigterm=True)


MATRIX_COMMANDS = ("validate", "cells", "matrices", "settings", "default-matrix")


def _commands(name: str) -> Callable[[argparse.Namespace], int]:
    """What runs a command, loaded once its arguments are read: `--help`, `--version` and a usage error load no
    library that a command needs, and a command that reads matrix files only loads none that the reports need
    (pandas, matplotlib, the result model). The imports inside a function between harness modules, and the layer
    test's exceptions."""
    if name in MATRIX_COMMANDS:
        from harness.matrix_commands import run as run_matrix_command

        return run_matrix_command
    from harness.commands import run

    return run


if __name__ == "__main__":
    sys.exit(main())
