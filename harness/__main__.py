"""`python -m harness`: the vramlab command (harness/cli.py). Bytecode goes to the cache folder before anything else
is imported (harness/run/bytecode.py)."""

import sys

from harness.run import bytecode

bytecode.enable()

from harness.cli import main  # noqa: E402

code = main()
if sys.argv[1:2] == ["run-cell-worker"]:
    from harness.run.worker import end_worker  # loaded by then: the worker ran

    end_worker(code)
sys.exit(code)
