"""vramlab: measured ablations of memory-saving techniques for fine-tuning LLMs inside one 16 GB GPU.

Packages in layers that import downward only (docs/packages.md): core, data, stack, tasks, spec, results,
estimate, run, process, evaluation, report, and the entry points (cli.py, __main__.py, workflow.py). A matrix file
becomes cells (spec), each measured in a process of its own (process, run) into a result file (results), which the
report turns into tables and charts (report).
"""

import os
import sys

__version__ = "0.1.0"

# vramlab draws its charts into files only. A backend the shell names for a screen or a notebook (Jupyter and VS Code
# terminals set MPLBACKEND to theirs) stops matplotlib's import where it cannot load, and with it the tables' and
# charts' jobs; inside IPython the notebook's own backend is left alone.
if "matplotlib" not in sys.modules and "IPython" not in sys.modules:
    os.environ["MPLBACKEND"] = "agg"
