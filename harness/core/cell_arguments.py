"""The command-line arguments of a cell: those of `vramlab run-cell`, of the worker it starts, and of a warm-start
spare. Defined here, in argparse alone, so that `vramlab --help` builds every command's parser without importing
what runs a cell (harness/cli.py)."""

from __future__ import annotations

import argparse


def cell_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments a cell is named and measured by, the same for `vramlab run-cell` and its worker."""
    p.add_argument("--matrix", required=True, help="the matrix: a name under ablations/ or a path to a YAML file")
    p.add_argument("--cell", required=True, help="the cell id (`vramlab cells MATRIX` lists them)")
    p.add_argument("--out", help="result file (default results/<matrix>/<cell_id>.json)")
    p.add_argument("--results-dir", help="the folder of the default result path (default: results)")
    p.add_argument("--keep-adapter", action="store_true",
                   help="save the trained adapter under results/<matrix>/adapters/<cell_id>/ for evaluation")
    p.add_argument("--shared-device", action="store_true",
                   help="other cells run on the device at the same time: throughput is recorded as not measured")
    p.add_argument("--context", type=int, metavar="TOKENS",
                   help="the cell at another context, a cell of its own (a probe of `vramlab ceiling`)")
    p.add_argument("--memory-history", metavar="FILE",
                   help="record the allocator's history (CUDA): the snapshot to FILE, and what is alive at the "
                        "allocated peak, by the code that made it, to FILE.peak.json (harness/run/memory_history.py)")


def run_cell_arguments(p: argparse.ArgumentParser) -> None:
    """`vramlab run-cell`: the cell's arguments and how its process is supervised."""
    cell_arguments(p)
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
                        "touched CUDA before it (harness/process/warm_start.py); its result records how it started")
    device_slots_argument(p)


def device_slots_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device-slots", type=int, metavar="N",
                   help="cells that may share one GPU at once (a matrix's concurrent_cells); each runs on a GPU of "
                        "the machine leased for it (harness/process/device_lease.py); above 1 its speed is not a "
                        "measurement (default: $VRAMLAB_DEVICE_SLOTS, else 1)")


def spare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--launcher", type=int, required=True, help="the process id of the run-cell that started it")
    p.add_argument("--kind", choices=("any", "huggingface"), default="any",
                   help="which libraries it imports ahead: any backend's, or the Hugging Face path's only")
