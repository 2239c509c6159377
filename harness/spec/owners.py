"""Which matrix file a results or reports folder belongs to: a matrix is the file it is (its resolved path), never
a name, so a `smoke.yaml` from another ablations/ folder is not the checkout's. results/<name>/ belongs to the file
its .matrix names (a path from the checkout, the folder that holds results/, or an absolute one) and, where it has no
.matrix, like reports/<name>/, to the checkout's own ablations/<name>.yaml where there is one; a folder that belongs
to none is claimed by the first matrix that writes there."""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.atomic_files import write_text_atomic
from harness.core.made_folders import make_folders
from harness.core.path_problems import file_in_the_way, linked_folder_problem, not_a_regular_file
from harness.spec.matrix import MatrixError, ablation_dirs, foreign_folder, results_folder_owner, shipped_matrices


def checkout_of(folder: Path) -> Path:
    """The folder that holds a results (or reports) folder: the checkout, where ablations/ lies beside it."""
    return Path(folder).resolve().parent


def matrix_identity(path: Path, results_dir: Path) -> str:
    """What a new .matrix file says: the matrix file's path from the checkout where it lies in it, else its absolute
    path (both resolved, so that a link or a `..` names the file itself)."""
    resolved, checkout = Path(path).resolve(), checkout_of(results_dir)
    return resolved.relative_to(checkout).as_posix() if resolved.is_relative_to(checkout) else str(resolved)


def owner_file(owner: str, results_dir: Path) -> Path:
    """The matrix file a .matrix names. ablations/<name>.yaml that is not in the checkout (results copied out of it)
    names vramlab's own matrix of that name, and where vramlab ships none, the one the matrix folders hold (a
    .matrix written before owners were paths named any ablations/ folder's file so)."""
    named = Path(owner)
    if named.is_absolute():
        return named
    here = checkout_of(results_dir) / named
    if here.is_file() or named.parent != Path("ablations"):
        return here
    found = [shipped_matrices().get(named.stem), *(folder / named.name for folder in ablation_dirs())]
    return next((path for path in found if path is not None and path.is_file()), here)


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is gone: the same path is the same file
        return Path(a).resolve() == Path(b).resolve()


def folder_owner(parent: Path, name: str, marked: bool = True) -> tuple[Path, str] | None:
    """The matrix file that <parent>/<name>/ belongs to and how that is known, or None where it belongs to none yet.
    `marked`: a results folder, whose .matrix file says it first."""
    marker = Path(parent) / name / ".matrix"
    kind = not_a_regular_file(marker) if marked else None
    if kind is not None:  # else the folder would pass for one that no matrix file has claimed yet
        raise MatrixError(f"{marker} is {kind}, not the file that names the matrix file whose results "
                          f"{marker.parent}/ holds; remove it (a matrix that writes there claims the folder again), "
                          "or put in its place a file holding that matrix file's path")
    if marked and marker.is_file():
        owner = results_folder_owner(marker)
        return owner_file(owner, parent), f"its .matrix file names {owner}"
    own = checkout_of(parent) / "ablations" / f"{name}.yaml"
    if own.is_file():
        return own, "the checkout's matrix of that name"
    return None


def owner_problem(parent: Path, name: str, path: Path, what: str, marked: bool = True,
                  writes: bool = True) -> str | None:
    """Where the matrix file `path` may not write its `what` ("results" or "reports") into <parent>/<name>/, one line
    saying whose the folder is, or that it is a broken link or one into a published folder (`writes` False: it is
    only read)."""
    linked = linked_folder_problem(Path(parent), name, what, writes)
    if linked is not None:  # first: its owner would be looked for through the link, or not found behind a broken one
        return linked
    owner = folder_owner(parent, name, marked)
    if owner is None or same_file(owner[0], path):
        return None
    folder = Path(parent) / name
    if marked and (folder / ".matrix").is_file():
        return foreign_folder(path, folder, results_folder_owner(folder / ".matrix"))
    return (f"{path}: {folder}/ holds the {what} of {owner[0]} ({owner[1]}), another file of the same name; rename "
            f"this file (its name becomes the {what} folder's), or give another {what} folder")


def check_results_folder(results_dir: Path, name: str, path: Path, writes: bool = True) -> None:
    problem = owner_problem(results_dir, name, path, "results", writes=writes)
    if problem:
        raise MatrixError(problem)


def check_reports_folder(reports_dir: Path, name: str, path: Path) -> None:
    problem = owner_problem(reports_dir, name, path, "reports", marked=False)
    if problem:
        raise MatrixError(problem)


def claim_results_folder(results_dir: Path, name: str, path: Path, write: bool = True) -> None:
    """Two different matrix files never share one results folder: the first to write there owns it, where the
    checkout's own matrix of that name does not. `write` False only checks (a dry run changes nothing)."""
    marker = Path(results_dir) / name / ".matrix"
    blocker = file_in_the_way(marker)
    if blocker is not None:
        raise MatrixError(f"{blocker} is a file, not a folder, so the results of {name} cannot be kept under it; "
                          "move it away or give another results folder")
    check_results_folder(results_dir, name, path)
    if not write or folder_owner(results_dir, name) is not None:  # the checkout's own needs no .matrix to say so
        return
    make_folders(marker.parent)
    write_text_atomic(marker, matrix_identity(path, results_dir) + "\n")  # a full disk leaves no empty owner file
