"""A published result this checkout has lost: a committed result (or evaluation) file deleted or replaced by a
folder, or the committed .matrix of its folder deleted or edited. The workflow, `run-cell` and `evaluate` measure a
cell whose file is missing, so without this a deleted published result would be measured again as if it were new
and the published reference replaced by the measurement of this machine."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.core.committed_files import ChangedFile, changed_committed, in_checkout

OWNER_FILE = ".matrix"


def lost_published(folder: Path, names: Iterable[str]) -> ChangedFile | None:
    """The first of `names` (result files, paths under the matrix's results `folder`), or the folder's .matrix, that
    the last commit holds and this checkout has lost (a result deleted or made a folder; the .matrix also edited)."""
    place = in_checkout(folder)
    if place is None:
        return None
    root, relative = place
    wanted = {(relative / name).as_posix() for name in names}
    owner = (relative / OWNER_FILE).as_posix()
    return next((changed for changed in changed_committed(root, relative.as_posix() + "/")
                 if changed.path == owner or (changed.path in wanted and changed.change != "edited")), None)


def lost_published_problem(folder: Path, names: Iterable[str]) -> str | None:
    """One line naming the published file lost and how to restore it, or None."""
    lost = lost_published(folder, names)
    if lost is None:
        return None
    if Path(lost.path).name == OWNER_FILE:
        return (f"{lost.shown()} (which names the matrix file whose results {folder}/ holds) is {lost.change} here, "
                f"and the commit has it otherwise; restore it with {lost.restore()}, or commit the change first")
    return (f"{lost.shown()} is a published result (committed) and is {lost.change} here, so its cell would be "
            f"measured again as if it were new; restore it with {lost.restore()}, or commit its deletion first "
            "(`git rm`) to measure it again")
