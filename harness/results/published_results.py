"""A published result this checkout has lost: a committed result (or evaluation) file deleted or replaced by a
folder, or the committed .matrix of its folder deleted or edited. The workflow, `run-cell` and `evaluate` measure a
cell whose file is missing, so without this a deleted published result would be measured again as if it were new
and the published reference replaced by the measurement of this machine."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.core.committed_files import ChangedFile, changed_committed, in_checkout, untracked
from harness.core.path_problems import published_folder, published_place

OWNER_FILE = ".matrix"
# the published folder of the benchmark scripts, whose own tables and notes (comparison.md, walls.tsv) are written
# there before they are committed
BENCHMARKS = "benchmarks"


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


def _written_by_vramlab(relative: Path) -> bool:
    """Whether a file at `relative` in a matrix's results folder is of a kind vramlab writes there: JSON (results,
    evaluations, the freshness record, results set aside, all of which `check` reads, a .JSON one too), the .matrix,
    or a log."""
    return relative.suffix.lower() == ".json" or relative.suffix == ".log" or relative.name == OWNER_FILE \
        or relative.parts[0] == "logs"


def stray_files(folder: Path) -> list[str]:
    """One line for each file or folder at or under the results `folder` that lies among published results, is
    neither tracked nor ignored by git, and is of no kind vramlab writes there (another tool's database or
    figures): it would pass for part of the published results, and git shows it among them."""
    entries: dict[Path, int] = {}
    for path in untracked(folder):
        published = published_folder(path)
        if published is None:  # a file at the top of the checkout's results/, or no published one at all
            if published_place(path) is not None:
                entries[path] = 1
            continue
        relative = (path.parent.resolve() / path.name).relative_to(published)
        if published.name != BENCHMARKS and not _written_by_vramlab(relative):
            entry = path.parents[len(relative.parts) - 2] if len(relative.parts) > 1 else path
            entries[entry] = entries.get(entry, 0) + 1
    return [f"{entry}{f'/ ({count} files)' if entry.is_dir() else ''}: vramlab writes no such file among published "
            f"results, and git neither tracks nor ignores it, so it would pass for part of {entry.parent}/; move it "
            "out of the folder (or commit it, if it belongs with the results)"
            for entry, count in sorted(entries.items())]
