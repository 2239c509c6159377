"""vramlab: measured ablations of memory-saving techniques for fine-tuning LLMs inside one 16 GB GPU.

Packages in layers that import downward only (docs/packages.md): core, data, stack, tasks, spec, results,
estimate, run, process, evaluation, report, and the entry points (cli.py, __main__.py, workflow.py). A matrix file
becomes cells (spec), each measured in a process of its own (process, run) into a result file (results), which the
report turns into tables and charts (report).
"""

__version__ = "0.1.0"
