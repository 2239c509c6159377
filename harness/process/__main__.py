"""`python -m harness.process --kind KIND --launcher PID`: a warm-start spare (harness/process/spare.py), as
`vramlab run-cell --warm-start` starts one for the next cell."""

import sys

from harness.run import bytecode

bytecode.enable()  # before the modules below are compiled: where Python writes no bytecode, they are cached

from harness.process import spare  # noqa: E402

sys.exit(spare.main(sys.argv[1:]))
