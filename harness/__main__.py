import logging
import os
import sys

from harness.cli import main

code = main()
if sys.argv[1:2] == ["run-cell-worker"]:
    # the result is written: the interpreter's teardown (freeing pinned host memory, the CUDA context, every
    # module) takes seconds that nobody waits for, and the kernel frees all of it at exit
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
sys.exit(code)
