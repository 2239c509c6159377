# vramlab workflow: one job per cell of an ablation matrix, one evaluation job per trained cell (when the
# matrix has an `evaluation:` section), then the aggregate tables, then the report.
#
#   snakemake --cores 1                         the embedded default (16 GB matrix on a CUDA GPU, smoke on a CPU)
#   snakemake --cores 1 --config matrix=NAME    ablations/NAME.yaml
#   snakemake -n                                what would run
#
# The matrix is validated while this file is read, so a typo stops everything before any cell runs.
# A cell's result file appears only once complete (written to a temporary file, then renamed); cells
# whose file exists are never rerun, and a cell that was killed half-way has no file, so the next run redoes
# exactly that one. Whether a job runs never depends on file times (every input is ancient()): a fresh clone,
# whatever order git wrote its files in, has nothing to redo; a job downstream of one that runs runs too. A
# result file that is damaged (or an error whose input data has changed since, or that came from a kill or the
# machine, not the cell) is moved to
# results/<matrix>/damaged/ (superseded/) (never deleted) and measured again: harness/results/existing.py
# decides, and a dry run only says so, since nothing is moved before Snakemake executes jobs.

import base64
import shutil
import signal
import sys

sys.path.insert(0, workflow.basedir)

from pathlib import Path

from harness.core.devices import machine_devices
from harness.core.environment import cuda_present
from harness.core.errors import UsageError, one_line
from harness.spec.matrix import MatrixError, ceiling_spec, design_of, evaluation_plan
from harness.spec.matrix import check_measurable, matrix_options, matrix_path
from harness.spec.chart_widths import chart_files
from harness.spec.owners import check_reports_folder, claim_results_folder
from harness.spec.matrix import expand as expand_matrix
from harness.spec.renamed_matrix import orphaned_results_hint
from harness.results import ResultFileError, evaluation_path, result_path
from harness.results.existing import review_cell, review_evaluation
from harness.results.published_results import lost_published_problem
from harness.stack.techniques import needs_cuda
from harness.report.reproduce import machine_label
from harness.results.reproduction_folders import reproduction_folder_problem
from harness.workflow import check_config, check_configfiles, check_writable, default_matrix, flag
from harness.workflow import cleanup_paths, elsewhere_note, flag_readings, only_prints, reproduction_targeted, rules_left_out
from harness.core.environment_variables import check_all
from harness.process.job_clock import job_minutes

# the description at the head of `snakemake --report` (docs/html-report.md)
report: "docs/snakemake-report/workflow.rst"


def _stop(err):
    """One line and exit 2, as every vramlab command ends on bad input: a WorkflowError would add Snakemake's
    frames of this file below the line."""
    print(f"vramlab: {one_line(err)}", file=sys.stderr)
    sys.exit(2)


# a listing or plan piped into `head` ends quietly where head stops reading (harness/workflow.py, only_prints)
if only_prints(sys.argv) and hasattr(signal, "SIGPIPE"):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
try:
    # every --config value, before anything is read (harness/workflow.py); a `--config` without `=` is refused by
    # Snakemake's own parser before this file is read (docs/reproducing.md, "Which matrix runs"); and every VRAMLAB_*
    # variable, as each vramlab command checks them before it starts
    check_config(config, sys.argv)
    check_configfiles(workflow.configfiles)
    check_all()
except UsageError as err:
    _stop(err)
if workflow.is_main_process and workflow.resource_settings.cores == 0:  # no job would ever start: it waits forever
    _stop("--cores 0 lets no job run, so Snakemake would wait without end; give --cores 1 or more (a dry run, -n, "
          "needs no --cores)")
if config.get("matrix"):
    MATRIX, WHY = str(config["matrix"]), "chosen with --config matrix=..."
else:
    MATRIX, WHY = default_matrix()
try:
    CELLS = expand_matrix(MATRIX)
    check_measurable(MATRIX, CELLS)  # a matrix whose every cell a declared conflict skips would run for nothing
    TASKS = evaluation_plan(MATRIX).task_names()
    CONCURRENT = matrix_options(MATRIX)["concurrent_cells"]
    CEILING = ceiling_spec(MATRIX) is not None
    # the charts a report draws follow from the matrix alone, so they can be named here
    CHARTS = design_of(MATRIX).files()
except (MatrixError, UsageError) as err:
    _stop(err)
NAME = CELLS[0].matrix
IDS = [c.cell_id for c in CELLS]
RESULTS = config.get("results_dir", "results")
REPORTS = config.get("reports_dir", "reports")
# a published result deleted (or its folder's .matrix lost) in this checkout is refused, dry run or not: its cell
# would be measured again as new, and the published reference replaced (harness/results/published_results.py)
_LOST = lost_published_problem(Path(RESULTS) / NAME, [f"{i}.json" for i in IDS]
                               + [f"evaluations/{i}/{t}.json" for i in IDS for t in TASKS])
if _LOST:
    _stop(_LOST)
try:
    # the folders are this matrix file's (harness/spec/owners.py): a matrix of the same name from another folder never
    # writes into the checkout's results/<name>/ or reports/<name>/. Checked now; the results folder's marker is
    # written once Snakemake executes jobs (_prepare below)
    claim_results_folder(Path(RESULTS), NAME, matrix_path(MATRIX), write=False)
    check_reports_folder(Path(REPORTS), NAME, matrix_path(MATRIX))
    # a folder nothing can be written to would fail the run after its cells trained, in Snakemake's many lines
    check_writable(config, NAME)
except (MatrixError, UsageError) as err:
    _stop(err)
# cells that may touch a GPU hold one `gpu` resource, and each runs on a device of the machine leased for it alone
# (harness/process/device_lease.py), so two never share a card: `gpu` is the number of the machine's GPUs unless
# --resources says otherwise. A matrix that allows `concurrent_cells: N` has its cells hold one of N `gpu_slot`s per
# GPU instead (N cells share each device, --device-slots N), and their throughput is recorded as not measured. On a
# cluster (an executor that submits jobs) each job gets a device of its own, so cells never share one there,
# whatever the matrix allows.
NEEDS_GPU = {c.cell_id: int(c.settings["device"] != "cpu") for c in CELLS}
SHARED = CONCURRENT > 1 and workflow.local_exec
GPUS = max(len(machine_devices()), 1) if workflow.local_exec and any(NEEDS_GPU.values()) else 1
# the ceiling's searches spread over the GPUs Snakemake may use: one search per device, or N where cells share
CEILING_GPUS = 1
if workflow.local_exec:
    _usable = workflow.global_resources.setdefault("gpu", GPUS).value
    CEILING_GPUS = max(min(GPUS, _usable), 1) if isinstance(_usable, int) else GPUS
workflow.global_resources.setdefault("gpu_slot", CONCURRENT * GPUS)
SLOTS = [f"--device-slots {CONCURRENT}"] if SHARED else []
# each cell leaves a process that imports the libraries ahead for the next one (harness/process/warm_start.py); off with
# --config warm_start=false. On a cluster each job may land on another node, so there it is always off.
WARM = ["--warm-start"] if workflow.local_exec and flag(config, "warm_start", "true") else []


# a cell's job asks a scheduler for the cell's own time limit and the minutes around it (harness/process/job_clock.py):
# a cell that runs long ends as a `timeout` result, never killed by SLURM first with none
JOB_MINUTES = {c.cell_id: job_minutes(c.settings) for c in CELLS}


def device_resources(wildcards):
    needs = NEEDS_GPU[wildcards.cell_id]
    return {"gpu": 0, "gpu_slot": needs} if SHARED else {"gpu": needs, "gpu_slot": 0}


# what this run will do, told once Snakemake builds its first job (_prepare below), not while this file is read: a
# target that is no rule (`snakemake nosuch`) or a listing (--list) runs nothing, and these lines would say it does
NOTES = flag_readings(config)  # reproduce=yes read as true, said (the flags are read below)
# Snakemake's --touch only sets the outputs' times, which a person may take for a rebuild; Snakemake knows it once it
# builds the jobs (_prepare), not yet while this file is read
TOUCH_NOTE = ("--touch marks the outputs as up to date without running any job: no cell is measured and no report "
              "is made or rebuilt (those there stay as they are); leave it out to make the report")
_GPU_CELLS = [c for c in CELLS if needs_cuda(c.settings)]
if _GPU_CELLS and not cuda_present():
    _missing = [c for c in _GPU_CELLS if not result_path(Path(RESULTS), NAME, c.cell_id).is_file()]
    NOTES.append(f"{len(_GPU_CELLS)} of {len(CELLS)} cells need a CUDA GPU and this machine has none: the "
                 f"{len(_missing)} without a result will be recorded as skipped here; the "
                 f"{len(_GPU_CELLS) - len(_missing)} with a result keep it")
_ORPHANED = orphaned_results_hint(Path(RESULTS), NAME, IDS)
if _ORPHANED:
    NOTES.append(_ORPHANED)
NOTES.append(f"matrix '{NAME}' ({matrix_path(MATRIX)}), {len(CELLS)} cells"
             + (f", {len(TASKS)} evaluation tasks" if TASKS else "") + f": {WHY}")

# Result files that cannot stand (damaged, another cell's, an error of changed data, of a kill or of the machine):
# said now, set aside once Snakemake executes jobs, so that their cells (or tasks) are measured again; a dry run
# changes nothing.
# A result from a newer vramlab stops the run here, dry or not: it is kept, never set aside nor measured again.
try:
    REDO = [r for c in CELLS
            for r in [review_cell(result_path(Path(RESULTS), NAME, c.cell_id), c.cell_id, c.settings)]
            + [review_evaluation(evaluation_path(Path(RESULTS), NAME, c.cell_id, t), c.cell_id, t) for t in TASKS]
            if r is not None]
except ResultFileError as err:
    _stop(err)
NOTES += [_redo.describe() for _redo in REDO]

EVALUATIONS = expand(f"{RESULTS}/{NAME}/evaluations/{{cell_id}}/{{task}}.json", cell_id=IDS, task=TASKS)

# Reproduction: the committed results are the published reference. The embedded default (no matrix named)
# measures every published cell again on this machine, into results/<matrix>/reproductions/<machine>/, and
# ends with the comparison; a matrix named with --config matrix=... completes its reference folder instead,
# unless --config reproduce=true. Cells without a published result are measured into the reference folder.
_wanted = flag(config, "reproduce", "auto")
REPRODUCE = (not config.get("matrix")) if _wanted == "auto" else _wanted
MACHINE = machine_label()
# the cells with a result file here (the published reference where they are committed); --config replace=true
# lets -F, -R cell and --delete-all-output replace or delete them
WITH_RESULT = [i for i in IDS if result_path(Path(RESULTS), NAME, i).is_file()]
_ELSEWHERE = elsewhere_note(Path.cwd(), Path(workflow.basedir), (RESULTS, REPORTS), NAME, len(WITH_RESULT),
                            len(IDS))
if _ELSEWHERE:
    NOTES.insert(0, _ELSEWHERE)
REPLACE = flag(config, "replace", "false")
# the refusal quotes the word given (replace=1, replace=yes), and how it was read
_REPLACE_GIVEN = "replace=true" if str(config.get("replace")).lower() == "true" else \
    f"replace={config.get('replace')} (read as true)"
PUBLISHED = WITH_RESULT if REPRODUCE else []
REPRODUCTION_NOTES = []
# a cell that needs a GPU would be "reproduced" here as skipped, and the comparison would call that a difference
_UNREPRODUCIBLE = [c for c in CELLS if c.cell_id in PUBLISHED and needs_cuda(c.settings)] if not cuda_present() else []
if _UNREPRODUCIBLE:
    _stop(f"reproducing '{NAME}' here: {len(_UNREPRODUCIBLE)} of its {len(PUBLISHED)} published cells need a CUDA "
          f"GPU (first: {_UNREPRODUCIBLE[0].name}) and this machine has none, so they could only be recorded as "
          "skipped, which reproduces nothing; run it on a machine with a GPU (without reproduce=true, the published "
          "results are kept as they are)")
REPRODUCTIONS = expand(f"{RESULTS}/{NAME}/reproductions/{MACHINE}/{{cell_id}}.json", cell_id=PUBLISHED)
# a reproductions folder that is a link to the published results would be written among them, then compared with them
_LINKED = reproduction_folder_problem(Path(RESULTS), NAME, MACHINE) if PUBLISHED else None
if _LINKED:
    _stop(_LINKED)
COMPARISON = [f"{REPORTS}/{NAME}/reproductions/{MACHINE}/comparison.md"] if PUBLISHED else []
# a run after one that reproduced every cell measures nothing: it says so, and gives the comparison again; told only
# where the run's targets reach the reproduction (_prepare)
REPRODUCED_BEFORE = bool(PUBLISHED) and all(Path(p).is_file() for p in REPRODUCTIONS + COMPARISON)
if REPRODUCED_BEFORE:
    REPRODUCTION_NOTES.append(f"the {len(PUBLISHED)} published cells of '{NAME}' were reproduced on this machine "
                              f"({MACHINE}) by an earlier run, into {RESULTS}/{NAME}/reproductions/{MACHINE}/, so none "
                              "is measured again (delete that folder to measure them again); the comparison it ended "
                              "with:")
    REPRODUCTION_NOTES.append(Path(COMPARISON[0]).read_text().splitlines()[0] + f"  ({COMPARISON[0]})")
elif PUBLISHED:
    REPRODUCTION_NOTES.append(f"reproducing the {len(PUBLISHED)} published cells of '{NAME}' on this machine "
                              f"({MACHINE}), into {RESULTS}/{NAME}/reproductions/{MACHINE}/, then comparing them with "
                              "the published results")


def _without_provenance(paths):
    """Result files this Snakemake has no record of making (its records: .snakemake/metadata/, one file per
    output, named by the output's path in URL-safe base64)."""
    records = Path(".snakemake", "metadata")
    return [p for p in paths if not (records / base64.urlsafe_b64encode(str(p).encode()).decode()).exists()]


_foreign = _without_provenance([p for p in (result_path(Path(RESULTS), NAME, i) for i in WITH_RESULT)
                                if p not in {r.path for r in REDO}])
# Snakemake's own note ("N jobs have missing provenance/metadata") sounds like a fault; it is not one. Snakemake
# prints it in a dry run only, so this is said there only (_prepare)
DRY_RUN_NOTES = []
if _foreign:
    DRY_RUN_NOTES.append(f"{len(_foreign)} result files of '{NAME}' were made elsewhere (committed, or copied here), so "
                 "Snakemake has no record of making them and will note that jobs have 'missing provenance/metadata'. "
                 "Nothing is wrong: " + ("with --config replace=true and -F (or -R cell) they are measured again "
                                         "and replaced, each kept in results/superseded/" if REPLACE
                                         else "those results are kept as they are (a result is redone only when its "
                                              "file is deleted)") + ".")

# --cleanup-metadata of a file Snakemake has no record of making (a committed or copied result) fails in its six
# lines; said in one, and nothing is changed
_UNRECORDED = _without_provenance(cleanup_paths(sys.argv))
if _UNRECORDED:
    _stop(f"--cleanup-metadata {_UNRECORDED[0]}: Snakemake holds no record of making it (a result committed or copied "
          f"here has none), so there is no metadata to clean up ({len(_UNRECORDED)} such file"
          f"{'s' if len(_UNRECORDED) > 1 else ''} named); nothing was changed: leave such files out")

# --delete-all-output (and --delete-temp-output) would remove the result files, the published reference among them
_DELETING = [a for a in sys.argv if a in ("--delete-all-output", "--delete-temp-output")]
if _DELETING and WITH_RESULT and not REPLACE:
    _stop(f"{_DELETING[0]} would delete the result files of '{NAME}' (in {RESULTS}/{NAME}/, the published reference "
          "where they are committed) and its reports; delete by hand what is to go, or give --config replace=true")
# --all-temp makes every output temporary, deleted once read: the result files and tables among them; --omit-flags
# update (or ancient) drops what keeps a job's published files (below) and what keeps file times from rerunning one
_STORAGE = workflow.storage_settings
if _STORAGE is not None and _STORAGE.all_temp:
    _stop(f"--all-temp would make every output temporary, so Snakemake would delete the result files and tables of "
          f"'{NAME}' once they are read (the published reference among them); leave it out")
_OMITTED = sorted({"update", "ancient"} & set(_STORAGE.omit_flags)) if _STORAGE is not None else []
if _OMITTED:
    _stop(f"--omit-flags {_OMITTED[0]}: the workflow's {_OMITTED[0]}() is what keeps the published results and "
          "reports (update: never deleted before a job nor when it fails; ancient: no job reruns because of file "
          "times); leave it out")
# the cluster's own command each job is submitted with, by executor
SUBMITTERS = {"slurm": "sbatch"}


def _executing():
    """Whether this Snakemake executes jobs (not a dry run, --touch, a summary or a listing, nor a job's own
    process on a cluster). Snakemake knows it once it builds the jobs (when _prepare is called), not yet while
    this file is read."""
    return (workflow.is_main_process and workflow.executor_plugin is not None and not workflow.dryrun
            and not workflow.touch)


def _forced_files():
    """The result files (a cell's or an evaluation's) that -R or -f name, each as Snakemake names it, with the option
    that names it: a file given as ./results/... or by its absolute path is the same file."""
    settings = workflow.dag_settings
    named = [("-R", n) for n in sorted(settings.forcerun)]
    named += [("-f", n) for n in sorted(settings.targets)] if settings.forcetargets else []
    ours = {Path(f).resolve() for f in expand(f"{RESULTS}/{NAME}/{{cell_id}}.json", cell_id=IDS) + EVALUATIONS}
    return [(option, n) for option, n in named if not workflow.is_rule(n) and Path(n).resolve() in ours]


def _refuse_forced_replacement():
    """-F, -R naming the cell or evaluate rule or a result file, or -f naming a result file makes Snakemake run its
    cells again, and run-cell would replace each result by the new measurement: the committed reference is replaced
    only when --config replace=true says so (run-cell is given --force then, and refuses to replace one otherwise,
    whatever else makes Snakemake run a cell again). Snakemake knows its forcing once it builds the jobs (when
    _prepare is called), not yet while this file is read."""
    settings = workflow.dag_settings
    if settings is None:
        return
    every = settings.forceall or bool({"cell", "evaluate"} & set(settings.forcerun))
    files = _forced_files()
    if REPLACE and not (every or files):
        _stop(f"--config {_REPLACE_GIVEN} acts only with -F (or -R cell, or -R/-f naming a result file), which measure "
              "cells that have a result again; without them nothing is replaced: give -F, or leave replace out")
    only_evaluations = not settings.forceall and "cell" not in settings.forcerun and TASKS
    if every and WITH_RESULT and not REPLACE and only_evaluations:  # -R evaluate: the cells stand, their scores not
        _stop(f"-R evaluate would evaluate the {len(WITH_RESULT)} cells of '{NAME}' that have a result again and "
              f"replace their evaluations (in {RESULTS}/{NAME}/evaluations/, the published reference where they are "
              "committed) from adapters a checkout does not keep; to rebuild only the tables and charts give "
              "-R aggregate report, and to replace them --config replace=true")
    if every and WITH_RESULT and not REPLACE:
        _stop(f"-F (or -R cell) would measure the {len(WITH_RESULT)} cells of '{NAME}' that have a result again and "
              f"replace those results (in {RESULTS}/{NAME}/, the published reference where they are committed); "
              f"{_measured_beside('-R reproduce')}, to rebuild only the tables and charts -R aggregate report, and to "
              "replace them --config replace=true")
    standing = [(option, n) for option, n in files if Path(n).is_file()]
    if standing and not REPLACE:
        option, first = standing[0]
        again = f"{option} {RESULTS}/{NAME}/reproductions/{MACHINE}/{Path(first).name}" \
            if Path(first).parent.name == NAME else "-R reproduce"  # an evaluation's file has no reproduction
        _stop(f"{option} {first} would measure its cell again and replace the result there ({len(standing)} result "
              f"file{'s' if len(standing) > 1 else ''} named; in {RESULTS}/{NAME}/, the published reference where they "
              f"are committed); {_measured_beside(again)}, and to replace {'them' if len(standing) > 1 else 'it'} "
              "--config replace=true")


def _measured_beside(again):
    """How to measure published cells again beside the reference: with reproduce=true (or by default, no matrix
    named) the rule reproduce does it, which `again` forces; -R cell, the rule of the published results, cannot."""
    if not REPRODUCE:
        return "to measure them beside it give --config reproduce=true instead"
    return (f"the reproduction measures them beside it, into {RESULTS}/{NAME}/reproductions/{MACHINE}/, by the rule "
            f"reproduce, not cell: to measure that again give {again} instead")


def _refuse_missing_submitter():
    """An executor that submits jobs with a cluster's command, where this machine has none: it would wait, then fail
    in many lines. A dry run shows the jobs anywhere."""
    name = getattr(workflow.executor_plugin, "name", "")
    if _executing() and SUBMITTERS.get(name) and shutil.which(SUBMITTERS[name]) is None:
        _stop(f"the {name} executor (profiles/{name}) submits each job with {SUBMITTERS[name]}, which this machine "
              "does not have; run on a machine of the cluster, or without the profile (a dry run, -n, shows its "
              "jobs anywhere)")


def _refuse_rules_left_out():
    """A rule the run names (a target, the default `all`, -R) that --allowed-rules leaves out: Snakemake would still
    plan it (harness/workflow.py, rules_left_out)."""
    settings = workflow.dag_settings
    if settings is None or not settings.allowed_rules:
        return
    named = [t for t in settings.targets if workflow.is_rule(t)] or (["all"] if not settings.targets else [])
    left_out = rules_left_out(settings.allowed_rules, sorted(settings.forcerun) + named)
    if left_out:
        _stop(f"--allowed-rules {' '.join(sorted(settings.allowed_rules))} leaves out the rule {left_out[0]}, which "
              "the run names (as a target, by default, or with -R), yet Snakemake would still run it: the option "
              "only limits which rules may make the files asked for; name only allowed rules, or leave it out")


_PREPARED = []


def _prepare(wildcards):
    """An input of every rule, empty: the first time Snakemake builds a job (before it looks for any file, so the
    jobs of the files set aside run, whatever the targets), the NOTES are told, and where jobs are executed the
    changes that planning only said are made: the results folder's owner is written, and the files that cannot
    stand are set aside."""
    cell_id = getattr(wildcards, "cell_id", None)
    if cell_id is not None and cell_id not in IDS:  # a result file's name of no cell: later a KeyError's traceback
        _stop(f"'{NAME}' ({matrix_path(MATRIX)}) has no cell {cell_id}, so no job makes a file of that id; its cells' "
              f"ids are listed by `vramlab cells {MATRIX}`")
    if not _PREPARED:
        _PREPARED.append(True)
        if workflow.is_main_process:  # a cluster job's own Snakemake reads this file again: told once, here
            _refuse_forced_replacement()
            _refuse_missing_submitter()
            _refuse_rules_left_out()
            targets = workflow.dag_settings.targets if workflow.dag_settings is not None else set()
            for note in NOTES + ([TOUCH_NOTE] if workflow.touch else []) + (REPRODUCTION_NOTES if reproduction_targeted(targets) else []) \
                    + (DRY_RUN_NOTES if workflow.dryrun else []):
                print(f"vramlab: {note}", file=sys.stderr)
        if _executing():
            claim_results_folder(Path(RESULTS), NAME, matrix_path(MATRIX))
            for redo in REDO:
                if redo.path.is_file():
                    print(f"vramlab: moved {redo.path} to {redo.set_aside()}", file=sys.stderr)
    return []


# light jobs (tables, charts, the comparison) run where Snakemake runs, never as cluster jobs
localrules: all, aggregate, report, compare


rule all:
    input:
        _prepare,
        f"{REPORTS}/{NAME}/report.md",
        # the results too: a deleted result file is measured again even while an older report exists
        expand(f"{RESULTS}/{NAME}/{{cell_id}}.json", cell_id=IDS),
        EVALUATIONS,
        COMPARISON,
        [f"{REPORTS}/{NAME}/ceiling.md"] if CEILING else [],


onsuccess:
    # (a run with nothing to do ends before this: its notes gave the comparison)
    if COMPARISON and Path(COMPARISON[0]).is_file() and not REPRODUCED_BEFORE:
        print(Path(COMPARISON[0]).read_text().splitlines()[0] + f"  ({COMPARISON[0]})", file=sys.stderr)


rule reproduce:
    input:
        _prepare,
    output:
        f"{RESULTS}/{NAME}/reproductions/{MACHINE}/{{cell_id}}.json",
    log:
        f"{RESULTS}/{NAME}/logs/{{cell_id}}.reproduce.log",
    wildcard_constraints:
        cell_id="[0-9a-f]{12}",
    resources:
        gpu=lambda wildcards: device_resources(wildcards)["gpu"],
        gpu_slot=lambda wildcards: device_resources(wildcards)["gpu_slot"],
        runtime=lambda wildcards: JOB_MINUTES[wildcards.cell_id],
    params:
        matrix=MATRIX,
        flags=" ".join((["--shared-device"] if SHARED else []) + SLOTS + WARM),
    shell:
        "{sys.executable} -m harness run-cell --matrix {params.matrix:q} --cell {wildcards.cell_id} "
        "--out {output:q} {params.flags} --log {log:q}"


rule compare:
    input:
        _prepare,
        ancient(REPRODUCTIONS),
    output:
        update(f"{REPORTS}/{NAME}/reproductions/{MACHINE}/comparison.md"),
    params:
        matrix=MATRIX,
    shell:
        "{sys.executable} -m harness compare {params.matrix:q} --machine {MACHINE:q} --results-dir {RESULTS:q} "
        "--reports-dir {REPORTS:q}"


rule cell:
    input:
        _prepare,
    output:
        # update: Snakemake never deletes an existing result before the job (as -F or -R would); run-cell decides
        # (it keeps a result this machine could only skip, and sets a damaged one aside), and a job that fails
        # gets the file back
        update(f"{RESULTS}/{NAME}/{{cell_id}}.json"),
    log:
        f"{RESULTS}/{NAME}/logs/{{cell_id}}.log",
    wildcard_constraints:
        cell_id="[0-9a-f]{12}",
    resources:
        gpu=lambda wildcards: device_resources(wildcards)["gpu"],
        gpu_slot=lambda wildcards: device_resources(wildcards)["gpu_slot"],
        runtime=lambda wildcards: JOB_MINUTES[wildcards.cell_id],
    params:
        matrix=MATRIX,
        # --force only where replace=true says so: without it run-cell keeps a result that stands, whatever made
        # Snakemake run the cell again (a forcing this file did not foresee, a rerun trigger)
        flags=" ".join((["--keep-adapter"] if TASKS else []) + (["--shared-device"] if SHARED else []) + SLOTS
                       + WARM + (["--force"] if REPLACE else [])),
    shell:
        "{sys.executable} -m harness run-cell --matrix {params.matrix:q} --cell {wildcards.cell_id} "
        "--results-dir {RESULTS:q} {params.flags} --log {log:q}"


rule evaluate:
    input:
        _prepare,
        # ancient: evaluated again when the cell is measured again, never because of the files' times
        ancient(f"{RESULTS}/{NAME}/{{cell_id}}.json"),
    output:
        # update: a task added later is evaluated without re-evaluating (or deleting) the others
        update(expand(f"{RESULTS}/{NAME}/evaluations/{{{{cell_id}}}}/{{task}}.json", task=TASKS)),
    log:
        f"{RESULTS}/{NAME}/logs/{{cell_id}}.evaluate.log",
    wildcard_constraints:
        cell_id="[0-9a-f]{12}",
    resources:
        gpu=lambda wildcards: device_resources(wildcards)["gpu"],
        gpu_slot=lambda wildcards: device_resources(wildcards)["gpu_slot"],
    params:
        matrix=MATRIX,
        flags=" ".join(SLOTS),
    shell:
        "{sys.executable} -m harness evaluate --matrix {params.matrix:q} --cell {wildcards.cell_id} "
        "--results-dir {RESULTS:q} --log {log:q} {params.flags}"


# The published reports are update() outputs, as a cell's result is: Snakemake deletes a job's plain outputs before
# it runs and again when it fails (a kill -9, an exception, a refusal), so a failing job would delete the committed
# files it was asked to remake. An update() output is kept, copied aside, and put back when the job fails; vramlab
# writes each file whole (harness/core/atomic_files.py), so none is ever left half-written either.


rule ceiling:
    # one job for a matrix's whole search: each probe depends on the ones before it, and each is still a cell
    # in a fresh process of its own (vramlab run-cell), its result kept under results/<matrix>/ceiling/
    input:
        _prepare,
    output:
        update([f"{REPORTS}/{NAME}/{file}" for file in ("ceiling.md", "ceiling.csv", "ceiling.tex",
                                                         *chart_files("ceiling"))]),
    log:
        f"{RESULTS}/{NAME}/logs/ceiling.log",
    resources:
        gpu=CEILING_GPUS if any(NEEDS_GPU.values()) else 0,
    params:
        matrix=MATRIX,
        # a search per GPU it holds, times as many as the matrix lets cells share a device, where it may be shared
        jobs=(CONCURRENT if SHARED else 1) * CEILING_GPUS,
        warm=" ".join(WARM),
    shell:
        "{sys.executable} -m harness ceiling {params.matrix:q} --results-dir {RESULTS:q} --reports-dir {REPORTS:q} "
        "--jobs {params.jobs} {params.warm} > {log:q}"


RESULT_FILES = expand(f"{RESULTS}/{NAME}/{{cell_id}}.json", cell_id=IDS) + EVALUATIONS
TABLES = [f"{REPORTS}/{NAME}/{file}" for file in ("cells.csv", "steps.csv", "estimate.csv", "environment.csv",
                                                  "design.json", *(["quality.csv", "comparisons.csv"] if TASKS else []))]
# the tables `snakemake --report` shows (docs/html-report.md)
REPORTED_TABLES = ("cells.csv", "steps.csv")


def _reported(path, category):
    """`path` tagged for `snakemake --report` where it is one of the files it shows."""
    name = Path(path).name
    if category == "Tables" and name in REPORTED_TABLES:
        return report(path, category="Tables", labels={"table": Path(name).stem})
    if category == "Report" and name.endswith(".png"):
        return report(path, category="Charts", labels={"chart": Path(name).stem})
    if category == "Report" and name == "report.md":
        return report(path, category="Report", labels={"file": "report.md"})
    return path


rule aggregate:
    input:
        _prepare,
        ancient(RESULT_FILES),
    output:
        update([_reported(table, "Tables") for table in TABLES]),
    params:
        matrix=MATRIX,
    shell:
        "{sys.executable} -m harness aggregate {params.matrix:q} --results-dir {RESULTS:q} --reports-dir {REPORTS:q}"


rule report:
    input:
        _prepare,
        ancient(TABLES),
        # the results too (ancient inputs that exist do not pass a rerun on): the report is made again whenever
        # the tables are, since a result it reads was measured again
        ancient(RESULT_FILES),
    output:
        # the report, its charts (and the tables, rule aggregate) in `snakemake --report` (docs/html-report.md)
        update([_reported(f"{REPORTS}/{NAME}/{file}", "Report")
                for file in ("report.md", "tables.tex", "methods.md", "methods.tex", *CHARTS)]),
    shell:
        "{sys.executable} -m harness report {NAME:q} --reports-dir {REPORTS:q} --results-dir {RESULTS:q}"
