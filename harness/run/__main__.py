"""`python -m harness.run ARGS`: the measuring process of one cell (harness/run/worker.py), as its supervisor starts
it."""

import sys

from harness.run import bytecode

bytecode.enable()  # before the modules below are compiled: where Python writes no bytecode, they are cached

from harness.run import worker  # noqa: E402

worker.end_worker(worker.main(sys.argv[1:]))
