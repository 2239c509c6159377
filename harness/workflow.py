"""Helpers for the Snakefile: which matrix to run by default, the cells it expands to, and its --config checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.core.environment import cuda_present
from harness.core.errors import UsageError
from harness.core.path_problems import (
    FOLDER_ROOM,
    among_the_other_kind,
    broken_link,
    file_in_the_way,
    published_folder,
    too_long,
    unexpanded_home,
    unwritable,
)
from harness.core.suggest import did_you_mean
from harness.spec.matrix import UniqueKeyLoader, source_folder_problem

DEFAULT_CPU_MATRIX = "smoke"
DEFAULT_GPU_MATRIX = "seed-16gb"
# every --config key the Snakefile reads: a misspelled one (matrx=smoke) would otherwise run the default matrix
CONFIG_KEYS = ("matrix", "results_dir", "reports_dir", "reproduce", "warm_start", "replace")
FOLDERS = ("results_dir", "reports_dir")
FOLDER_DEFAULTS = {"results_dir": "results", "reports_dir": "reports"}
YES, NO = ("true", "yes", "on", "1", "y"), ("false", "no", "off", "0", "n")
FLAGS = {"reproduce": ("auto",), "warm_start": (), "replace": ()}  # yes/no keys, with the other words each takes


def default_matrix() -> tuple[str, str]:
    """The embedded default: the 16 GB matrix where a CUDA GPU is present, the CPU smoke matrix where not. Without
    an NVIDIA driver torch would find no GPU, and importing it would cost every Snakemake run seconds."""
    if cuda_present():
        import torch

        if torch.cuda.is_available():
            name = torch.cuda.get_device_name(0)
            return DEFAULT_GPU_MATRIX, f"a CUDA GPU is present ({name})"
    return DEFAULT_CPU_MATRIX, "no CUDA GPU is present, so the CPU smoke matrix runs (SmolLM2-135M)"


def flag(config: dict[str, Any], name: str, default: str) -> bool | str:
    """A yes/no --config value: true/yes/on/1 or false/no/off/0 (or a word FLAGS allows); anything else stops the
    run, since a word read as 'no' would silently do the other thing."""
    value = config.get(name, default)
    word = str(value).strip().lower()
    if word in YES:
        return True
    if word in NO:
        return False
    if word in FLAGS[name]:
        return word
    shown = "" if value is None else str(value)[:80]
    raise UsageError(f"--config {name}={shown!r}: write {name}=true or {name}=false"
                     + "".join(f" (or {name}={w})" for w in FLAGS[name]))


def flag_readings(config: dict[str, Any]) -> list[str]:
    """How each yes/no --config value written as another word than true or false (yes, 1, on, n) was read: told,
    since a word such as yes is read the YAML 1.1 way, which a person may not expect."""
    said = []
    for name in FLAGS:
        word = str(config.get(name)).strip().lower()
        if name in config and word in YES[1:] + NO[1:]:  # anything else is true, false, or refused by flag()
            said.append(f"--config {name}={str(config[name])[:80]} is read as {name}={str(word in YES).lower()}")
    return said


def elsewhere_note(workdir: Path, checkout: Path, folders: tuple[str, str], name: str, with_result: int,
                   cells: int) -> str | None:
    """Where Snakemake works in another folder than the checkout (--directory), the results and reports are that
    folder's, not the published ones beside the Snakefile: said, with how many cells already have a result there."""
    results, reports = folders
    if workdir.resolve() == checkout.resolve() or Path(results).is_absolute():
        return None
    return (f"working in {workdir} (snakemake --directory), not in the checkout {checkout}: results go to "
            f"{workdir / results / name}/, where {with_result} of the {cells} cells have one, and reports to "
            f"{workdir / reports / name}/; the published ones in the checkout are neither used nor changed")


def repeated_keys(argv: list[str]) -> list[str]:
    """The keys given twice after Snakemake's --config on its command line: Snakemake keeps the last of them
    without a word, so `matrix=a matrix=b` would run b."""
    keys = command_line_keys(argv)
    return sorted({k for k in keys if keys.count(k) > 1})


def command_line_keys(argv: list[str]) -> list[str]:
    """The keys given after Snakemake's --config on its command line, in order (a key given twice, twice)."""
    keys: list[str] = []
    taking = False
    for token in argv:
        if token in ("--config", "-C"):
            taking = True
            continue
        if token.startswith("--config="):
            taking, token = True, token.split("=", 1)[1]
        elif token.startswith("-"):
            taking = False
        if taking:
            keys.append(token.split("=", 1)[0])
    return keys


def forcerun_without_rule(argv: list[str]) -> str | None:
    """-R (--forcerun) given with no rule after it (at the end, or before another option): Snakemake takes it as
    forcing nothing and runs as without it; the option as written, or None."""
    for i, token in enumerate(argv):
        if token in ("-R", "--forcerun") and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            return token
    return None


REPORT_OPTIONS = ("--report", "--report-html-path")  # Snakemake's HTML report, by its own option or its plugin's


def report_paths(argv: list[str]) -> list[Path]:
    """The files Snakemake's --report (or --report-html-path) is asked to write, as given on its command line."""
    paths = []
    for i, token in enumerate(argv):
        option, _, value = token.partition("=")
        if option not in REPORT_OPTIONS:
            continue
        if not value and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            value = argv[i + 1]
        paths.append(Path(value or "report.html"))  # --report alone writes report.html here
    return paths


def check_report_path(argv: list[str]) -> None:
    """Snakemake's HTML report goes in a folder that exists, and in no published folder (results/<m>/, reports/<m>/),
    as no output of a vramlab command does: git would show it among the published files, and a rebuild would take it
    for theirs."""
    for path in report_paths(argv):
        # a folder missing or a file in the way: Snakemake would end its report with a FileNotFoundError or
        # NotADirectoryError traceback once the workflow has run
        blocker = file_in_the_way(path)
        if blocker is not None:
            raise UsageError(f"--report {path}: {blocker} is a file, not a folder, so the report cannot go under it; "
                             "give a path in a folder")
        if not path.parent.is_dir():
            raise UsageError(f"--report {path}: the folder {path.parent} does not exist; make it first "
                             f"(mkdir -p {path.parent}) or give a path in a folder that exists")
        published = published_folder(path.parent)
        if published is not None:
            raise UsageError(f"--report {path}: {path.parent} lies in {published}/, a folder of published results or "
                             "reports; write the HTML report elsewhere (e.g. --report report.html)")


def check_config(config: dict[str, Any], argv: list[str]) -> None:
    """Every --config value, before the matrix is read: an unknown key, a key given twice, an empty or listed
    value, a folder that is a file, a yes/no that is neither. One UsageError naming the key and the fix."""
    for key in config:
        if key not in CONFIG_KEYS:
            raise UsageError(f"--config {str(key)[:80]}=...: no such key{did_you_mean(str(key), CONFIG_KEYS)} "
                             f"(known: {', '.join(CONFIG_KEYS)})")
    check_report_path(argv)
    forcing = forcerun_without_rule(argv)
    if forcing is not None:
        raise UsageError(f"{forcing} names no rule, so Snakemake would force nothing and run as without it; name the "
                         f"rules to run again, such as {forcing} aggregate report")
    for key in repeated_keys(argv):
        raise UsageError(f"--config {key}=... given more than once; Snakemake would keep the last without a word: "
                         "give it once")
    for key in [k for k in ("matrix", *FOLDERS) if k in config]:
        value, what = config[key], "matrix" if key == "matrix" else "folder"
        if value is None or not str(value).strip():
            raise UsageError(f"--config {key}= names no {what}; " + (
                "give a name under ablations/ or a path to a YAML file (leave matrix out to run the embedded "
                "default)" if key == "matrix" else f"give a folder (leave {key} out for the default)"))
        if isinstance(value, list | dict | bool):
            raise UsageError(f"--config {key}={str(value)[:80]}: give one {what}, not a list or a yes/no")
        # results_dir=5: YAML reads a number, and Snakemake hands it on as one (no path is made of it)
        if key in FOLDERS and isinstance(value, int | float):
            given, path = (f"--config {key}={value}", f"{key}=./{value}") if key in command_line_keys(argv) else \
                (f"{key}: {value} in the --configfile", f"{key}: ./{value}")
            raise UsageError(f"{given}: YAML reads {value} as a number, not as a folder; write the folder as a path, "
                             f"such as {path}")
    for key in [k for k in FOLDERS if k in config]:
        if (home := unexpanded_home(str(config[key]))) is not None:  # Snakemake hands ~ on as it is
            raise UsageError(f"--config {key}={str(config[key])[:80]}: {home}")
        if (long := too_long(Path(str(config[key])), FOLDER_ROOM)) is not None:
            raise UsageError(f"--config {key}={str(config[key])[:80]}...: {long}; give a shorter folder")
        blocker = file_in_the_way(Path(str(config[key])) / "x")
        if blocker is not None:
            raise UsageError(f"--config {key}={str(config[key])[:80]}: {blocker} is a file, not a folder; give a "
                             "folder")
        if (broken := broken_link(Path(str(config[key])))) is not None:  # else a traceback where it is resolved
            raise UsageError(f"--config {key}={str(config[key])[:80]}: {broken}; give a folder")
    folders = {key: Path(str(config.get(key, default))).resolve() for key, default in FOLDER_DEFAULTS.items()}
    if folders["results_dir"] == folders["reports_dir"]:  # tables would lie among result files, read as damaged ones
        raise UsageError(f"--config results_dir and reports_dir are the same folder ({folders['results_dir']}); "
                         "give each its own")
    for key in [k for k in FOLDERS if k in config]:
        problem = _taken_folder(folders[key])
        if problem:
            raise UsageError(f"--config {key}={str(config[key])[:80]}: {problem}; give a folder of its own")
    for key in [k for k in FOLDERS if k in config]:
        problem = _crossed_folder(key, folders[key])
        if problem:
            raise UsageError(f"--config {key}={str(config[key])[:80]}: {problem}; give results and reports each a "
                             f"folder of their own (leave {key} out for {FOLDER_DEFAULTS[key]}/)")
    for key, default in (("reproduce", "auto"), ("warm_start", "true"), ("replace", "false")):
        flag(config, key, default)
    if flag(config, "replace", "false") and flag(config, "reproduce", "auto") is True:
        raise UsageError("--config replace=true and reproduce=true ask for opposite things (replace the results, or "
                         "measure the cells again beside them); give one")


def check_configfiles(paths: list[Path]) -> None:
    """A key written twice in one --configfile, or given by two of them: Snakemake keeps the last without a word, as
    it does for --config (repeated_keys). Snakemake has read each file already, or said why it could not."""
    given: dict[Any, Path] = {}
    for path in map(Path, paths):
        try:
            loader = UniqueKeyLoader(path.read_text(encoding="utf-8"))
            try:
                data = loader.get_single_data()
            finally:
                loader.dispose()
        except yaml.MarkedYAMLError as err:
            if err.problem and "written twice" in err.problem:
                line = err.problem_mark.line + 1 if err.problem_mark else "?"
                raise UsageError(f"--configfile {path}: line {line}: {err.problem}; give it once") from None
            continue
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        for key in data if isinstance(data, dict) else {}:
            if key in given:
                raise UsageError(f"--configfile: {str(key)[:80]} is given by {given[key]} and by {path}; Snakemake "
                                 "would keep the last without a word: give it once")
            given[key] = path


def _taken_folder(folder: Path) -> str | None:
    """A results or reports folder inside one that already has an owner: a matrix's results folder (its .matrix
    file says whose), where the new matrix's files would pass for that one's; or the matrix files' folder."""
    for above in [folder, *folder.parents]:
        if (above / ".matrix").is_file():
            return (f"{folder} lies in {above}/, a matrix's results folder (its .matrix file says whose), where "
                    "these files would pass for that matrix's")
    published = published_folder(folder)
    if published is not None:
        return f"{folder} lies in {published}/, a folder of published results or reports"
    return source_folder_problem(folder)


def _crossed_folder(key: str, folder: Path) -> str | None:
    """A results folder in a checkout's published reports/, or a reports folder in its results/ (the two swapped):
    each kind of file would be written among the other's published files."""
    return among_the_other_kind(folder, FOLDER_DEFAULTS[key])


def check_writable(config: dict[str, Any], matrix: str) -> None:
    """The results and reports folders (the matrix's own folder in each) can be written, or one UsageError naming
    the folder in the way: checked before any job, dry run too, so that a run never trains cells it cannot keep."""
    for key, default in FOLDER_DEFAULTS.items():
        folder = Path(str(config.get(key, default))) / matrix
        given = f"--config {key}={str(config[key])[:80]}" if key in config else f"{key} (by default {default})"
        in_the_way = folder if folder.exists() and not folder.is_dir() else file_in_the_way(folder)
        if in_the_way is not None:  # not a matter of permissions: a file stands where a folder must be
            raise UsageError(f"{given}: {in_the_way.absolute()} is a file, so the folder {folder} cannot be made "
                             "there; move the file away or give another folder")
        blocker = unwritable(folder)
        if blocker is not None:
            raise UsageError(f"{given}: {blocker.absolute()} cannot be written (a read-only file system, or no "
                             f"permission), so {folder} could not be made or filled; give a folder that can be written")


# Snakemake's options that only print (a listing, a summary, a plan): piped into `head`, such a run ends where head
# stops reading, as other command-line tools do, not in a BrokenPipeError traceback from Snakemake's print
PRINTING_OPTIONS = frozenset({"-n", "--dry-run", "--dryrun", "-S", "--summary", "-D", "--detailed-summary", "-l",
                              "--list", "--list-rules", "--lt", "--list-target-rules", "--dag", "--rulegraph",
                              "--filegraph", "--d3dag", "--list-changes", "--lc", "--list-input-changes", "--li",
                              "--list-params-changes", "--lp", "--list-code-changes", "--list-untracked", "--lu"})


def only_prints(argv: list[str]) -> bool:
    return any(token in PRINTING_OPTIONS or token.startswith(("--summary=", "--dag=")) for token in argv)


def cleanup_paths(argv: list[str]) -> list[str]:
    """The files named after --cleanup-metadata (--cm) on Snakemake's command line, up to the next option."""
    paths: list[str] = []
    taking = False
    for token in argv:
        if token in ("--cleanup-metadata", "--cm"):
            taking = True
        elif token.startswith("-"):
            taking = False
        elif taking:
            paths.append(token)
    return paths


def reproduction_targeted(targets: set[str] | frozenset[str]) -> bool:
    """Whether the run's targets reach the reproduction of the published cells: none named (rule all, the default),
    `all`, or the reproduce and compare rules or their files."""
    return not targets or any(t in ("all", "reproduce", "compare") or "/reproductions/" in t for t in targets)


def rules_left_out(allowed: set[str] | frozenset[str], named: list[str]) -> list[str]:
    """The rules the run names (its target rules, the default `all`, -R's) that --allowed-rules leaves out: Snakemake
    still plans a rule named so (the option restricts the rules that may make files, and is meant for its own
    cluster jobs), so the run would do what --allowed-rules seemed to forbid."""
    return [rule for rule in dict.fromkeys(named) if allowed and rule not in allowed]

