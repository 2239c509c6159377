"""The `comparisons:` section of a matrix file: what it holds once parsed, and one clear line for each mistake."""

from __future__ import annotations

import pytest
import yaml

from harness.spec.comparisons import ComparisonSpecError, parse
from harness.spec.matrix import MatrixError, comparison_plan, expand
from tests.conftest import write_matrix

GROUPS = ("exp-20k", "tail-20k", "native", "counted")
TASKS = {"workload_recall": "recall", "workload_recall_fixed": "recall", "workload_bpb": "section_bpb",
         "help_de": "text", "hellaswag": None}
ENTRY = "{family: truncation, question: exp_decay against tail, a: exp-20k, b: tail-20k, metric: recall, " \
        "task: workload_recall_fixed}"


def _parse(text: str):
    return parse(yaml.safe_load(text), GROUPS, TASKS)


def test_a_section_parses_into_comparisons_with_their_condition_and_margins():
    plan = _parse(f"""
margins: {{recall: 0.05, bits_per_byte: 0.01}}
compare:
  - {ENTRY}
  - {{family: truncation, question: exp_decay against tail, a: exp-20k, b: tail-20k, metric: recall,
      task: workload_recall, did: true}}
  - {{family: training, question: does training change the model, a: exp-20k, b: untrained,
      metric: bits_per_byte, task: workload_bpb, condition: own}}
  - {{family: vocabulary, question: counted against native, a: counted, b: native, metric: bits_per_byte,
      task: help_de}}
""")
    assert [c.condition for c in plan.comparisons] == ["fixed", "own", "own", ""]
    assert [c.did for c in plan.comparisons] == [False, True, False, False]
    assert plan.comparisons[2].b == "untrained"
    assert plan.margins == {"recall": 0.05, "exact_match": 0.05, "bits_per_byte": 0.01}


def test_margins_left_out_are_the_defaults():
    assert _parse(f"compare: [{ENTRY}]").margins["bits_per_byte"] == 0.01


def test_the_seeds_a_verdict_needs_are_decided_in_the_section():
    assert _parse(f"compare: [{ENTRY}]").min_seeds == 2
    assert _parse(f"compare: [{ENTRY}]\nmin_seeds: 5").min_seeds == 5


@pytest.mark.parametrize(("text", "message"), [
    ("compare: []", "compare: expected a non-empty list of comparisons"),
    (f"compare: [{ENTRY}]\nmargin: {{recall: 0.05}}", "unknown key 'margin'; did you mean 'margins'?"),
    (f"compare: [{ENTRY.replace('a: exp-20k', 'a: exp-2k')}]",
     "compare[0].a: no cell is named 'exp-2k'; did you mean 'exp-20k'?"),
    (f"compare: [{ENTRY.replace('b: tail-20k', 'b: untrainde')}]",
     "compare[0].b: no cell is named 'untrainde'; did you mean 'untrained'?"),
    (f"compare: [{ENTRY.replace('b: tail-20k', 'b: exp-20k')}]", "a and b are both 'exp-20k'"),
    (f"compare: [{ENTRY.replace('metric: recall', 'metric: accuracy')}]",
     "compare[0].metric: unknown metric 'accuracy'"),
    (f"compare: [{ENTRY.replace('metric: recall', 'metric: bits_per_byte')}]",
     "task 'workload_recall_fixed' has no item outcomes of bits_per_byte (tasks that do: workload_bpb, help_de)"),
    (f"compare: [{ENTRY.replace('task: workload_recall_fixed', 'task: workload_recal')}]",
     "compare[0].task: 'workload_recal' is not among evaluation.tasks"),
    (f"compare: [{ENTRY.replace('task: workload_recall_fixed', 'task: hellaswag')}]",
     "task 'hellaswag' has no item outcomes of recall"),
    (f"compare: [{ENTRY.replace('}', ', condition: own}')}]",
     "compare[0].condition: 'own', but task 'workload_recall_fixed' scores under 'fixed'"),
    (f"compare: [{ENTRY.replace('}', ', did: yes please}')}]", "compare[0].did: 'yes please' is not true or false"),
    (f"compare: [{ENTRY.replace('b: tail-20k', 'b: untrained').replace('}', ', did: true}')}]",
     "compare[0].did: a difference-in-differences holds two trained arms"),
    (f"compare: [{ENTRY.replace('family: truncation', 'family: two words')}]",
     "compare[0].family: 'two words' is not a family name"),
    (f"compare: [{ENTRY.replace('question: exp_decay against tail, ', '')}]", "compare[0]: question missing"),
    (f"compare: [{ENTRY.replace('}', ', margin: 0.1}')}]", "compare[0]: unknown key 'margin'"),
    (f"compare: [{ENTRY}, {ENTRY}]", "compare[1]: the same comparison as compare[0]"),
    (f"compare: [{ENTRY}]\nmargins: {{recall: -0.05}}", "margins.recall: -0.05 is not a margin"),
    (f"compare: [{ENTRY}]\nmargins: {{recall: 2}}", "margins.recall: 2 is not a margin"),
    (f"compare: [{ENTRY}]\nmargins: {{recall: .nan}}", "margins.recall: nan is not a margin"),
    (f"compare: [{ENTRY}]\nmargins: {{recall: five}}", "margins.recall: 'five' is not a margin"),
    (f"compare: [{ENTRY}]\nmargins: {{recal: 0.05}}", "margins: unknown metric 'recal'; did you mean 'recall'?"),
    ("- a list", "expected a mapping with compare (and margins, min_seeds)"),
    (f"compare: [{ENTRY}]\nmin_seeds: 1", "min_seeds: 1 is not a number of seeds: a whole number from 2 to 1000"),
    (f"compare: [{ENTRY}]\nmin_seeds: 2.5", "min_seeds: 2.5 is not a number of seeds"),
    (f"compare: [{ENTRY}]\nmin_seeds: true", "min_seeds: True is not a number of seeds"),
    (f"compare: [{ENTRY}]\nmin_seed: 5", "unknown key 'min_seed'; did you mean 'min_seeds'?"),
])
def test_each_mistake_is_one_line_that_says_where(text, message):
    with pytest.raises(ComparisonSpecError) as err:
        _parse(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_matrix_that_evaluates_nothing_has_nothing_to_compare():
    with pytest.raises(ComparisonSpecError, match="evaluates nothing"):
        parse({"compare": []}, GROUPS, {})


# t20-020: a list cell named untrained passed validate beside `b: untrained`, which then named both that cell and the
# base model of every arm
def test_a_cell_named_untrained_is_refused_where_comparisons_are():
    section = {"compare": [{"family": "f", "question": "q", "a": "native", "b": "untrained",
                            "metric": "recall", "task": "workload_recall"}]}
    with pytest.raises(ComparisonSpecError, match="a cell is named 'untrained', the word comparisons use for the base "
                                                  "model"):
        parse(section, (*GROUPS, "untrained"), TASKS)


MATRIX = """
fixed: {model: "arch:tiny-llama", budget: 16GiB, data: grant-reports, context: 1024}
seeds: [0, 1]
design: list
cells:
  - {name: exp, truncation: exp_decay}
  - {name: tail, truncation: tail}
evaluation: {tasks: [workload_recall, workload_bpb]}
comparisons:
  compare:
    - {family: truncation, question: exp_decay against tail, a: exp, b: %s, metric: recall, task: workload_recall}
"""


def test_the_matrix_checks_its_comparisons_against_its_cells_and_tasks(tmp_path):
    matrix = write_matrix(tmp_path, MATRIX % "tail")
    assert len(expand(str(matrix), check_model=False)) == 4
    plan = comparison_plan(str(matrix))
    assert plan is not None and plan.comparisons[0].a == "exp" and plan.comparisons[0].condition == "own"
    bad = write_matrix(tmp_path, MATRIX % "tail/seed=0", name="bad")
    with pytest.raises(MatrixError) as err:
        expand(str(bad), check_model=False)
    assert str(err.value).endswith("bad.yaml: comparisons: compare[0].b: no cell is named 'tail/seed=0'; did you "
                                   "mean 'tail'? (a cell repeated over seeds goes by its name without /seed=N; b "
                                   "may also be untrained)")


def test_a_matrix_refuses_a_min_seeds_its_seeds_could_never_reach(tmp_path):
    matrix = write_matrix(tmp_path, MATRIX % "tail" + "  min_seeds: 3\n")
    with pytest.raises(MatrixError) as err:
        expand(str(matrix), check_model=False)
    assert str(err.value).endswith("comparisons: min_seeds: 3, but 'exp' has 2 seeds in this matrix, so its "
                                   "comparisons could never get a verdict; add seeds or lower min_seeds")
    enough = write_matrix(tmp_path, MATRIX.replace("seeds: [0, 1]", "seeds: [0, 1, 2]") % "tail" + "  min_seeds: 3\n",
                          name="enough")
    assert comparison_plan(str(enough)).min_seeds == 3


def test_a_matrix_without_the_section_has_no_plan(tmp_path):
    matrix = write_matrix(tmp_path, MATRIX.split("comparisons:")[0])
    assert comparison_plan(str(matrix)) is None
    empty = write_matrix(tmp_path, MATRIX.split("comparisons:")[0] + "comparisons:\n", name="empty")
    with pytest.raises(MatrixError, match="comparisons: an empty section"):
        expand(str(empty), check_model=False)
