"""Matrix files a researcher may get wrong: YAML that cannot be read, values of the wrong kind or range,
settings that contradict each other or act in no cell, names that would take another matrix's folder. Each is
refused before any cell runs, in one line that names the file and what is wrong.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from harness import cli
from harness.cli import main
from harness.core.errors import UsageError
from harness.spec.matrix import MatrixError, expand
from tests.conftest import REPO
from tests.refusals import (
    GOOD,
    TINY1,
    TINY2,
    F,
    bad_matrix,
    base_matrix,
    matrix_at,
    odd_files,
    one_line,
    refused,
    validate,
    validate_here,
    vramlab,
)

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


# M-decay_with_tail: a setting that acts in no cell changes the ids of identical runs
IDLE = ("truncation_decay has no effect: it acts only in cells with truncation: exp_decay, and no cell of this matrix "
        "has truncation: exp_decay")


@pytest.mark.slow
@pytest.mark.parametrize(("text", "expected"), CASES)
def test_bad_matrix_is_one_clear_line_and_exit_2(tmp_path, text, expected):
    code, err = validate(tmp_path, text)
    assert code == 2, err
    assert "\n" not in err and str(tmp_path / "m.yaml") in err
    assert expected in err


@pytest.mark.slow
def test_a_learning_rate_written_2e_4_is_read_as_a_number(tmp_path):
    code, err = validate(tmp_path, "fixed: {learning_rate: 2e-4}\naxes: {adapter: [lora]}")
    assert code == 0, err


@pytest.mark.slow
def test_not_utf8_names_the_file_and_byte(tmp_path):
    code, err = validate(tmp_path, b"axes: {adapter: [lora]}\n# caf\xe9\n")
    assert code == 2 and "not UTF-8 text (byte 29" in err and "m.yaml" in err


@pytest.mark.slow
def test_a_matrix_too_large_is_refused_before_it_is_built(tmp_path):
    code, err = validate(tmp_path, "axes: {context: [64, 128, 256], steps: [1, 2, 3, 4], seed: [1, 2, 3]}",
                         env={"VRAMLAB_MAX_CELLS": "20"})
    assert code == 2 and "would make 36 cells, more than the limit of 20" in err


@pytest.mark.slow
def test_a_copy_of_a_shipped_matrix_elsewhere_cannot_take_its_results_folder(tmp_path):
    code, err = validate(tmp_path, (REPO / "ablations" / "smoke.yaml").read_text(), name="smoke")
    assert code == 2 and "a matrix named 'smoke' ships with vramlab" in err


# t17-025: Smoke.yaml planned its cells into results/Smoke/ beside the published results/smoke/, one folder on a
# filesystem that ignores case; a name that differs from a shipped matrix's only in case is refused
@pytest.mark.parametrize("name", [pytest.param("Smoke", id="t17-025"), "SMOKE"])
def test_a_case_twin_of_a_shipped_matrix_is_refused(tmp_path, capsys, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text((REPO / "ablations" / "smoke.yaml").read_text())
    refused(["validate", str(path)], capsys, f"the name '{name}' differs only in case from 'smoke', a matrix that "
                                              "ships with vramlab")


@pytest.mark.slow
def test_two_matrix_files_of_one_name_never_share_a_results_folder(tmp_path):
    from harness.spec.owners import claim_results_folder

    first, second = tmp_path / "a" / "m.yaml", tmp_path / "b" / "m.yaml"
    claim_results_folder(tmp_path / "results", "m", first)
    claim_results_folder(tmp_path / "results", "m", first)  # the same file again: fine
    with pytest.raises(MatrixError, match=r"results/m/ holds the results of another matrix file"):
        claim_results_folder(tmp_path / "results", "m", second)


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_matrix_file_too_large_is_refused_before_it_is_parsed(tmp_path):
    started = time.monotonic()
    code, err = validate(tmp_path, GOOD + "# " + "x" * (2 * 2**20) + "\n")
    assert code == 2 and "\n" not in err and "more than the limit of 1 MiB" in err
    assert time.monotonic() - started < 30


@pytest.mark.slow
@pytest.mark.parametrize(("body", "expected"), MATRIX_CASES)
def test_matrix_values_validate_accepted_before(tmp_path, body, expected):
    path = tmp_path / "m.yaml"
    path.write_text("fixed: {model: 'arch:tiny-llama', device: cpu}\n" + body if not body.startswith("fixed")
                    else body.replace("fixed: {", "fixed: {model: 'arch:tiny-llama', device: cpu, "))
    one_line(vramlab("validate", str(path), cwd=tmp_path), expected)


@pytest.mark.slow
def test_a_vocabulary_source_without_slicing_is_a_declared_conflict(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("fixed: {model: 'arch:tiny-llama', device: cpu, vocabulary_source: 'corpus:en'}\n"
                    "axes: {adapter: [lora]}\n")
    done = vramlab("cells", str(path), cwd=tmp_path)
    assert done.returncode == 0 and "[skipped: vocabulary-source-needs-slicing]" in done.stdout, done.stderr


# the README's claim: a renamed matrix file is told where its old results are
@pytest.mark.slow
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


# F12, F13: a control character in a matrix file is a YAML error like any other, not a traceback
@pytest.mark.parametrize("junk", ["\x00\n", 'description: "\x07bell"\n'])
def test_a_control_character_in_a_matrix_file_is_one_line(tmp_path, junk):
    bad_matrix(matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\n{junk}"), "unacceptable character")


# P08: YAML's merge key is read as YAML reads it; a key written twice is still refused
def test_a_merge_key_is_read_and_duplicates_beside_it_are_still_refused(tmp_path):
    from harness.spec.matrix import expand

    base = f"fixed: &b {{{F}, adapter: lora}}\ndesign: list\ncells:\n"
    cells = expand(matrix_at(tmp_path, base + "  - {name: one, <<: *b}\n  - {name: two, <<: *b, adapter: rslora}\n"))
    assert [(c.name, c.settings["adapter"]) for c in cells] == [("one", "lora"), ("two", "rslora")]
    bad_matrix(matrix_at(tmp_path, base + "  - {name: one, <<: *b, name: two}\n", "dup"), "is written twice")


# M38 (and S11's plan): cells sharing one GPU are bounded, wherever the number is given
def test_cells_per_device_beyond_the_limit_are_refused(tmp_path, monkeypatch):
    from harness.core.environment_variables import MAX_DEVICE_SLOTS, device_slots
    from harness.process.device_lease import slots_wanted

    bad_matrix(matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\nconcurrent_cells: 1000000000000\n"),
               f"more than the limit of {MAX_DEVICE_SLOTS}")
    with pytest.raises(ValueError, match="more than the limit"):
        slots_wanted(MAX_DEVICE_SLOTS + 1)
    monkeypatch.setenv("VRAMLAB_DEVICE_SLOTS", str(MAX_DEVICE_SLOTS + 1))
    with pytest.raises(UsageError, match=f"from 1 to {MAX_DEVICE_SLOTS}"):
        device_slots()
    assert slots_wanted(MAX_DEVICE_SLOTS) == MAX_DEVICE_SLOTS


# M55: an exclude entry that matches no cell is stale, said, not dropped without a word
def test_an_exclude_entry_that_matches_no_cell_is_refused(tmp_path):
    bad_matrix(matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\nexclude: [{{adapter: rslora}}]\n"),
               "exclude[0]: matches no cell")


# M69: the description is free text, not any YAML value
def test_a_description_that_is_no_text_is_refused(tmp_path):
    bad_matrix(matrix_at(tmp_path, f"description: [a, list]\nfixed: {{{F}}}\naxes: {{adapter: [lora]}}\n"),
               "description: expected text, got a list")


# t15-019: description: '' validated, and the matrix listed with a blank description; the key is optional (a matrix
# without it stands)
@pytest.mark.parametrize("description", [pytest.param("''", id="t15-019"), pytest.param('"  "', id="blank")])
def test_an_empty_description_is_refused(tmp_path, description):
    bad_matrix(matrix_at(tmp_path, f"description: {description}\nfixed: {{{F}}}\naxes: {{adapter: [lora]}}\n"),
               "description: empty; say in a line what the matrix is for, or leave the key out")
    assert expand(matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\n", "plain"))


# t15-003: more warm-up steps than measured ones is no contradiction: the warm-up runs before the `steps`, in addition
# to them (a cell trains warmup_steps + steps), so it always finishes; accepted
def test_more_warmup_steps_than_measured_steps_are_run_before_them(tmp_path):
    from harness.data.training import sequences_needed

    fixed = F.replace("warmup_steps: 0, steps: 1", "warmup_steps: 10, steps: 3")
    cells = expand(matrix_at(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"))
    assert sequences_needed(cells[0].settings) == 13 * cells[0].settings["grad_accum"] * cells[0].settings["batch_size"]


# N07: a name in the setting=level form names the cell's own level
def test_a_cell_name_that_states_another_setting_is_refused(tmp_path):
    from harness.spec.matrix import expand

    cells = "cells: [{name: \"adapter=rslora\", adapter: lora}, {name: y, adapter: rslora}]\n"
    bad_matrix(matrix_at(tmp_path, f"fixed: {{{F}}}\ndesign: list\n{cells}"),
               "the name says adapter=rslora, but the cell has adapter=lora")
    # the same form stating the cell's own levels (budget and rate in other spellings), or free text, stands
    fine = ('cells: [{name: "adapter=rslora,budget=16384MiB,learning_rate=2e-4", adapter: rslora, budget: 16GiB},'
            ' {name: "adapter=my-own,checkpointing=off", adapter: lora, checkpointing: "off"}]\n')
    assert len(expand(matrix_at(tmp_path, f"fixed: {{{F}}}\ndesign: list\n{fine}", "fine"))) == 2


# M-budget_TiB_huge: a budget larger than any device caps nothing and only makes cells of their own ids
@pytest.mark.parametrize("budget", ["99999999TiB", "1025GiB", "2TiB"])
def test_a_budget_beyond_any_device_is_refused_naming_the_bound(tmp_path, budget):
    bad_matrix(base_matrix(tmp_path, f"budget: {budget}"), f"fixed.budget: '{budget}' is more than 1TiB")


def test_a_budget_at_the_bound_is_accepted(tmp_path):
    assert expand(base_matrix(tmp_path, "budget: 1TiB"))


# M-vocsrc_native, M-tiled_hf, M-loss_path_liger_nokernel: every cell skipped by a declared conflict
@pytest.mark.parametrize(("fixed", "rule"), [
    ("vocabulary_source: 'corpus:en'", "vocabulary-source-needs-slicing"),
    ("tiled_mlp: arctic", "tiled-mlp-needs-unsloth"),
    ("loss_path: liger-flce", "liger-flce-needs-liger"),
])
def test_a_matrix_whose_every_cell_a_conflict_skips_is_refused(tmp_path, capsys, fixed, rule):
    code, err = validate_here(base_matrix(tmp_path, fixed), capsys)
    assert code == 2 and "\n" not in err, err
    assert "every one of its 2 cells is skipped by a declared conflict, so it measures nothing" in err
    assert f"({rule}: " in err and str(tmp_path / "m.yaml") in err
    # `cells` still lists them, each with the conflict that skips it: that is where one looks
    assert main(["cells", base_matrix(tmp_path, fixed)]) == 0
    assert capsys.readouterr().out.count(f"[skipped: {rule}]") == 2


def test_two_conflicts_that_skip_every_cell_are_both_named(tmp_path, capsys):
    path = matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{tiled_mlp: [arctic], loss_path: [liger-flce, trl-chunked]}}\n")
    code, err = validate_here(path, capsys)
    assert code == 2 and "tiled-mlp-needs-unsloth" in err  # the first rule each cell matches
    path = matrix_at(tmp_path, "design: list\nfixed: {" + F + "}\n"
                     "cells: [{name: a, tiled_mlp: arctic}, {name: b, loss_path: liger-flce}]\n")
    code, err = validate_here(path, capsys)
    assert code == 2 and "tiled-mlp-needs-unsloth: " in err and "liger-flce-needs-liger: " in err


def test_a_matrix_with_some_cells_skipped_still_validates(tmp_path, capsys):
    path = matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{tiled_mlp: ['off', arctic]}}\n")
    assert main(["validate", path]) == 0
    assert "2 cells, 1 skipped by declared conflicts" in capsys.readouterr().out


# R-nf4_cpu, R-unsloth_cpu: a level that needs CUDA on `device: cpu` can never run as written
@pytest.mark.parametrize(("fixed", "named"), [
    ("quantization: nf4", "quantization: nf4"),
    ("kernels: unsloth", "kernels: unsloth"),
    ("attention: flash_attention_2, dtype: bfloat16", "attention: flash_attention_2"),
    ("optimizer: paged_adamw_8bit", "optimizer: paged_adamw_8bit"),
    ("kernels: liger", "kernels: liger"),
])
def test_a_cuda_only_level_on_the_cpu_is_a_declared_conflict(tmp_path, capsys, fixed, named):
    cells = expand(base_matrix(tmp_path, fixed))
    assert {c.conflict.name for c in cells if c.conflict} == {"cuda-level-on-cpu"} and all(c.conflict for c in cells)
    code, err = validate_here(base_matrix(tmp_path, fixed), capsys)
    assert code == 2 and f"cuda-level-on-cpu: {named} runs only on a CUDA GPU, and `device: cpu` is asked" in err


def test_a_cuda_only_level_conflicts_on_the_cpu_only_and_keeps_its_id(tmp_path):
    on_cpu = expand(matrix_at(tmp_path, f"fixed: {{{F}}}\naxes: {{quantization: [none, nf4]}}\n"))
    assert [c.conflict.name if c.conflict else None for c in on_cpu] == [None, "cuda-level-on-cpu"]
    # a declared conflict changes no id: the cell is the one it was, now said to be skipped up front
    assert on_cpu[1].cell_id == "f6bfe5b2f6e3"
    # `device: cuda` (or auto) on a machine without a GPU depends on the machine: the run records it as skipped
    for device in ("cuda", "auto"):
        cells = expand(matrix_at(tmp_path, f"fixed: {{{F.replace('device: cpu', 'device: ' + device)}, "
                                         "quantization: nf4}\naxes: {adapter: [lora]}\n", name=device))
        assert cells[0].conflict is None


@pytest.mark.parametrize(("text", "where"), [
    (f"fixed: {{{F}, truncation_decay: 0.9}}\naxes: {{adapter: [lora, rslora]}}\n", "fixed.truncation_decay"),
    (f"fixed: {{{F}, truncation: tail}}\naxes: {{truncation_decay: [0.5, 0.9]}}\n", "axes.truncation_decay"),
    (f"design: list\nfixed: {{{F}}}\ncells: [{{name: a}}, {{name: b, truncation_decay: 0.9}}]\n",
     "cells[1].truncation_decay"),
    (f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\ninclude: [{{adapter: rslora, truncation_decay: 0.25}}]\n",
     "include[0].truncation_decay"),
])
def test_a_setting_that_acts_in_no_cell_is_refused(tmp_path, text, where):
    bad_matrix(matrix_at(tmp_path, text), f"{where}: {IDLE}")


def test_a_setting_that_acts_in_some_cells_is_left_alone(tmp_path):
    """Where the decay acts in some cells, the others carry it along: that is the axis the matrix means."""
    documents = F.replace("data: zipf", "data: grant-reports")  # the truncation acts only where sections are cut
    cells = expand(matrix_at(tmp_path, f"fixed: {{{documents}}}\naxes: {{truncation: [tail, exp_decay], "
                                     "truncation_decay: [0.5, 0.9]}\n"))
    assert len(cells) == 4


def test_refusing_an_idle_setting_changes_no_committed_id():
    """The check refuses; it never drops the setting from a cell, so every id stays what it was."""
    assert {c.cell_id for c in expand("smoke")} >= {"4c55591d5771", "d9946bcf27e9"}


# Y42: completion_only on data with no completion (a packed corpus) did nothing, silently, under new cell ids
def test_completion_only_on_a_packed_corpus_is_refused_and_its_default_is_not(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text(TINY1 % ', completion_only: "on"')
    refused(["validate", str(path)], capsys, "fixed.completion_only: completion_only has no effect: it acts only "
                                              "in cells with data: grant-reports, chat: or text:")
    path.write_text(TINY1 % ', completion_only: "off"')  # the default written out asks for nothing
    assert cli.main(["validate", str(path)]) == 0


# t18-004: documents: (the grant-reports workload's size) on data: stdlib-docs was taken without a word under new cell
# ids; it acts in no cell there, so it is refused as every setting that acts in no cell is
@pytest.mark.parametrize("setting", [pytest.param("documents: 5", id="t18-004"), "document_words: 900"])
def test_a_grant_reports_size_on_another_workload_is_refused(tmp_path, capsys, setting):
    path = tmp_path / "m.yaml"
    path.write_text(TINY1 % f", {setting}")
    name = setting.split(":")[0]
    refused(["validate", str(path)], capsys, f"fixed.{name}: {name} has no effect: it acts only in cells with data: "
                                              "grant-reports, and no cell of this matrix has data: grant-reports")


# t20-005: a one_at_a_time baseline naming lora_rank, no axis, set it in every cell over fixed:'s value without a word
def test_a_baseline_setting_that_is_no_axis_is_refused(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text("fixed: {model: \"arch:tiny-llama\", device: cpu, steps: 1, lora_rank: 8}\n"
                    "axes: {adapter: [lora, rslora]}\ndesign: one_at_a_time\n"
                    "baseline: {adapter: lora, lora_rank: 16}\n")
    refused(["validate", str(path)], capsys, "baseline.lora_rank: lora_rank is not an axis (fixed: sets it for every "
                                              "cell); a baseline names a level of each axis (adapter)")


# N03-N07: matrix names that are the project's own folders of results/ and reports/
@pytest.mark.parametrize("name", ["estimate", "superseded", "benchmarks", "memory-history"])
def test_a_matrix_may_not_take_the_name_of_a_folder_that_holds_no_matrix(tmp_path, capsys, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text(TINY1 % "")
    refused(["validate", str(path)], capsys, f"the name {name!r} is taken by")
    refused(["run-cell", "--matrix", str(path), "--cell", "dca0c19d53c5", "--results-dir", str(tmp_path / "r")],
            capsys, f"the name {name!r} is taken by")
    assert not (tmp_path / "r").exists()


# Z08, G04: a rank past every layer's full rank, and a model folder whose config gives no size
def test_a_rank_past_the_hidden_size_is_refused(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text(TINY1 % ", lora_rank: 1000")
    refused(["validate", str(path)], capsys, "lora_rank: 1,000 is more than the hidden size 64 of arch:tiny-llama")
    path.write_text(TINY1 % ", lora_rank: 64")  # the full rank of a 64-wide layer is still a rank
    assert cli.main(["validate", str(path)]) == 0


# M52, M53, M54, S09: a folder, a FIFO, /dev/zero as the matrix said "no matrix file"; M68: '' named '.'
@pytest.mark.parametrize("which", ["folder", "fifo", "zero", "loop"])
def test_a_matrix_that_is_no_regular_file_is_said_to_be_what_it_is(tmp_path, capsys, which):
    path, kind = odd_files(tmp_path)[which]
    matrix = tmp_path / "m.yaml"
    os.replace(path, matrix) if which != "loop" else (path.unlink(), matrix.symlink_to(matrix))
    kind = kind if which != "zero" else "a character device (a symlink to /dev/zero)"
    refused(["validate", str(matrix)], capsys, f"{matrix} is {kind}, not a matrix file")


def test_an_empty_matrix_name_is_refused_as_empty(capsys):
    refused(["validate", ""], capsys, "the matrix is named by an empty string")


# M41: control characters and direction overrides in a description were taken as text
@pytest.mark.parametrize("escaped", ["\\u202e", "\\u0000", "\\u2066", "\\x1b"])
def test_a_description_with_a_control_character_is_refused(tmp_path, capsys, escaped):
    path = matrix_at(tmp_path, f'description: "a {escaped} b"\n' + TINY2 % ("", ""))
    refused(["validate", path], capsys, "description: holds the control character U+")
    assert cli.main(["validate", matrix_at(tmp_path, 'description: "tabs\\tand\\nlines"\n' + TINY2 % ("", ""))]) == 0


# F52, F68, F69, S32: grad_accum 10**30 validated, estimated, and ran into an OverflowError whose error result stuck
@pytest.mark.parametrize(("extra", "said"), [
    (", grad_accum: 1000000000000000000000000000000", "fixed.grad_accum: 1000000000000000000000000000000 is above "
                                                      "the maximum 65,536"),
    (", batch_size: 100000", "fixed.batch_size: 100000 is above the maximum 4,096"),
    (", grad_accum: 65536, batch_size: 16", "(0 + 1) x 65,536 x 16 = 1,048,576 training sequences, more than a "
                                            "cell may train (1,000,000)"),
    (", lora_alpha: 10000000", "fixed.lora_alpha: 10000000 is above the maximum 65,536")])
def test_work_past_any_run_is_refused_by_validate(tmp_path, capsys, extra, said):
    refused(["validate", matrix_at(tmp_path, TINY2 % (extra, ""))], capsys, said)


# P14: include: [{}] added a cell of the defaults
@pytest.mark.parametrize("entry", ["{}", "{name: extra}"])
def test_an_include_entry_that_sets_nothing_is_refused(tmp_path, capsys, entry):
    refused(["validate", matrix_at(tmp_path, TINY2 % ("", f"include: [{entry}]\n"))], capsys,
            "include[0]: the entry sets no setting")


# X01: a budget of a few MiB read "over the 0.00 GiB budget"
def test_a_small_budget_is_said_in_mib():
    from harness.core.budget import shown_size

    assert shown_size(2**20) == "1.0 MiB" and shown_size(16 * 2**30) == "16.00 GiB"


FIXED = 'fixed: {{model: "arch:tiny-llama", device: cpu, steps: 2}}\n'
KEY_PLACES = {
    "top level": FIXED + "axes: {{adapter: [lora, rslora]}}\n{key}: 3\n",
    "fixed": 'fixed:\n  model: "arch:tiny-llama"\n  {key}: 3\naxes: {{adapter: [lora, rslora]}}\n',
    "axes": FIXED + "axes:\n  adapter: [lora, rslora]\n  {key}: [3]\n",
    "cells": FIXED + "cells:\n  - {{name: a, {key}: 3}}\n",
}
KEY_LINES = {"top level": 3, "fixed": 3, "axes": 4, "cells": 3}


# YAML keys that are no names: `~: 3`, `1: 3`, `2024-01-01: 3`, `yes: 3`, `true: 3`, at the top level and inside
# fixed:, axes: and a cell; they were told as Python's value (unknown key None, datetime.date(2024, 1, 1), True)
@pytest.mark.parametrize("place", KEY_PLACES)
@pytest.mark.parametrize(("key", "read_as"), [("~", "nothing"), ("1", "a number"), ("2024-01-01", "a date"),
                                              ("yes", "true/false"), ("true", "true/false")])
def test_a_key_yaml_reads_as_no_name_is_told_as_written(tmp_path, capsys, place, key, read_as):
    path = tmp_path / "m.yaml"
    path.write_text(KEY_PLACES[place].format(key=key))
    code, err = validate_here(str(path), capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"line {KEY_LINES[place]}: the key {key} reads as {read_as} in YAML, not as a name" in err, err
    assert "datetime" not in err and "None" not in err and "True" not in err


# a value YAML reads as a date (`seed: 2024-01-01`, `model: 2024-01-01`): shown as written, never datetime.date(...)
@pytest.mark.parametrize(("setting", "expected"), [
    ("seed: 2024-01-01", "fixed.seed: 2024-01-01 is not an integer"),
    ("model: 2024-01-01", 'YAML reads unquoted 2024-01-01 as a date: write it in quotes, model: "2024-01-01"'),
    ("seed: 2024-01-01 10:00:00", "fixed.seed: 2024-01-01 10:00:00 is not an integer")])
def test_a_value_yaml_reads_as_a_date_is_shown_as_written(tmp_path, capsys, setting, expected):
    path = tmp_path / "m.yaml"
    path.write_text(f'fixed: {{device: cpu, steps: 2, {setting}}}\naxes: {{adapter: [lora, rslora]}}\n')
    code, err = validate_here(str(path), capsys)
    assert code == 2 and len(err.splitlines()) == 1 and expected in err and "datetime" not in err, err


# numbers past what a float holds: 1e400 (overflow, read as inf) and 1e-400 (underflow, read as 0.0: a learning rate of
# none), plain, quoted and in YAML 1.1's float form; each one line with the number as written
@pytest.mark.parametrize(("setting", "expected"), [
    ("learning_rate: 1e400", "fixed.learning_rate: 1e400 is too large for a number: it would read as inf"),
    ('learning_rate: "1e400"', "fixed.learning_rate: 1e400 is too large for a number"),
    ("learning_rate: 1e-400", "fixed.learning_rate: 1e-400 is too small for a number: it would read as 0.0"),
    ("learning_rate: 1.0e+400", "line 1: learning_rate: 1.0e+400 is too large for a number"),
    ("learning_rate: 1.0e-400", "line 1: learning_rate: 1.0e-400 is too small for a number"),
    ("truncation_decay: 1e-400", "fixed.truncation_decay: 1e-400 is too small for a number")])
def test_a_number_that_overflows_or_underflows_is_refused_as_written(tmp_path, capsys, setting, expected):
    path = tmp_path / "m.yaml"
    path.write_text(f'fixed: {{model: "arch:tiny-llama", steps: 2, {setting}}}\naxes: {{adapter: [lora]}}\n')
    code, err = validate_here(str(path), capsys)
    assert code == 2 and len(err.splitlines()) == 1 and expected in err, err


# memory sizes written with non-ASCII digits ("１６GiB", fullwidth), which Python would read as 16GiB
@pytest.mark.parametrize("setting", ["budget: １６GiB", 'host_budget: "１６GiB"',
                                     "budget: {card: rtx4080, display_reserve: ０.５GiB}"])
def test_a_memory_size_with_digits_other_than_ascii_is_refused(tmp_path, capsys, setting):
    path = tmp_path / "m.yaml"
    path.write_text(f'fixed: {{model: "arch:tiny-llama", steps: 2, {setting}}}\naxes: {{adapter: [lora]}}\n')
    code, err = validate_here(str(path), capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "is written with digits other than 0-9" in err, err


# a cell name that looks like a cell id (12 hex digits: `name: 0123456789ab`), which --cell could take for another's id
@pytest.mark.parametrize("name", ["0123456789ab", "DEADBEEF0001"])
def test_a_cell_name_that_reads_as_a_cell_id_is_refused(tmp_path, capsys, name):
    path = tmp_path / "m.yaml"
    path.write_text(FIXED.format() + f"cells:\n  - {{name: {name}, adapter: lora}}\n")
    code, err = validate_here(str(path), capsys)
    assert code == 2 and len(err.splitlines()) == 1 and f"cells[0].name: '{name}' reads as a cell id" in err, err
