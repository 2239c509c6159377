"""The shape of the harness: packages in layers that import downward only, backends behind one interface, one
typed result model with a committed schema, stable cell ids, settings declared by their owners, matrix files
found from any install."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.results import ResultFileError, check
from harness.results.schemas import MODELS, SCHEMA_DIR, schema_text
from harness.spec.matrix import MatrixError, expand, matrix_path
from harness.spec.settings import SETTINGS, table
from harness.stack.techniques import TECHNIQUES
from tests.conftest import REPO, repository_files

# Every committed result file, by matrix: ids are hashes of settings, and a result is found by its id, so
# a change that renamed them would make every measured cell run again.
COMMITTED_IDS = {
    "smoke": "4c55591d5771 4d760c8f99f7 5572c2c0f8c3 a4e8c87b1923 c5338522d7ed d30cc4a4ec6b d9946bcf27e9 "
             "f91c2e11fa9e",
    "seed-16gb": "1f7282a39590 2d9714e6a664 3232155d81f9 399b21bcd12e 5f0578d53b9a 6407202c98b9 6d9ec62f0bd7 "
                 "85a206269e28 9d8939987160 ad95115fb562 b6c7834faef4 b9f01f5525dd bfc2e89617ed d9335a081415 "
                 "e68d22de5133 e840f978b761 fa83ade5529c fe805396628b",
    "gpu-check": "277502899636 5642a7d43973 69b139a44bf3 71ab134f2004 77a38d7b251b 95444975f52c 985ce8fd207b "
                 "aa1e2b0ea208 adfe262831c8 c4518d03b0c1 dd1d9f1b9944 f733b7ddfa6c",
}

# Ways a module could ask which model path is in use; only harness/stack/backends/ may.
BACKEND_QUESTIONS = re.compile(r"\b(plan\.loader|loader ==|backend\.name|isinstance\([^)]*Backend|"
                               r"import unsloth|from unsloth|FastLanguageModel|unsloth_checkpointing)\b")


def test_no_module_outside_backends_branches_on_the_backend():
    offenders = []
    for path in sorted((REPO / "harness").rglob("*.py")):
        if "backends" in path.relative_to(REPO / "harness").parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if BACKEND_QUESTIONS.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_the_grep_would_catch_a_branch():
    assert BACKEND_QUESTIONS.search('        if plan.loader == "unsloth":')
    assert BACKEND_QUESTIONS.search("            from unsloth import FastLanguageModel")
    assert not BACKEND_QUESTIONS.search('    levels=("none", "liger", "unsloth")')


@pytest.mark.parametrize("matrix", sorted(COMMITTED_IDS))
def test_every_committed_cell_keeps_its_id(matrix):
    pinned = set(COMMITTED_IDS[matrix].split())
    on_disk = {p.stem for p in (REPO / "results" / matrix).glob("*.json")}
    assert on_disk == pinned
    assert {c.cell_id for c in expand(matrix)} == pinned
    for cell_id in pinned:
        check(REPO / "results" / matrix / f"{cell_id}.json")  # the config inside hashes to the file's id


@pytest.mark.slow
def test_vramlab_check_passes_on_every_committed_result():
    folders = [str(REPO / "results" / m) for m in COMMITTED_IDS]
    done = subprocess.run([sys.executable, "-m", "harness", "check", *folders], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{sum(len(v.split()) for v in COMMITTED_IDS.values())} of" in done.stdout


def test_tests_are_filed_by_what_they_protect_not_by_the_trial_that_found_them():
    trial_named = [p.name for p in (REPO / "tests").glob("test_*.py") if re.search(r"round\d|bad_input", p.name)]
    assert trial_named == []
    assert len(list((REPO / "tests").glob("test_*_input.py"))) >= 10  # the bad-input cases, by surface


def test_no_committed_result_names_a_local_path():
    for path in (p for p in repository_files(REPO / "results") if p.suffix == ".json"):
        text = path.read_text()
        assert not re.search(r'"(/root|/home|/tmp|/work|/Users)/', text), path


def _corrupt(tmp_path, change) -> tuple[str, str]:
    source = REPO / "results" / "seed-16gb" / "1f7282a39590.json"
    data = json.loads(source.read_text())
    target = tmp_path / source.name
    text = change(data)
    target.write_text(text if isinstance(text, str) else json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "harness", "check", str(target)], capture_output=True, text=True)
    assert done.returncode != 0
    return done.stderr, str(target)


@pytest.mark.slow
@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d["metrics"].pop("peak_device_bytes") and None, "an ok cell needs metrics.peak_device_bytes"),
    (lambda d: d["metrics"].update(peak_device_bytes="ten"), "metrics.peak_device_bytes"),
    (lambda d: d["metrics"].update(peak_device_bytes=-1), "metrics.peak_device_bytes"),
    (lambda d: d.update(status="fine"), "status"),
    (lambda d: d.update(schema_version=7), "schema_version"),
    (lambda d: d["config"].update(context=4096), "config does not match cell_id"),
    (lambda d: d.pop("cell_id") and None, "cell_id"),
    (lambda d: d.update(unexpected=1), "unexpected"),
    (lambda d: json.dumps(d).replace(f'"mfu": {d["metrics"]["mfu"]!r}', '"mfu": NaN'), "NaN is not a JSON number"),
    (lambda d: json.dumps(d)[:500], "not valid JSON"),
])
def test_vramlab_check_names_file_and_field_of_a_corrupted_copy(tmp_path, change, field):
    stderr, path = _corrupt(tmp_path, change)
    assert path in stderr and field in stderr


def test_a_result_named_for_another_cell_is_refused(tmp_path):
    copy = tmp_path / "000000000000.json"
    shutil.copy(REPO / "results" / "seed-16gb" / "1f7282a39590.json", copy)
    with pytest.raises(ResultFileError, match=r"would be named 1f7282a39590\.json"):
        check(copy)


def test_committed_json_schemas_are_those_of_the_model():
    for name, model in MODELS.items():
        assert (SCHEMA_DIR / name).read_text() == schema_text(model), f"run `vramlab schema` ({name})"


@pytest.mark.slow
def test_every_technique_declares_its_own_settings():
    owners = {name: s.owner for name, s in SETTINGS.items()}
    for technique in TECHNIQUES:
        assert technique.settings and technique.settings[0].name == technique.axis
        assert all(owners[s.name] == technique.axis for s in technique.settings)
    printed = subprocess.run([sys.executable, "-m", "harness", "settings"], capture_output=True, text=True).stdout
    assert printed == table() + "\n"
    for name in SETTINGS:
        assert f"\n{name}\t" in printed


def test_list_cells_override_fixed(tmp_path):
    from harness.spec.matrix import expand_spec

    cells = expand_spec("m", {"fixed": {"context": 64, "adapter": "rslora"}, "design": "list",
                              "cells": [{"name": "a"}, {"name": "b", "adapter": "lora"}]})
    assert [c.settings["adapter"] for c in cells] == ["rslora", "lora"]
    assert all(c.settings["context"] == 64 for c in cells)


def test_matrix_files_are_found_from_another_folder_and_from_VRAMLAB_ABLATIONS(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert matrix_path("smoke") == REPO / "ablations" / "smoke.yaml"  # the source checkout
    own = tmp_path / "mine"
    own.mkdir()
    (own / "smoke.yaml").write_text((REPO / "ablations" / "smoke.yaml").read_text())
    monkeypatch.setenv("VRAMLAB_ABLATIONS", str(own))
    assert matrix_path("smoke") == own / "smoke.yaml"
    with pytest.raises(MatrixError, match=r"looked in .*mine"):
        expand("no-such-matrix")


@pytest.mark.parametrize("name", ["...", ".hidden", "a b", "x;y"])
def test_a_matrix_file_name_cannot_name_a_folder_outside_results(tmp_path, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text("axes: {adapter: [lora]}\n")
    with pytest.raises(MatrixError, match="must start with a letter or digit"):
        expand(str(path))


# --- the layers -------------------------------------------------------------------------------------------------
# harness/ is packages in layers, the bottom first (docs/layout.md): a module imports modules of its own package or
# of a package MAY_IMPORT names for it, only at its top (never inside a function, where an import hides from a
# reader and from this test), and no import cycle exists. `python -m tests.test_structure` prints the package graph.
LAYERS = ("core", "data", "stack", "tasks", "spec", "results", "estimate", "run", "process", "evaluation", "report",
          "entry")
# which package may import which: each a subset of the layers below it, so the graph has no cycle
MAY_IMPORT: dict[str, set[str]] = {
    "core": set(),  # files, budgets, the environment, the console: knows nothing of cells
    "data": {"core"},  # training data and corpora
    "stack": {"core", "data"},  # models, backends, techniques: what a cell's settings mean to the training stack
    "tasks": {"core", "data"},  # evaluation tasks, their data
    "spec": {"core", "data", "stack", "tasks"},  # matrix files and cells, checked against the models they name
    # the result files: written by run and process, read by everything above; they know cells (spec) and the metrics
    # of the project's tasks (tasks), never a model source or the training stack
    "results": {"core", "spec", "tasks"},
    "estimate": {"core", "stack", "spec", "results"},  # predicted memory, calibrated against results
    "run": {"core", "data", "stack", "spec", "results", "estimate"},  # the measuring process of one cell
    "process": {"core", "data", "stack", "spec", "results", "estimate", "run"},  # the processes that run cells
    "evaluation": {"core", "data", "stack", "tasks", "spec", "results"},  # lm-eval over a trained cell
    # tables, charts, claims: from result files only, so never from the code that runs cells (run, process)
    "report": {"core", "data", "stack", "tasks", "spec", "results", "estimate", "evaluation"},
    "entry": set(LAYERS) - {"entry"},  # the command line, the workflow
}
# modules directly under harness/: the entry points, the package itself (its version), and flops.py, which stays
# at the path every published methods.md cites for the FLOPs formula
TOP_LEVEL = {"harness": "core", "harness.flops": "core", "harness.cli": "entry", "harness.commands": "entry",
             "harness.matrix_commands": "entry",
             "harness.__main__": "entry", "harness.workflow": "entry", "harness.api": "entry"}
# the imports between harness modules inside a function: the command line loads what runs a command once its
# arguments are read, so that `vramlab --help` stays fast (tests/test_command_line.py times it), and a matrix
# command loads none of the reports' libraries
DEFERRED = {("harness.cli", "harness.commands"), ("harness.cli", "harness.matrix_commands")}
# the training stack: imported inside the functions that use it, so that importing any harness module (a
# warm-start spare importing ahead, `vramlab cells`) never loads it, nor what Unsloth must patch first; and the
# experiment trackers `vramlab export` writes to, optional extras
HEAVY = ("torch", "transformers", "peft", "trl", "accelerate", "datasets", "bitsandbytes", "liger_kernel",
         "unsloth", "unsloth_zoo", "lm_eval", "triton", "flash_attn", "mlflow", "tensorboard", "wandb")


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # a module of the package, or a third-party name's first part
    line: int
    nested: bool  # inside a function or a class
    missing: bool = False  # a harness module that does not exist (resolved to the package above it)


def read_imports(root: Path) -> tuple[dict[str, Path], list[Import]]:
    """Every module under root/harness (dotted name -> file) and every import in them, resolved to the module it
    loads: `from a.b import c` is a.b.c where that is a module, else a.b."""
    modules: dict[str, Path] = {}
    for path in sorted((root / "harness").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path

    def resolve(name: str) -> str:
        while name not in modules and "." in name:
            name = name.rpartition(".")[0]
        return name

    found: list[Import] = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]

        def visit(node: ast.AST, nested: bool, module: str = module, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                inner = nested or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)
                names: list[str] = []
                if isinstance(child, ast.Import):
                    names = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        parts = package.split(".")[:len(package.split(".")) - child.level + 1]
                        base = ".".join([*parts, *([base] if base else [])])
                    names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                             for alias in child.names]
                for name in dict.fromkeys(names):
                    ours = name.split(".")[0] == "harness"
                    target = resolve(name) if ours else name.split(".")[0]
                    # `from a.b import c` asks for module a.b; `import a.b` too
                    asked = base if isinstance(child, ast.ImportFrom) else name
                    if target != module:
                        found.append(Import(module, target, child.lineno, inner, ours and asked not in modules))
                visit(child, inner)

        visit(ast.parse(path.read_text(), str(path)), False)
    return modules, found


def layer_of(module: str) -> str | None:
    if module in TOP_LEVEL:
        return TOP_LEVEL[module]
    package = module.split(".")[1] if module.count(".") >= 1 else None
    return package if (package in LAYERS and module.count(".") >= 2) or module == f"harness.{package}" else None


def problems(modules: dict[str, Path], imports: list[Import]) -> list[str]:
    """Everything that breaks the layers, one line each (empty when the house stands as built)."""
    found = [f"{m}: in no layer (a new package belongs in LAYERS, in its place)" for m in modules
             if layer_of(m) is None]
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in imports:
        where = f"{imp.importer}:{imp.line}"
        if imp.target == "tools":
            found.append(f"{where}: imports tools/, which is not the runtime")
        if imp.target in HEAVY and not imp.nested:
            found.append(f"{where}: imports {imp.target} at import time; import it inside the function that needs it")
        if imp.missing:
            found.append(f"{where}: imports a harness module that does not exist (under {imp.target})")
        if imp.target not in modules:
            continue
        graph[imp.importer].add(imp.target)
        if imp.nested and (imp.importer, imp.target) not in DEFERRED:
            found.append(f"{where}: imports {imp.target} inside a function; import it at the top of the module")
        low, high = layer_of(imp.target), layer_of(imp.importer)
        if low in LAYERS and high in LAYERS and low != high and low not in MAY_IMPORT[high]:
            above = " a layer above it," if LAYERS.index(low) > LAYERS.index(high) else ""
            found.append(f"{where}: {high} imports {imp.target} from {low},{above} which {high} may not import")
    found += [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph)]
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_graph(imports: list[Import]) -> dict[str, dict[str, int]]:
    """Layer -> the layers it imports from, with how many imports."""
    graph: dict[str, dict[str, int]] = {layer: {} for layer in LAYERS}
    for imp in imports:
        high, low = layer_of(imp.importer), layer_of(imp.target)
        if high and low and high != low:
            graph[high][low] = graph[high].get(low, 0) + 1
    return graph


def test_the_harness_imports_downward_only_without_a_cycle():
    modules, imports = read_imports(REPO)
    assert "harness.spec.matrix" in modules and len(imports) > 300  # it read the tree
    assert problems(modules, imports) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"harness/__init__.py": "", "harness/core/__init__.py": "", "harness/report/__init__.py": "",
                       **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("files", "expected"), [
    ({"harness/core/a.py": "from harness.report.b import x\n", "harness/report/b.py": "x = 1\n"},
     "harness.core.a:1: core imports harness.report.b from report, a layer above it"),
    ({"harness/report/a.py": "from harness.process.b import x\n", "harness/process/b.py": "x = 1\n"},
     "harness.report.a:1: report imports harness.process.b from process, which report may not import"),
    ({"harness/results/a.py": "from harness.stack.b import x\n", "harness/stack/b.py": "x = 1\n"},
     "harness.results.a:1: results imports harness.stack.b from stack, which results may not import"),
    ({"harness/core/a.py": "def f():\n    from harness.core import b\n", "harness/core/b.py": ""},
     "harness.core.a:2: imports harness.core.b inside a function"),
    ({"harness/report/a.py": "from . import b\n", "harness/report/b.py": "import harness.report.a\n"},
     "import cycle: harness.report.a -> harness.report.b"),
    ({"harness/core/a.py": "import torch\n"}, "harness.core.a:1: imports torch at import time"),
    ({"harness/gadgets/a.py": ""}, "harness.gadgets.a: in no layer"),
    ({"harness/report/a.py": "from tools.corpora import common\n"}, "harness.report.a:1: imports tools/"),
    ({"harness/report/a.py": "from harness.report.gone import x\n"}, "harness.report.a:1: imports a harness module"),
])
def test_the_check_fails_on_what_breaks_the_layers(tmp_path, files, expected):
    found = problems(*read_imports(_tree(tmp_path, files)))
    assert any(line.startswith(expected) for line in found), found


def test_each_package_may_import_only_packages_below_it():
    assert set(MAY_IMPORT) == set(LAYERS)
    for high, lows in MAY_IMPORT.items():
        assert all(LAYERS.index(low) < LAYERS.index(high) for low in lows), high


def test_the_check_passes_a_downward_import_and_a_function_level_torch(tmp_path):
    files = {"harness/report/a.py": "from harness.core.b import x\n\ndef f():\n    import torch\n",
             "harness/core/b.py": "x = 1\n"}
    assert problems(*read_imports(_tree(tmp_path, files))) == []


@pytest.mark.slow
def test_the_package_graph_is_printed():
    done = subprocess.run([sys.executable, "-m", "tests.test_structure"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("entry") and "report -> " in done.stdout


def main() -> None:
    """The package graph this test reads, the top layer first: each layer and the layers it imports from."""
    modules, imports = read_imports(REPO)
    graph = package_graph(imports)
    for layer in reversed(LAYERS):
        ranked = sorted(graph[layer].items(), key=lambda item: -LAYERS.index(item[0]))
        below = ", ".join(f"{low} ({n})" for low, n in ranked)
        count = sum(layer_of(m) == layer for m in modules)
        print(f"{layer} -> {below or 'nothing'}    [{count} modules]")
    for line in problems(modules, imports):
        print(f"PROBLEM {line}")


if __name__ == "__main__":
    main()
