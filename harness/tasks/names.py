"""Whether an evaluation task's name is known here, without loading lm-eval's task index every time a matrix is
read: the project's tasks, then the names lm-eval's task YAML declare (task:, group:, tag:, read as text in under
a second), and only for a name not found there, lm-eval's own index (TaskManager, about 13 s), kept in the cache
folder per lm-eval version. A misspelled task is then caught when the matrix is validated, not after its cells
trained."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path

from harness.core.cache import cache_root
from harness.core.suggest import did_you_mean
from harness.tasks.catalog import PROJECT_TASKS

_DECLARED = re.compile(r"""^\s*(?:-\s*)?["']?(?:task|group|tag)["']?:\s*(.*?)\s*$""")
_ITEM = re.compile(r"""^\s*-\s*["']?([A-Za-z0-9_.\-]+)["']?\s*$""")


@functools.lru_cache(maxsize=1)
def _lm_eval() -> tuple[Path, str] | None:
    """lm-eval's task folder and version, found without importing it (a cell's measuring process reads matrices
    too)."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("lm_eval")
    if spec is None or spec.origin is None:
        return None
    try:
        version = importlib.metadata.version("lm_eval")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    return Path(spec.origin).resolve().parent / "tasks", version


@functools.lru_cache(maxsize=1)
def declared_names() -> frozenset[str]:
    """Every name lm-eval's task YAML declare, as text: a superset of most of lm-eval's tasks, groups and tags."""
    found = _lm_eval()
    if found is None:
        return frozenset()
    names: set[str] = set()
    for folder, _, files in os.walk(found[0]):
        for file in files:
            if not file.endswith(".yaml"):
                continue
            try:
                lines = Path(folder, file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for i, line in enumerate(lines):
                match = _DECLARED.match(line)
                if not match:
                    continue
                value = match.group(1)
                if value.startswith("["):
                    names.update(v.strip().strip("'\"") for v in value.strip("[]").split(","))
                elif value:
                    names.add(value.strip("'\""))
                else:
                    for following in lines[i + 1:]:
                        item = _ITEM.match(following)
                        if not item:
                            break
                        names.add(item.group(1))
    return frozenset(names)


def _index_path() -> Path | None:
    found = _lm_eval()
    if found is None:
        return None
    where = hashlib.sha256(str(found[0]).encode()).hexdigest()[:10]
    return cache_root() / "lm-eval-tasks" / (re.sub(r"[^A-Za-z0-9_.-]", "_", f"{found[1]}-{where}") + ".json")


def _cached_index() -> frozenset[str] | None:
    path = _index_path()
    try:
        return frozenset(json.loads(path.read_text())) if path is not None else None
    except (OSError, ValueError):
        return None


@functools.lru_cache(maxsize=1)
def indexed_names() -> frozenset[str]:
    """lm-eval's own list of its tasks, groups and tags (TaskManager), cached per lm-eval version and path."""
    path = _index_path()
    if path is None:
        return frozenset()
    cached = _cached_index()
    if cached is not None:
        return cached
    from lm_eval.tasks import TaskManager

    names = sorted(TaskManager().all_tasks)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(names))
        tmp.replace(path)
    except OSError:
        pass
    return frozenset(names)


def unknown_task_problem(tasks: list[str] | tuple[str, ...]) -> str | None:
    """Why one of these task names cannot be run here (no vramlab task and no installed lm-eval task has it), or
    None. Where lm-eval is not installed, lm-eval names are taken on trust."""
    others = [t for t in tasks if t not in PROJECT_TASKS]
    if not others or _lm_eval() is None:
        return None
    cached = _cached_index()
    unknown = [t for t in others if t not in (cached if cached is not None else declared_names())]
    unknown = [t for t in unknown if t not in indexed_names()] if unknown else []
    if not unknown:
        return None
    hint = did_you_mean(unknown[0], [*PROJECT_TASKS, *indexed_names()])
    return f"no vramlab task and no installed lm-eval task is named {unknown[0]!r}{hint}"
