"""Results made before budgets had one spelling: `vramlab migrate` moves them to the id their budget has now.
A result file keeps its measurements and moves to its new id and file name with its evaluations; one whose new name
is taken stays where it is, and is said. Why, and what is not moved: docs/measurement.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.budget import canonical_budget, canonical_host_budget
from harness.core.made_folders import make_folders
from harness.results.store import _load_json, parse, result_files, write_atomic
from harness.spec.cells import cell_id_of
from harness.spec.settings import defaults

_CANONICAL = {"budget": canonical_budget, "host_budget": canonical_host_budget}


@dataclass(frozen=True)
class Respelled:
    old: Path
    new: Path | None  # None: the new name was taken, nothing moved
    changes: dict[str, tuple[Any, Any]]  # setting -> (as written, canonical)
    taken: Path | None = None  # what took the new name: the new result file, or its evaluations' folder

    def describe(self) -> str:
        what = ", ".join(f"{k} {a!r} is {b!r}" for k, (a, b) in self.changes.items())
        if self.new is not None:
            return f"moved {self.old} to {self.new.name} ({what})"
        if self.taken is not None and self.taken.is_dir():
            return (f"kept {self.old}: {what}, but {self.taken}/ already holds evaluations of that cell, so its own "
                    "evaluations could not move with it and would be left without their result; move one of the two "
                    "aside, then migrate again")
        return f"kept {self.old}: {what}, but its new file is already there (two results of one cell)"


def respelled_config(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, tuple[Any, Any]]]:
    """The config with its budgets in the canonical spelling, and what changed."""
    changes = {}
    for name, canonical in _CANONICAL.items():
        if name in config and canonical(config[name]) != config[name]:
            changes[name] = (config[name], canonical(config[name]))
    return {**config, **{k: new for k, (_, new) in changes.items()}}, changes


def respell(path: Path) -> Respelled | None:
    """Move one cell result (and its evaluations) to the id of its canonical budget; None where it already has
    it, or the file is no cell result."""
    data = _load_json(path)
    if not isinstance(data, dict) or data.get("kind") == "evaluation" or not isinstance(data.get("config"), dict):
        return None
    config, changes = respelled_config(data["config"])
    if not changes:
        return None
    new_id = cell_id_of({**defaults(), **config})
    target = path.with_name(f"{new_id}.json")
    if target.exists():
        return Respelled(path, None, changes, target)
    old_id = data["cell_id"]
    evaluations = path.parent / "evaluations"
    if result_files(evaluations / old_id) and (evaluations / new_id).exists():
        return Respelled(path, None, changes, evaluations / new_id)
    write_atomic(target, parse(target, {**data, "config": config, "cell_id": new_id}))
    path.unlink()
    _move_evaluations(path.parent / "evaluations", old_id, new_id)
    return Respelled(path, target, changes)


def _move_evaluations(folder: Path, old_id: str, new_id: str) -> None:
    source, target = folder / old_id, folder / new_id
    if not source.is_dir() or target.exists():
        return
    make_folders(target)
    for file in result_files(source):
        write_atomic(target / file.name, parse(file, {**_load_json(file), "cell_id": new_id}))
        file.unlink()
    if not any(source.iterdir()):
        os.rmdir(source)


def respell_all(paths: list[Path]) -> list[Respelled]:
    return [found for path in paths if path.suffix == ".json" for found in [respell(path)] if found is not None]
