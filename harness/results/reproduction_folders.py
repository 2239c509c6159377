"""A machine's reproductions folder, results/<matrix>/reproductions/<machine>/, is a folder of its own: one that is a
link to (or resolves into) the matrix's published results would compare them with themselves, and a reproduction
run would write its measurements among them."""

from __future__ import annotations

from pathlib import Path


def reproduction_folder_problem(results_dir: Path, name: str, machine: str) -> str | None:
    """Why results_dir/name/reproductions/machine cannot hold that machine's reproductions, or None (also where it
    does not exist yet)."""
    folder = Path(results_dir) / name / "reproductions" / machine
    if not folder.is_dir():
        return None
    published = (Path(results_dir) / name).resolve()
    target = folder.resolve()
    inside_published = target.is_relative_to(published) and not target.is_relative_to(published / "reproductions")
    if not (inside_published or published.is_relative_to(target)):
        return None
    where = ("the published results of '{}' themselves" if target == published else
             "a folder inside the published results of '{}'" if inside_published else
             "a folder that holds the published results of '{}'").format(name)
    return (f"{folder} is a link that resolves to {target}, {where}, so they would be compared with themselves; a "
            "machine's reproductions need a folder of their own: remove the link (the published results stay as "
            "they are) and reproduce the cells into it")
