"""A matrix's `evaluation:` section and the evaluate stage given what cannot be scored: options that
cannot act, documents that were trained on, random weights.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import pytest

from harness import cli
from harness.spec.matrix import expand
from tests.refusals import SMOLLM, TINY2, F, bad_matrix, matrix_at, refused

# M-eval_seed_train: the held-out documents of the evaluation's seed are the training documents
GRANT = F.replace("data: zipf", "data: grant-reports")


@pytest.mark.parametrize("cell_seed", [0, 3])
@pytest.mark.parametrize("task", ["workload_bpb", "workload_recall"])
def test_evaluating_on_the_training_documents_seed_is_refused(tmp_path, cell_seed, task):
    """Training documents come from seed 0 whatever the cell's own seed (which only orders the examples)."""
    path = matrix_at(tmp_path, f"fixed: {{{GRANT}, seed: {cell_seed}}}\naxes: {{adapter: [lora, rslora]}}\n"
                             f"evaluation: {{tasks: [{task}], seed: 0}}\n")
    bad_matrix(path, f"evaluation: seed: 0 is the seed of the training documents of data: grant-reports, which cell "
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
    assert expand(matrix_at(tmp_path, f"fixed: {{{F.replace('zipf', data)}, seed: 3}}\naxes: {{adapter: [lora]}}\n"
                                    f"evaluation: {evaluation}\n"))


# V13, V16: an evaluation option no listed task reads, a huge one, a recall target twice
@pytest.mark.parametrize(("evaluation", "said"), [
    ("{tasks: [workload_bpb], examples: 10}", "evaluation.examples: no task listed reads it"),
    ("{tasks: [text_en], recall_targets: [0.5]}", "evaluation.recall_targets: no task listed reads it"),
    ("{tasks: [workload_recall], examples: 100000000}", "examples: 100,000,000 is above the maximum 100,000"),
    ("{tasks: [workload_recall], recall_targets: [0.5, 0.5]}", "recall_targets: a target is listed twice")])
def test_an_evaluation_option_that_cannot_act_is_refused(tmp_path, capsys, evaluation, said):
    text = SMOLLM % (', data: grant-reports, document_words: 400, documents: 2', f"evaluation: {evaluation}\n")
    refused(["validate", matrix_at(tmp_path, text)], capsys, said)


# V14: an evaluation of random weights only is said by validate (its tasks are recorded as n/a)
def test_validate_says_an_evaluation_of_random_weights_scores_nothing(tmp_path, capsys):
    assert cli.main(["validate", matrix_at(tmp_path, TINY2 % ("", "evaluation: {tasks: [workload_bpb]}\n"))]) == 0
    assert "every cell trains a model of random weights, so each evaluation task will be recorded as n/a" in \
        capsys.readouterr().out


# t18-029, t18-030: evaluate of a cell never trained under --results-dir said only "<file>: cannot be read: No such
# file or directory"; it says the cell was not trained there and what to run, and a task given twice is refused
@pytest.mark.parametrize(("extra", "said"), [
    pytest.param([], "cell 6390030c8763 (truncation=tail) has no result in {d}/quality-smoke/: it was not trained "
                     "there; train it first (vramlab run-cell --matrix quality-smoke --cell 6390030c8763 "
                     "--results-dir {d} --keep-adapter)", id="t18-029"),
    pytest.param(["--task", "text_en", "--task", "text_en"], "--task text_en is given more than once; give each task "
                                                             "once", id="t18-030"),
])
def test_evaluating_a_cell_not_trained_there_says_what_to_run(tmp_path, capsys, extra, said):
    refused(["evaluate", "--matrix", "quality-smoke", "--cell", "6390030c8763", "--results-dir", str(tmp_path),
             *extra], capsys, said.format(d=tmp_path))
    assert list(tmp_path.iterdir()) == []
