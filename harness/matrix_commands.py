"""The commands that read matrix files and nothing else (validate, cells, matrices, settings, default-matrix): apart
from harness/commands.py, so that they load none of the libraries the reports need (pandas, matplotlib: about a
second of every run), which a matrix is checked many times without."""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Callable

from harness.spec import settings
from harness.spec.design import random_weights
from harness.spec.matrix import check_measurable, check_models_here, evaluation_plan, expand
from harness.spec.matrix_list import matrix_entries
from harness.workflow import default_matrix


def _cmd_validate(args: argparse.Namespace) -> int:
    cells = expand(args.matrix)
    check_measurable(args.matrix, cells)
    check_models_here(args.matrix, cells)
    skipped = [c for c in cells if c.conflict]
    print(f"{args.matrix}: {len(cells)} cells, {len(skipped)} skipped by declared conflicts")
    if evaluation_plan(args.matrix).tasks and all(random_weights(c.settings["model"]) for c in cells):
        print(f"{args.matrix}: note: every cell trains a model of random weights, so each evaluation task will be "
              "recorded as n/a (quality is never scored for random weights)")
    return 0


def _cmd_cells(args: argparse.Namespace) -> int:
    # no check_measurable here: the listing is where one sees which cell each conflict skips, all of them included
    for cell in expand(args.matrix):
        if args.json:
            print(json.dumps(cell.as_dict(), sort_keys=True))
        else:
            note = f"  [skipped: {cell.conflict.name}]" if cell.conflict else ""
            print(f"{cell.cell_id}  {cell.name}{note}")
    return 0


def _cmd_matrices(args: argparse.Namespace) -> int:
    for found in matrix_entries():
        if args.json:
            print(json.dumps(found.as_dict(), sort_keys=True))
            continue
        skipped = f", {found.skipped} skipped by a declared conflict" if found.skipped else ""
        head = f"{found.name} ({found.cells} cells{skipped})" if not found.problem else found.name
        print(textwrap.fill(f"{head}: {found.description}" if found.description else head, 118,
                            subsequent_indent="    "))
        print(textwrap.fill(f"needs: {found.needs()}", 118, initial_indent="    ", subsequent_indent="      "))
    if not args.json:
        print("Run one with `snakemake --cores 1 --config matrix=NAME`; `vramlab cells NAME` lists its cells.")
    return 0


def _cmd_settings(args: argparse.Namespace) -> int:
    print(settings.table())
    return 0


def _cmd_default_matrix(args: argparse.Namespace) -> int:
    name, why = default_matrix()
    expand(name)  # the file that name finds here (VRAMLAB_ABLATIONS may hold another), which Snakemake would refuse
    print(f"{name}\t{why}")
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "validate": _cmd_validate, "cells": _cmd_cells, "matrices": _cmd_matrices, "settings": _cmd_settings,
    "default-matrix": _cmd_default_matrix,
}


def run(args: argparse.Namespace) -> int:
    """A matrix command harness/cli.py read (none takes a path option that harness/commands.py checks first)."""
    return HANDLERS[args.command](args)
