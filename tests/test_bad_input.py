"""Bad input gets a one-line error naming the file, the place, the value and the fix; exits 2; writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

# every test here runs vramlab or Snakemake in a child process: seconds each (README, "Run the tests")
pytestmark = pytest.mark.slow

GOOD = """fixed: {model: "arch:tiny-llama", device: cpu, steps: 2}
axes: {adapter: [lora, rslora]}
"""


def validate(tmp_path: Path, text: str | bytes, name: str = "m", env: dict | None = None) -> tuple[int, str]:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = sorted(p.name for p in tmp_path.iterdir())
    done = subprocess.run([sys.executable, "-m", "harness", "validate", str(path)], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=120)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    return done.returncode, done.stderr.strip()


CASES = [
    # accepted silently before
    ("fixed: {context: 64, context: 128}\naxes: {adapter: [lora]}", "key 'context' is written twice"),
    ("design: list\naxes: {adapter: [lora]}\ncells: [{name: a}]", "the list design does not read `axes`"),
    ("axes: {adapter: [lora]}\ncells: [{name: a}]", "the full design does not read `cells`"),
    ("axes: {adapter: [lora]}\nbaseline: {adapter: lora}", "a baseline goes with `design: one_at_a_time`"),
    ("design: list\ncells: [{name: a, context: 64}, {name: b, context: 64}]", "have the same settings"),
    ("design: list\ncells: [{name: a, context: 64}, {name: a, context: 128}]", "two cells are named 'a'"),
    ("fixed: {budget: 0GiB}\naxes: {adapter: [lora]}", "less than 1 MiB"),
    ("fixed: {budget: '16'}\naxes: {adapter: [lora]}", "has no unit; write it like '16GiB'"),
    ("fixed: {budget: 16GB}\naxes: {adapter: [lora]}", "decimal units (14.90 GiB)"),
    ("fixed: {budget: rtx408}\naxes: {adapter: [lora]}", "no card 'rtx408'; did you mean 'rtx4080'?"),
    ("fixed: {budget: {card: rtx4080, reserve: 1GiB}}\naxes: {adapter: [lora]}",
     "unknown key 'reserve' in a card budget; it takes card and display_reserve"),
    ("fixed: {budget: {card: rtx4080, display_reserve: 16GiB}}\naxes: {adapter: [lora]}",
     "display_reserve '16GiB' leaves nothing of the card's memory"),
    ("fixed: {model: 'arch:tiny-qwen3', context: 40000}\naxes: {adapter: [lora]}", "32,768 positions"),
    ("fixed: {learning_rate: .inf}\naxes: {adapter: [lora]}", "not a finite number"),
    ("fixed: {learning_rate: .nan}\naxes: {adapter: [lora]}", "not a finite number"),
    ("axes: {context: [64, 64]}", "a level is listed twice"),
    ("axes: {adapter: [lora]}\npredicted_oom: skp",
     "predicted_oom: 'skp' is not one of run, skip; did you mean 'skip'?"),
    # found only at run time before
    ("fixed: {model: /no/such/model}\naxes: {adapter: [lora]}", "model folder '/no/such/model' does not exist"),
    ("fixed: {model: 'arch:qwen9'}\naxes: {adapter: [lora]}", "did you mean 'arch:qwen3-8b'?"),
    ("fixed: {model: 'arch:tiny-llama', lora_targets: [q_proj, qkv]}\naxes: {adapter: [lora]}",
     "qkv match no layer of a llama model"),
    ("fixed: {model: 'arch:tiny-llama'}\naxes: {vocabulary: [native, 4096]}", "is not smaller than the 2,048"),
    ("fixed: {device: gpu}\naxes: {adapter: [lora]}", "did you mean 'cuda'?"),
    ("fixed: {data: 'chat:/no/such.jsonl'}\naxes: {adapter: [lora]}", "no such file /no/such.jsonl"),
    # unclear before
    ("fixed: {checkpointing: off}\naxes: {adapter: [lora]}", 'write it in quotes, checkpointing: "off"'),
    ("axes: {adapter: [lora]}\ninclude: {adapter: rslora}", "include: expected a list of mappings"),
    ("axes: {adapter: [lora]}\nexclude: [adapter]", "exclude[0]: expected a mapping of setting: value, got text"),
    ("axes: {adapter: [lora]}\nevaluation: {tasks: text_en}", "evaluation: tasks: expected a non-empty list"),
    ("axes: {adapter: [lora]}\nceiling: {low: 16384, high: 8192}", "ceiling: low (16384) must be below high (8192)"),
    # the report section
    ("axes: {adapter: [lora]}\nreport: [x]", "report: expected a mapping with any of baseline, x, lines"),
    ("axes: {adapter: [lora]}\nreport: {line: [adapter]}", "report: unknown key 'line'; did you mean 'lines'?"),
    ("design: list\ncells: [{name: base}, {name: small, context: 64}]\nreport: {baseline: bsae}",
     "report: baseline: no cell is named 'bsae'; did you mean 'base'?"),
    ("axes: {adapter: [lora], context: [64, 128]}\nreport: {x: adapter}", "'adapter' is not a numeric setting"),
    ("axes: {adapter: [lora], context: [64, 128]}\nreport: {x: contxt}", "did you mean 'context'?"),
    ("axes: {adapter: [lora, rslora]}\nreport: {x: context}", "no two cells differ only in context"),
    ("axes: {adapter: [lora, rslora], context: [64, 128]}\nreport: {lines: [checkpointing]}",
     "'checkpointing' is the same on every line"),
    ("axes: {adapter: [lora, rslora], checkpointing: ['off', 'on'], context: [64, 128]}\nreport: {lines: adapter}",
     "two lines would both be 'adapter lora'"),
    ("axes: {adapter: [lora, rslora]}\nreport: {lines: [adapter]}", "lines: name the lines of a sweep, which needs"),
    # surfaces added since the first round: caught at validation, not after a cell trained
    ("axes: {adapter: [lora]}\nevaluation: {tasks: [text_en, text_eng]}",
     "evaluation: tasks: no vramlab task and no installed lm-eval task is named 'text_eng'; did you mean 'text_en'?"),
    ("axes: {adapter: [lora]}\nreport: {baseline: {adapter: lora}}", "report: baseline: expected a cell's name"),
    ("axes: {adapter: [lora]}\nceiling: {low: 8192, high: 1000000000}",
     "ceiling: high (1000000000) is more than 1,048,576 tokens"),
    ("axes: {context: [1024, 2048]}\nceiling: {low: 4096, high: 8192}",
     "ceiling: `context` varies between cells, but it is what the ceiling searches"),
    ("axes: {adapter: [lora]}\ndescription: " + "[" * 5000 + "]" * 5000, "nested deeper than"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_bad_matrix_is_one_clear_line_and_exit_2(tmp_path, text, expected):
    code, err = validate(tmp_path, text)
    assert code == 2, err
    assert "\n" not in err and str(tmp_path / "m.yaml") in err
    assert expected in err


def test_a_learning_rate_written_2e_4_is_read_as_a_number(tmp_path):
    code, err = validate(tmp_path, "fixed: {learning_rate: 2e-4}\naxes: {adapter: [lora]}")
    assert code == 0, err


def test_not_utf8_names_the_file_and_byte(tmp_path):
    code, err = validate(tmp_path, b"axes: {adapter: [lora]}\n# caf\xe9\n")
    assert code == 2 and "not UTF-8 text (byte 29" in err and "m.yaml" in err


def test_a_matrix_too_large_is_refused_before_it_is_built(tmp_path):
    code, err = validate(tmp_path, "axes: {context: [64, 128, 256], steps: [1, 2, 3, 4], seed: [1, 2, 3]}",
                         env={"VRAMLAB_MAX_CELLS": "20"})
    assert code == 2 and "would make 36 cells, more than the limit of 20" in err


def test_a_copy_of_a_shipped_matrix_elsewhere_cannot_take_its_results_folder(tmp_path):
    code, err = validate(tmp_path, (REPO / "ablations" / "smoke.yaml").read_text(), name="smoke")
    assert code == 2 and "a matrix named 'smoke' ships with vramlab" in err


def test_two_matrix_files_of_one_name_never_share_a_results_folder(tmp_path):
    from harness.spec.matrix import MatrixError
    from harness.spec.owners import claim_results_folder

    first, second = tmp_path / "a" / "m.yaml", tmp_path / "b" / "m.yaml"
    claim_results_folder(tmp_path / "results", "m", first)
    claim_results_folder(tmp_path / "results", "m", first)  # the same file again: fine
    with pytest.raises(MatrixError, match=r"results/m/ holds the results of another matrix file"):
        claim_results_folder(tmp_path / "results", "m", second)


def test_a_damaged_result_is_set_aside_and_its_cell_measured_again(tmp_path, cache_dir):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(GOOD)
    from harness.spec.matrix import expand

    cells = expand(str(matrix))
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    damaged = results / f"{cells[0].cell_id}.json"
    damaged.write_text('{"schema_version": 2, "cell_id": "')  # a write cut short
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO)}

    def snakemake(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                               str(tmp_path), "--cores", "1", *extra, "--config", f"matrix={matrix}"], env=env,
                              capture_output=True, text=True, timeout=600)

    done = snakemake("-n")  # a dry run says what a run does, and changes nothing
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not valid JSON" in done.stderr and "set aside in results/m/damaged/ and measured again" in done.stderr
    assert damaged.read_text() == '{"schema_version": 2, "cell_id": "' and not (results / "damaged").exists()

    done = snakemake(str(damaged.relative_to(tmp_path)))  # a run: set aside, and that cell measured again
    assert done.returncode == 0, done.stderr[-3000:]
    kept = list((results / "damaged").iterdir())
    assert len(kept) == 1 and kept[0].read_text().startswith('{"schema_version": 2')
    assert json.loads(damaged.read_text())["cell_id"] == cells[0].cell_id


def test_aggregate_names_a_bad_result_file_instead_of_a_traceback(tmp_path):
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    victim = sorted((tmp_path / "results" / "smoke").glob("*.json"))[0]
    data = json.loads(victim.read_text())
    data["metrics"]["tokens_per_second"] = "fast"
    victim.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "harness", "aggregate", "smoke", "--results-dir",
                           str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports")], cwd=REPO,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 2
    assert str(victim) in done.stderr and "metrics.tokens_per_second" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "reports").exists()


def test_a_machine_that_cannot_run_a_cell_never_replaces_its_result(tmp_path):
    source = REPO / "results" / "seed-16gb" / "3232155d81f9.json"
    out = tmp_path / "results" / "seed-16gb" / source.name
    out.parent.mkdir(parents=True)
    shutil.copy(source, out)
    env = {**os.environ, "PYTHONPATH": str(REPO), "CUDA_VISIBLE_DEVICES": "-1"}
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", "seed-16gb", "--cell",
                           "3232155d81f9", "--results-dir", str(tmp_path / "results")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "holds the ok result of this cell from NVIDIA H200" in done.stderr and "--force" in done.stderr
    assert out.read_bytes() == source.read_bytes()


def test_out_naming_a_folder_is_refused_before_anything_runs(tmp_path):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(GOOD)
    from harness.spec.matrix import expand

    cell = expand(str(matrix))[0]
    done = subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", str(matrix), "--cell",
                           cell.cell_id, "--out", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 2 and "is a folder; give the path of the result file" in done.stderr
    assert not (tmp_path / "results").exists()


def test_a_gpu_matrix_on_a_cpu_machine_says_what_will_happen(tmp_path, cache_dir):
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO), "CUDA_VISIBLE_DEVICES": "-1"}
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--config", "matrix=seed-16gb"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "18 of 18 cells need a CUDA GPU and this machine has none: the 18 without a result" in done.stderr


def _user_data(tmp_path: Path, kind: str, files: dict[str, bytes]) -> str:
    if kind == "chat":
        (tmp_path / "chat.jsonl").write_bytes(files["chat.jsonl"])
        return f"chat:{tmp_path / 'chat.jsonl'}"
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return f"text:{folder}"


CHAT_LINE = b'{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}\n'
DATA_CASES = [
    ("chat", {"chat.jsonl": b""}, "the file is empty"),
    ("chat", {"chat.jsonl": CHAT_LINE + b'{"messages": [{"role": "user"\n'}, ":2: invalid JSON"),
    ("chat", {"chat.jsonl": b'{"messages": [{"role": "user", "content": "Hi"}]}\n'}, "no assistant message"),
    ("chat", {"chat.jsonl": b'{"messages": [{"role": "human", "content": "Hi"}]}\n'},
     "has role 'human' (did you mean 'user'?)"),
    ("chat", {"chat.jsonl": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}, "not UTF-8"),
    ("chat", {"chat.jsonl": CHAT_LINE + b"\x00\x00\x00\x00"}, "binary"),
    ("text", {}, "holds no .txt file"),
    ("text", {"a.txt": b"caf\xe9 au lait"}, "not UTF-8"),
    ("text", {"a.txt": b"  \n"}, "the file is empty"),
    ("text", {"a.txt": b"Title\n\x00\x01\x02\x00"}, "binary"),
]


@pytest.mark.parametrize(("kind", "files", "expected"), DATA_CASES)
def test_bad_user_data_is_caught_at_validation(tmp_path, kind, files, expected):
    data = _user_data(tmp_path, kind, files)
    code, err = validate(tmp_path, f'fixed: {{data: "{data}"}}\naxes: {{adapter: [lora]}}')
    assert code == 2, err
    assert "\n" not in err and "fixed.data" in err and expected in err


def test_good_user_data_passes_validation(tmp_path):
    data = _user_data(tmp_path, "chat", {"chat.jsonl": CHAT_LINE})
    code, err = validate(tmp_path, f'fixed: {{data: "{data}"}}\naxes: {{adapter: [lora]}}')
    assert code == 0, err


def test_a_yaml_alias_bomb_fails_fast_with_a_clear_error(tmp_path):
    """A billion laughs: nine levels of nine aliases make 387 million strings out of a 400-byte file."""
    text = "description: [&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"
    for i in range(1, 9):
        text += f", &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]"
    text += "]\naxes: {adapter: [lora]}\nfixed: {data: *a8}\n"
    started = time.monotonic()
    code, err = validate(tmp_path, text)
    assert code == 2 and "\n" not in err and str(tmp_path / "m.yaml") in err
    assert "aliases" in err and time.monotonic() - started < 30


def test_a_matrix_file_too_large_is_refused_before_it_is_parsed(tmp_path):
    started = time.monotonic()
    code, err = validate(tmp_path, GOOD + "# " + "x" * (2 * 2**20) + "\n")
    assert code == 2 and "\n" not in err and "more than the limit of 1 MiB" in err
    assert time.monotonic() - started < 30


def test_an_error_message_prints_a_bounded_value(tmp_path):
    code, err = validate(tmp_path, f"fixed: {{data: '{'z' * 100_000}'}}\naxes: {{adapter: [lora]}}")
    assert code == 2 and "\n" not in err and len(err) < 2000 and "zzz" in err


def _vramlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)


def _one_line_error(done: subprocess.CompletedProcess, expected: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert expected in done.stderr, done.stderr


def test_commands_given_what_they_cannot_use_say_so_in_one_line(tmp_path):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(GOOD)
    _one_line_error(_vramlab("aggregate", str(matrix), cwd=tmp_path), "has no result file")
    assert not (tmp_path / "reports").exists()
    _one_line_error(_vramlab("report", "m", cwd=tmp_path), "reports/m/cells.csv does not exist; run `vramlab aggregate")
    _one_line_error(_vramlab("compare", str(matrix), cwd=tmp_path), "no reproduction of m")
    assert _vramlab("aggregate", str(matrix), "--partial", cwd=tmp_path).returncode == 0
    _one_line_error(_vramlab("report", "m", cwd=tmp_path), "no cell of m has a result yet")
    assert sorted(p.name for p in (tmp_path / "reports" / "m").iterdir()) == \
        ["cells.csv", "design.json", "environment.csv", "estimate.csv", "steps.csv"]  # nothing more written

    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    cell = sorted((tmp_path / "results" / "smoke").glob("*.json"))[0].stem
    _one_line_error(_vramlab("evaluate", "--matrix", "smoke", "--cell", cell, "--results-dir",
                             str(tmp_path / "results"), cwd=REPO), "has no `evaluation:` section")


def _snakemake_dry(tmp_path: Path, *config: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--cores", "1", "--config", *config], env=env, capture_output=True,
                          text=True, timeout=300)


def test_an_empty_matrix_in_config_is_an_error_not_the_default(tmp_path):
    done = _snakemake_dry(tmp_path, "matrix=")
    said = done.stdout + done.stderr  # Snakemake prints a Snakefile's error on stdout
    assert done.returncode != 0 and "--config matrix= names no matrix" in said, said[-2000:]
    assert "smoke" not in said


@pytest.mark.parametrize(("word", "reproduces"), [("on", True), ("yes", True), ("True", True), ("off", False),
                                                  ("maybe", None)])
def test_reproduce_is_yes_or_no_never_silently_no(tmp_path, word, reproduces):
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    done = _snakemake_dry(tmp_path, "matrix=smoke", f"reproduce={word}")
    if reproduces is None:
        said = done.stdout + done.stderr  # Snakemake prints a Snakefile's error on stdout
        assert done.returncode != 0 and "--config reproduce='maybe': write reproduce=true or reproduce=false" \
            in said, said[-2000:]
        return
    assert done.returncode == 0, done.stderr[-2000:]
    assert ("reproducing the 8 published cells of 'smoke'" in done.stderr) is reproduces


def test_paths_and_task_names_a_command_cannot_use_are_one_line(tmp_path):
    shutil.copytree(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    cell = sorted((tmp_path / "results" / "smoke").glob("*.json"))[0].stem
    before = sorted(p for p in tmp_path.rglob("*"))
    for task, expected in (("../../x", "'../../x' is not a task name"),
                           ("text_eng", "no installed lm-eval task is named 'text_eng'; did you mean 'text_en'?")):
        _one_line_error(_vramlab("evaluate", "--matrix", "smoke", "--cell", cell, "--task", task, "--results-dir",
                                 str(tmp_path / "results"), cwd=REPO), expected)
    (tmp_path / "a-file").write_text("")
    _one_line_error(_vramlab("aggregate", "smoke", "--results-dir", str(tmp_path / "results"), "--reports-dir",
                             str(tmp_path / "a-file"), cwd=REPO), "a-file")
    assert sorted(p for p in tmp_path.rglob("*")) == sorted([*before, tmp_path / "a-file"])
