# vramlab workflow: one job per cell of an ablation matrix, then the aggregate table, then the report.
#
#   snakemake --cores 1                         the embedded default (16 GB matrix on a CUDA GPU, smoke on a CPU)
#   snakemake --cores 1 --config matrix=NAME    ablations/NAME.yaml
#   snakemake -n                                what would run
#
# The matrix is validated while this file is read, so a typo stops everything before any cell runs.
# A cell's result file appears only once complete (written to a temporary file, then renamed); cells
# whose file exists are never rerun (rerun-triggers: mtime in profiles/default), and a cell that was
# killed half-way has no file, so the next run redoes exactly that one.

import sys

sys.path.insert(0, workflow.basedir)

from harness.matrix import MatrixError, matrix_path
from harness.matrix import expand as expand_matrix
from harness.workflow import default_matrix

if config.get("matrix"):
    MATRIX, WHY = str(config["matrix"]), "chosen with --config matrix=..."
else:
    MATRIX, WHY = default_matrix()
try:
    CELLS = expand_matrix(MATRIX)
except MatrixError as err:
    raise WorkflowError(f"vramlab: {err}") from None
NAME = CELLS[0].matrix
IDS = [c.cell_id for c in CELLS]
# cells that may touch a GPU hold the one `gpu` resource, so they never share a card
NEEDS_GPU = {c.cell_id: int(c.settings["device"] != "cpu") for c in CELLS}
RESULTS = config.get("results_dir", "results")
REPORTS = config.get("reports_dir", "reports")
print(f"vramlab: matrix '{NAME}' ({matrix_path(MATRIX)}), {len(CELLS)} cells: {WHY}", file=sys.stderr)


rule all:
    input:
        f"{REPORTS}/{NAME}/report.md",
        # the results too: a deleted result file is measured again even while an older report exists
        expand(f"{RESULTS}/{NAME}/{{cell_id}}.json", cell_id=IDS),


rule cell:
    output:
        f"{RESULTS}/{NAME}/{{cell_id}}.json",
    log:
        f"{RESULTS}/{NAME}/logs/{{cell_id}}.log",
    wildcard_constraints:
        cell_id="[0-9a-f]{12}",
    resources:
        gpu=lambda wildcards: NEEDS_GPU[wildcards.cell_id],
    params:
        matrix=MATRIX,
    shell:
        "{sys.executable} -m harness run-cell --matrix {params.matrix:q} --cell {wildcards.cell_id} "
        "--out {output:q} 2>&1 | tee {log:q}; exit ${{PIPESTATUS[0]}}"


rule aggregate:
    input:
        expand(f"{RESULTS}/{NAME}/{{cell_id}}.json", cell_id=IDS),
    output:
        f"{REPORTS}/{NAME}/cells.csv",
        f"{REPORTS}/{NAME}/steps.csv",
    params:
        matrix=MATRIX,
    shell:
        "{sys.executable} -m harness aggregate {params.matrix:q} --results-dir {RESULTS:q} --reports-dir {REPORTS:q}"


rule report:
    input:
        f"{REPORTS}/{NAME}/cells.csv",
        f"{REPORTS}/{NAME}/steps.csv",
    output:
        f"{REPORTS}/{NAME}/report.md",
        f"{REPORTS}/{NAME}/tables.tex",
        f"{REPORTS}/{NAME}/memory.png",
        f"{REPORTS}/{NAME}/throughput.png",
        f"{REPORTS}/{NAME}/loss.png",
    shell:
        "{sys.executable} -m harness report {NAME:q} --reports-dir {REPORTS:q}"
