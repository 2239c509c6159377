"""A results folder named one level off, told before a matrix's results are read from it: the matrix's own folder
(results/<matrix>, which holds the result files) or a reports folder (reports/<matrix> holds cells.csv and the
charts) would give every cell as pending, which reads as a matrix not run rather than a folder named wrong."""

from __future__ import annotations

import re
from pathlib import Path

RESULT_FILE = re.compile(r"[0-9a-f]{12}\.json")
# what `vramlab aggregate` and `report` write into reports/<matrix>/, and never into a results folder
REPORT_FILES = ("cells.csv", "design.json", "report.md")


def missing_results_dir(results_dir: Path, given: str, holding: str) -> str | None:
    """Why a --results-dir that does not exist (written `given`) can be read for nothing; `holding` says what the
    command reads in it. None where it is a folder."""
    if Path(results_dir).is_dir():
        return None
    return f"--results-dir {given} does not exist; give the results folder of {holding}"


def results_dir_mistake(results_dir: Path, name: str, given: str) -> str | None:
    """Why `results_dir` (written `given`) is not the folder that holds <name>/<cell_id>.json, or None."""
    own = Path(results_dir) / name
    if own.is_dir():
        reports = [f for f in REPORT_FILES if (own / f).is_file()]
        if reports and not _holds_results(own):
            return (f"results_dir {given!r}: {own} holds the reports of '{name}' ({', '.join(reports)}), not its "
                    "result files; give the folder of results, such as the checkout's results")
        return None
    resolved = Path(results_dir).resolve()
    if resolved.name == name and (_holds_results(resolved) or (resolved / ".matrix").is_file()):
        return (f"results_dir {given!r} is the folder of '{name}' itself (it holds its result files); give the folder "
                f"above it, {str(resolved.parent)!r}, which holds {name}/")
    return None


def _holds_results(folder: Path) -> bool:
    return any(RESULT_FILE.fullmatch(p.name) for p in Path(folder).glob("*.json"))
