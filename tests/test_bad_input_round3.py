"""Bad input, third round (issue 25): a measured result is never replaced by a machine that can only skip its cell
and whatever is replaced is kept, an unusable cache or a kill leaves no error that sticks, options given twice and
bad --config values are one line, data errors name the path read, and no reader takes a result's temporary file for
a result."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO, TINY, write_matrix

# the helpers of the second round: one vramlab in a child process, its one line, a folder's files

SEED_STACK = "3232155d81f9"  # seed-16gb's `seed-stack`, measured on the H200


def _tiny_cell(tmp_path: Path) -> tuple[Path, str]:
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: plain, context: 32}"))
    from harness.spec.matrix import expand

    return matrix, expand(str(matrix))[0].cell_id


# 8: no reader of a results folder takes a result's hidden temporary file (empty until its rename) for a result
def test_readers_of_results_folders_skip_a_result_being_written(tmp_path):
    from harness.cli import main
    from harness.estimate import calibration, outside
    from harness.process.ceiling import kept_probes
    from harness.results.budget_spelling import _move_evaluations
    from harness.results.store import result_files
    from harness.spec.matrix import find_cell

    seed = tmp_path / "seed-16gb"
    shutil.copytree(REPO / "results" / "seed-16gb", seed, ignore=shutil.ignore_patterns("superseded", "damaged"))
    (seed / f".{SEED_STACK}.x1y2.tmp.json").write_text("")
    assert calibration.rows([seed]) == calibration.rows([REPO / "results" / "seed-16gb"])
    assert outside.derive([seed]) == outside.derive([REPO / "results" / "seed-16gb"])
    assert main(["check", str(seed)]) == 0

    probe_id = sorted((REPO / "results" / "ceiling-16gb" / "ceiling").iterdir())[0].name
    probes = tmp_path / "probes"
    shutil.copytree(REPO / "results" / "ceiling-16gb" / "ceiling" / probe_id, probes)
    (probes / ".abc.x1y2.tmp.json").write_text("")
    assert kept_probes(probes, find_cell("ceiling-16gb", probe_id))

    evaluations = tmp_path / "evaluations"
    old, new = "dfc7878630a7", "0123456789ab"
    shutil.copytree(REPO / "results" / "quality-smollm2" / "evaluations" / old, evaluations / old)
    (evaluations / old / ".text_de.x1y2.tmp.json").write_text("")
    _move_evaluations(evaluations, old, new)
    assert (evaluations / new / "text_de.json").is_file()
    assert all(not p.name.startswith(".") for p in result_files(tmp_path, "**/*.json"))
