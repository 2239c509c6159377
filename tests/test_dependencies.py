"""The declared dependencies are honest: each is imported by the harness, or named here with where it is used
without an import; lm-eval, whose private parts the harness reads, is bounded above."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import tomllib

import pytest
from packaging.requirements import Requirement

from tests.conftest import REPO

# used, but never imported by harness/: the reason, and a piece of the project that shows the use
USED_WITHOUT_IMPORT = {
    "accelerate": ("transformers places weights with it (from_pretrained's device_map)", "harness", "device_map"),
    "tabulate": ("pandas writes Markdown tables through it (DataFrame.to_markdown)", "harness", ".to_markdown("),
    "snakemake": ("the workflow engine that runs the Snakefile", "Snakefile", "rule cell:"),
}


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _imported_modules() -> set[str]:
    found: set[str] = set()
    for path in (REPO / "harness").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def _key(name: str) -> str:
    return name.lower().replace("_", "-")


@functools.cache
def _owners() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _modules_of(distribution: str) -> set[str]:
    return {module for module, owners in _owners().items() if _key(distribution) in map(_key, owners)}


@pytest.mark.slow
def test_every_declared_dependency_is_used():
    imported, unused = _imported_modules(), []
    for line in _project()["dependencies"]:
        name = Requirement(line).name
        if _key(name) in USED_WITHOUT_IMPORT:
            continue
        modules = _modules_of(name)
        assert modules, f"{name} is not installed here, so what it provides cannot be told"
        if not modules & imported:
            unused.append(name)
    assert not unused, f"declared in pyproject.toml and imported nowhere under harness/: {unused}"


def test_each_dependency_used_without_an_import_is_declared_and_its_use_is_there():
    declared = {_key(Requirement(line).name) for line in _project()["dependencies"]}
    for name, (why, where, mark) in USED_WITHOUT_IMPORT.items():
        assert name in declared, f"{name} ({why}) is listed here but no longer declared"
        files = [REPO / where] if (REPO / where).is_file() else (REPO / where).rglob("*.py")
        assert any(mark in path.read_text() for path in files), f"{name}: {why}, but {where} has no {mark!r}"


def test_lm_eval_is_bounded_above():
    (lm_eval,) = [Requirement(line) for line in _project()["dependencies"] if _key(Requirement(line).name) == "lm-eval"]
    assert any(spec.operator in ("<", "<=", "~=", "==") for spec in lm_eval.specifier), str(lm_eval)
    assert importlib.metadata.version("lm_eval") in lm_eval.specifier  # the installed one is admitted
