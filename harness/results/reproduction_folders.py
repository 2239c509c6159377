"""A machine's reproductions folder, results/<matrix>/reproductions/<machine>/, is a folder of its own: one that is a
link to (or resolves into) the matrix's published results would compare them with themselves, and a reproduction
run would write its measurements among them. No link is taken there at all (reproductions/ or <machine>/): one into
another matrix's published folder would have its measurements written among that matrix's results."""

from __future__ import annotations

from pathlib import Path


def _compared_with_themselves(folder: Path, name: str, published: Path) -> str | None:
    """Why `folder` (an existing folder) would hold the matrix's published results themselves, or None."""
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


def _where(target: Path, results_dir: Path) -> str:
    """Where a link's target lies, said where it is among the results (another matrix's published folder)."""
    root = results_dir.resolve()
    if not target.is_relative_to(root):
        return ""
    parts = target.relative_to(root).parts
    return (f", the results folder {results_dir} itself" if not parts else
            f", inside {results_dir / parts[0]}, among the published results of '{parts[0]}'")


def reproduction_folder_problem(results_dir: Path, name: str, machine: str) -> str | None:
    """Why results_dir/name/reproductions/machine cannot hold that machine's reproductions, or None (also where it
    does not exist yet)."""
    published = Path(results_dir) / name
    folder = published / "reproductions" / machine
    if folder.is_dir():
        problem = _compared_with_themselves(folder, name, published.resolve())
        if problem:
            return problem
    link = next((p for p in (folder.parent, folder) if p.is_symlink()), None)
    if link is None:
        return None
    return (f"{link} is a link that resolves to {link.resolve()}{_where(link.resolve(), Path(results_dir))}; a "
            "machine's reproductions are written into a folder of their own, never through a link: remove the link "
            "(what it leads to stays as it is) and run again")
