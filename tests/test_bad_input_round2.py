"""Bad input, second round (issue 25): each class the trial found gets one line, a non-zero exit, nothing written,
and no data lost or replaced."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# nearly every test here runs vramlab or Snakemake in a child process: seconds each (README, "Run the tests")
pytestmark = pytest.mark.slow

GOOD = """fixed: {model: "arch:tiny-llama", device: cpu, steps: 2}
axes: {adapter: [lora, rslora]}
"""


def _vramlab(*args: str, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=300)


def _one_line(done: subprocess.CompletedProcess, expected: str, code: int = 2) -> None:
    assert done.returncode == code, (done.returncode, done.stderr[-2000:])
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert expected in done.stderr, done.stderr


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# 1: a log file given by mistake is never truncated; every argument is checked before the log is opened
@pytest.mark.parametrize("victim", ["README.md", "4c55591d5771.json"])
def test_a_log_path_that_is_no_log_file_is_refused_and_left_whole(tmp_path, victim):
    target = tmp_path / victim
    target.write_text("kept\n")
    done = _vramlab("evaluate", "--matrix", "quality-smoke", "--cell", "6390030c8763", "--results-dir",
                    str(tmp_path / "results"), "--log", str(target))
    _one_line(done, "a log file's name ends in .log")
    assert target.read_text() == "kept\n"


# 13: an error about an argument reaches the console, and no log is written for it
def test_a_bad_cell_with_a_log_is_said_on_the_console(tmp_path):
    log = tmp_path / "l.log"
    _one_line(_vramlab("evaluate", "--matrix", "quality-smoke", "--cell", "nosuch", "--log", str(log)),
              "has no cell with the id or name 'nosuch'")
    assert not log.exists()


# 2: an interrupted write leaves the previous file, never a cut one
def test_an_interrupted_chart_leaves_the_previous_file_whole(tmp_path):
    import matplotlib.pyplot as plt

    from harness.report.charts.style import save

    (tmp_path / "c.png").write_bytes(b"the committed chart")
    fig, _ = plt.subplots()

    def cut_short(path, **_):
        Path(path).write_bytes(b"half a ch")
        raise KeyboardInterrupt

    fig.savefig = cut_short
    with pytest.raises(KeyboardInterrupt):
        save(fig, tmp_path, "c", ("png",))
    assert _files(tmp_path) == {"c.png": b"the committed chart"}


def test_tables_and_text_are_written_whole_or_not_at_all(tmp_path):
    from harness.core.atomic_files import write_text_atomic

    target = tmp_path / "report.md"
    target.write_text("before")
    with pytest.raises(TypeError):
        write_text_atomic(target, None)  # fails half-way
    assert _files(tmp_path) == {"report.md": b"before"}


# 3, 14: a result from a newer vramlab is kept and refused, by run-cell and by Snakemake, dry or not
def test_a_result_from_a_newer_vramlab_is_kept_and_refused(tmp_path):
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    newer = tmp_path / "results" / "smoke" / "d9946bcf27e9.json"
    data = json.loads(newer.read_text())
    newer.write_text(json.dumps({**data, "schema_version": 4}))
    before = _files(tmp_path)
    expected = "written by a newer vramlab (schema 4; this one reads up to 3): upgrade"
    _one_line(_vramlab("run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir",
                       str(tmp_path / "results"), "--out", str(newer)), expected)
    for dry in (["-n"], []):
        done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                               str(tmp_path), "--cores", "1", *dry, "--config", "matrix=smoke", "reproduce=false"],
                              env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
        assert done.returncode != 0 and expected in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
    assert _files(tmp_path) == before | {k: v for k, v in _files(tmp_path).items() if k.startswith(".snakemake")}


# 4: a cell renamed in its matrix after it ran is reported under its new name
def test_a_cell_renamed_after_it_ran_is_reported_under_its_new_name(tmp_path):
    (tmp_path / "ablations").mkdir()
    text = (REPO / "ablations" / "loss-path-16gb.yaml").read_text()
    first = text.split("name: ", 1)[1].split(",")[0].split("}")[0].strip()
    (tmp_path / "ablations" / "loss-path-16gb.yaml").write_text(text.replace(f"name: {first}", "name: renamed", 1))
    shutil.copytree(REPO / "results" / "loss-path-16gb", tmp_path / "results" / "loss-path-16gb")
    assert _vramlab("aggregate", "loss-path-16gb", cwd=tmp_path).returncode == 0
    import pandas as pd

    names = list(pd.read_csv(tmp_path / "reports" / "loss-path-16gb" / "cells.csv")["name"])
    assert "renamed" in names and first not in names
    done = _vramlab("report", "loss-path-16gb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]


# 5, 6: a file that is no GGUF, an unknown preset, a source with nothing to prepare
def test_model_sources_that_cannot_be_used_are_one_line(tmp_path):
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a gguf file at all" * 10)
    expected = f"{fake}: not a readable GGUF file"
    for args in (["tokenizer-check", f"gguf:{fake}"], ["prepare-model", f"gguf:{fake}"],
                 ["estimate", "--set", f"model=gguf:{fake}"]):
        _one_line(_vramlab(*args, cwd=tmp_path), expected)
    (tmp_path / "m.yaml").write_text(f"fixed: {{model: 'gguf:{fake}', device: cpu}}\naxes: {{adapter: [lora]}}\n")
    _one_line(_vramlab("validate", str(tmp_path / "m.yaml"), cwd=tmp_path), expected)
    _one_line(_vramlab("prepare-model", "arch:nosuch", cwd=tmp_path), "no architecture preset 'nosuch'")
    _one_line(_vramlab("prepare-model", "some-user/no-such-model", cwd=tmp_path), "nothing to prepare")
    (tmp_path / "empty").mkdir()
    _one_line(_vramlab("prepare-model", str(tmp_path / "empty"), cwd=tmp_path), "holds no config.json")
    _one_line(_vramlab("prepare-model", "arch:tiny-llama", "--seed", "-1", cwd=tmp_path), "below the minimum 0")


# 7, 8, 26: estimate's arguments are checked before anything is printed; a file in an output path's way is named
def test_estimate_arguments_are_checked_first(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    (tmp_path / "folder").mkdir()
    for args, expected in ((["smoke", "--chart", str(tmp_path / "x.txt")], "draws .png, .pdf, .svg files"),
                           (["smoke", "--chart", str(tmp_path / "folder")], "is a folder"),
                           (["smoke", "--chart", str(afile / "x.png")], f"{afile} is a file, not a folder"),
                           (["smoke", "--results-dir", str(afile)], "is a file"),
                           (["--calibrate", str(tmp_path / "nonexistent")], "does not exist"),
                           (["--set", "context=8", "--set", "context=16"], "--set context given more than once")):
        done = _vramlab("estimate", *args, cwd=tmp_path)
        _one_line(done, expected)
        assert done.stdout == ""
    _one_line(_vramlab("schema", "--out", str(afile / "schemas"), cwd=tmp_path), f"{afile} is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder"]


# 9, 10, 25: damaged report tables are one line, and the report is left as it was
DAMAGE = [
    ("cells.csv", lambda t: t.replace(",ok,", ",banana,", 1), "status 'banana' is none vramlab writes"),
    ("cells.csv", lambda t: t + "9,abc,short\n", "has no status"),
    ("cells.csv", lambda t: "", "cells.csv: empty"),
    ("cells.csv", lambda t: t.replace("order,cell_id,name,status,", "order,cell_id,name,state,", 1),
     "no column status"),
    ("design.json", lambda t: "{bad", "design.json: not valid JSON"),
    ("design.json", lambda t: "[1]", "design.json: not a design vramlab wrote"),
    ("design.json", lambda t: json.dumps({**json.loads(t), "baseline": "nosuch"}), "names the cell 'nosuch'"),
    ("steps.csv", lambda t: "", "steps.csv: empty"),
    ("steps.csv", lambda t: "a,b\n1,2\n", "steps.csv: no column cell_id"),
    ("estimate.csv", lambda t: "", "estimate.csv: empty"),
    ("environment.csv", None, "environment.csv does not exist"),
]


@pytest.mark.parametrize(("name", "damage", "expected"), DAMAGE)
def test_a_damaged_report_table_is_one_line_and_nothing_is_written(tmp_path, name, damage, expected):
    shutil.copytree(REPO / "reports" / "smoke", tmp_path / "smoke")
    path = tmp_path / "smoke" / name
    if damage is None:
        path.unlink()
    else:
        path.write_text(damage(path.read_text()))
    before = _files(tmp_path)
    _one_line(_vramlab("report", "smoke", "--reports-dir", str(tmp_path)), expected)
    assert _files(tmp_path) == before


def test_text_in_a_number_column_is_named(tmp_path):
    shutil.copytree(REPO / "reports" / "smoke", tmp_path / "smoke")
    import pandas as pd

    cells = pd.read_csv(tmp_path / "smoke" / "cells.csv", dtype=str)
    cells.loc[0, "peak_device_bytes"] = "lots"
    cells.to_csv(tmp_path / "smoke" / "cells.csv", index=False)
    _one_line(_vramlab("report", "smoke", "--reports-dir", str(tmp_path)),
              "line 2, column peak_device_bytes: 'lots' is not a number")


# 11: every VRAMLAB_* variable is checked
@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("VRAMLAB_MAX_CELLS", "abc", "give a whole number of 1 or more"),
    ("VRAMLAB_MAX_CELLS", "0", "give a whole number of 1 or more"),
    ("VRAMLAB_CACHE", "", "is set but empty"),
    ("VRAMLAB_CACHE", "relative", "is relative"),
    ("VRAMLAB_ABLATIONS", "/no/such/folder", "does not exist"),
    ("VRAMLAB_SPARE_IDLE", "soon", "positive number of seconds"),
    ("VRAMLAB_DEVICE_SLOTS", "two", "give a whole number from 1 to 64"),
    ("VRAMLAB_LEASES", "relative", "is relative"),
])
def test_a_bad_environment_variable_is_one_line(tmp_path, variable, value, expected):
    _one_line(_vramlab("validate", "smoke", cwd=tmp_path, env={variable: value}), f"{variable}")
    _one_line(_vramlab("validate", "smoke", cwd=tmp_path, env={variable: value}), expected)
    assert list(tmp_path.iterdir()) == []


# 12: Ctrl-C is one line and exit 130
def test_an_interrupt_is_one_line_and_exit_130(monkeypatch, capsys):
    from harness import cli

    def interrupted(_):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_validate", interrupted)
    assert cli.main(["validate", "smoke"]) == 130
    assert capsys.readouterr().err.strip() == "vramlab: interrupted; nothing was left half-written"


# 16-20: matrix values validate accepted before
MATRIX_CASES = [
    ("seeds: [-1]\naxes: {adapter: [lora]}", "seeds: -1 is below the minimum 0"),
    ("seeds: [100000000000000000000000]\naxes: {adapter: [lora]}", "is above the maximum"),
    ("fixed: {seed: -1}\naxes: {adapter: [lora]}", "fixed.seed: -1 is below the minimum 0"),
    ("fixed: {lora_targets: []}\naxes: {adapter: [lora]}", "an empty list"),
    ("fixed: {lora_targets: [q_proj, q_proj]}\naxes: {adapter: [lora]}", "q_proj listed twice"),
    ("concurrent_cells: 0\naxes: {adapter: [lora]}", "concurrent_cells: 0 is not a positive integer"),
    ("concurrent_cells: many\naxes: {adapter: [lora]}", "concurrent_cells: 'many' is not a positive integer"),
    ("axes: {adapter: [lora]}\nevaluation:", "evaluation: an empty section"),
    ("axes: {adapter: [lora]}\nceiling:", "ceiling: an empty section"),
    ("design: list\ncells: [{name: a/../../b}]", "is not a cell name"),
    ("design: list\ncells: [{name: \"a\\nb\"}]", "is not a cell name"),
    ("design: list\ncells: [{name: a|b}]", "is not a cell name"),
    ("design: list\ncells: [{name: a$b}]", "is not a cell name"),
    (f"design: list\ncells: [{{name: {'a' * 5000}}}]", "is not a cell name"),
    ("design: list\nseeds: [0, 1]\ncells: [{name: x}, {name: x/seed=1, context: 64}]", "is not a cell name"),
]


@pytest.mark.parametrize(("body", "expected"), MATRIX_CASES)
def test_matrix_values_validate_accepted_before(tmp_path, body, expected):
    path = tmp_path / "m.yaml"
    path.write_text("fixed: {model: 'arch:tiny-llama', device: cpu}\n" + body if not body.startswith("fixed")
                    else body.replace("fixed: {", "fixed: {model: 'arch:tiny-llama', device: cpu, "))
    _one_line(_vramlab("validate", str(path), cwd=tmp_path), expected)


def test_a_vocabulary_source_without_slicing_is_a_declared_conflict(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("fixed: {model: 'arch:tiny-llama', device: cpu, vocabulary_source: 'corpus:en'}\n"
                    "axes: {adapter: [lora]}\n")
    done = _vramlab("cells", str(path), cwd=tmp_path)
    assert done.returncode == 0 and "[skipped: vocabulary-source-needs-slicing]" in done.stdout, done.stderr


# 21, 22: run-cell checks a probe's context against the model, and writes into no other matrix's folder
def test_run_cell_checks_its_context_and_its_out_folder(tmp_path):
    _one_line(_vramlab("run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--results-dir",
                       str(tmp_path / "results"), "--context", "100000"), "8,192 positions")
    shutil.copytree(REPO / "results" / "seed-16gb", tmp_path / "results" / "seed-16gb")
    before = _files(tmp_path)
    _one_line(_vramlab("run-cell", "--matrix", "smoke", "--cell", "d9946bcf27e9", "--out",
                       str(tmp_path / "results" / "seed-16gb" / "d9946bcf27e9.json")),
              "holds the results of another matrix")
    assert _files(tmp_path) == before
    shutil.copy(REPO / "results" / "smoke" / "d9946bcf27e9.json", tmp_path / "results" / "seed-16gb")
    done = _vramlab("check", str(tmp_path / "results" / "seed-16gb"))
    assert done.returncode == 1 and "a result of 'smoke' in the results folder of 'seed-16gb'" in done.stderr


# 23, 24, 27: arguments of compare, migrate, ceiling and report
def test_command_arguments_are_checked(tmp_path):
    _one_line(_vramlab("compare", "smoke", "--machine", "..", "--results-dir", str(tmp_path)), "--machine '..'")
    _one_line(_vramlab("ceiling", "ceiling-16gb", "--jobs", "0", "--results-dir", str(tmp_path)), "--jobs 0")
    _one_line(_vramlab("report", str(REPO / "reports" / "smoke"), "--reports-dir", str(tmp_path)),
              "is not a matrix name")
    listed = tmp_path / "list.json"
    listed.write_text("[1]")
    done = _vramlab("migrate", str(listed))
    assert done.returncode == 1 and "not migrated" in done.stderr and listed.read_text() == "[1]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["list.json"]


# 29: the Snakefile refuses a --config key it does not read
def test_a_misspelled_config_key_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", "matrx=smoke"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "--config matrx=...: no such key; did you mean 'matrix'?" in said, said[-2000:]


# the README's claim: a renamed matrix file is told where its old results are
def test_a_renamed_matrix_file_is_told_where_its_results_are(tmp_path):
    (tmp_path / "new.yaml").write_text(GOOD)
    old = tmp_path / "results" / "old"
    old.mkdir(parents=True)
    (old / ".matrix").write_text(f"{tmp_path / 'old.yaml'}\n")  # the matrix file, since renamed
    from harness.spec.matrix import expand

    ids = [c.cell_id for c in expand(str(tmp_path / "new.yaml"))]
    shutil.copy(REPO / "results" / "smoke" / "d9946bcf27e9.json", old / f"{ids[0]}.json")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", f"matrix={tmp_path / 'new.yaml'}"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "holds 1 of the 2 cells of 'new'" in done.stderr and "mv results/old results/new" in done.stderr, \
        done.stderr[-2000:]
    (tmp_path / "old.yaml").write_text(GOOD)  # the owner is there: a folder of another matrix, nothing to say
    from harness.spec.renamed_matrix import orphaned_results_hint

    assert orphaned_results_hint(tmp_path / "results", "new", ids) is None
