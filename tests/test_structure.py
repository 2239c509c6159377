"""The shape of the harness: backends behind one interface, one typed result model with a committed schema,
stable cell ids, settings declared by their owners, matrix files found from any install."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from harness.results import ResultFileError, check
from harness.results.schemas import MODELS, SCHEMA_DIR, schema_text
from harness.spec.matrix import MatrixError, expand, matrix_path
from harness.spec.settings import SETTINGS, table
from harness.stack.techniques import TECHNIQUES
from tests.conftest import REPO

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


def test_vramlab_check_passes_on_every_committed_result():
    folders = [str(REPO / "results" / m) for m in COMMITTED_IDS]
    done = subprocess.run([sys.executable, "-m", "harness", "check", *folders], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{sum(len(v.split()) for v in COMMITTED_IDS.values())} of" in done.stdout


def test_no_committed_result_names_a_local_path():
    for path in (REPO / "results").rglob("*.json"):
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

