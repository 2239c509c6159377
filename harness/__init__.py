"""vramlab: measured ablations of memory-saving techniques for fine-tuning LLMs inside one 16 GB GPU.

Data flows one way: matrix file (ablations/) -> cells (harness.spec.matrix) -> one cell in a fresh process
(harness.run_cell, harness.recipe, harness.stack.techniques) -> result JSON (harness.results)
-> pandas tables and the matrix's design (harness.aggregate, harness.spec.design) -> the frames every
comparison is computed in once (harness.comparisons) -> tables, summary and charts (harness.tables,
harness.summary, harness.charts), written by harness.report.
"""

__version__ = "0.1.0"
