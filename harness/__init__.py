"""vramlab: measured ablations of memory-saving techniques for fine-tuning LLMs inside one 16 GB GPU.

Data flows one way: matrix file (ablations/) -> cells (harness.spec.matrix) -> one cell in a fresh process
(harness.run.measure, harness.run.train, harness.stack.techniques) -> result JSON (harness.results)
-> pandas tables and the matrix's design (harness.report.aggregate, harness.spec.design) -> the frames every
comparison is computed in once (harness.report.frames) -> tables, summary and charts (harness.report.tables,
harness.report.summary, harness.report.charts), written by harness.report.build.
"""

__version__ = "0.1.0"
