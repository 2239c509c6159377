"""The context ceiling: the bisection, the `ceiling:` section, and a real search whose probes are real cells."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from harness.spec.ceiling import CeilingSpec, CeilingSpecError, bisect, probe_cell
from harness.spec.matrix import PROBE_POSITIONS_FACTOR, MatrixError, check_cell, expand, expand_spec, find_cell
from tests.conftest import REPO, copy_repository_files, write_matrix


@pytest.mark.parametrize(("limit", "expected"), [
    (4_000, None),  # not even the low end fits
    (8_192, 8_192),
    (20_000, 19_456),
    (65_535, 64_512),
    (131_072, 131_072),  # the top of the range fits
    (10**9, 131_072),
])
@pytest.mark.parametrize("guess", [None, 8_192, 19_000, 20_480, 40_000, 131_072, 10**6])
def test_bisection_finds_the_largest_fitting_multiple_of_the_resolution(limit, expected, guess):
    spec = CeilingSpec(low=8_192, high=131_072, resolution=1_024)
    probed: list[int] = []

    def fits(context: int) -> bool:
        probed.append(context)
        return context <= limit

    assert bisect(fits, spec, guess) == expected  # a wrong guess costs probes, never the answer
    assert all(c % 1_024 == 0 and 8_192 <= c <= 131_072 for c in probed)
    assert len(probed) == len(set(probed)) and len(probed) <= 3 + 7  # log2(120 steps of 1,024) rounds up to 7


def test_a_good_estimate_saves_probes():
    spec = CeilingSpec(low=8_192, high=131_072, resolution=1_024)
    counts = {}
    for guess in (None, 20_000):
        probed: list[int] = []
        assert bisect(lambda c, p=probed: p.append(c) or c <= 20_000, spec, guess) == 19_456
        counts[guess] = len(probed)
    assert counts[20_000] <= 5 < counts[None]


@pytest.mark.parametrize(("section", "message"), [
    ("yes", "expected a mapping"),
    ({"low": 8192}, "high missing; a ceiling section names the contexts it searches between"),
    ({"low": 8192, "high": 4096}, "must be below high"),
    ({"low": 8000, "high": 16384}, "multiples of resolution"),
    ({"low": 8192, "high": 16384, "step": 1}, "unknown key 'step'"),
])
def test_a_bad_ceiling_section_says_what_is_wrong(section, message):
    with pytest.raises(CeilingSpecError, match=message):
        CeilingSpec.parse(section)


MATRIX = """
fixed: {model: "arch:tiny-qwen3", data: zipf, device: cpu, warmup_steps: 1, steps: 1, lora_rank: 4, lora_alpha: 4,
        context: 32}
design: list
cells:
  - {name: roomy, budget: 64GiB}
  - {name: tight, budget: 0.01GiB}
ceiling: {low: 32, high: 96, resolution: 32}
"""


@pytest.mark.slow
def test_a_search_measures_real_probes_keeps_them_and_resumes(tmp_path, cache_dir):
    matrix = tmp_path / "ceil.yaml"
    matrix.write_text(MATRIX)
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "harness", "ceiling", str(matrix), "--results-dir", str(tmp_path / "results"),
               "--reports-dir", str(tmp_path / "reports")]
    # both searches at once: their probes share the device, so peaks are measured and speed is not
    done = subprocess.run([*command, "--jobs", "2"], env=env, capture_output=True, text=True, timeout=900,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = pd.read_csv(tmp_path / "reports" / "ceil" / "ceiling.csv").set_index("cell")
    assert table.at["roomy", "ceiling_context"] == 96 and table.at["roomy", "probes"] == "64:ok 96:ok"
    # the tiny architecture's shapes are known, so the estimate answered first and bracketed the search
    assert table.at["roomy", "estimated_context"] == 96 and pd.isna(table.at["tight", "estimated_context"])
    assert pd.isna(table.at["tight", "ceiling_context"]) and table.at["tight", "answer"] == "below 32"
    assert table.at["tight", "probes"] == "32:oom"
    probes = sorted((tmp_path / "results" / "ceil" / "ceiling").glob("*/*.json"))
    assert len(probes) == 3
    for path in probes:
        result = json.loads(path.read_text())
        assert result["config"]["context"] in (32, 64, 96) and result["cell_id"] == path.stem
        assert result["metrics"]["throughput_measured"] is False
    assert pd.isna(table.at["roomy", "tokens_per_second"])
    check = subprocess.run([sys.executable, "-m", "harness", "check", *map(str, probes)], env=env,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    # a second search reads its probes back instead of measuring them again
    mtimes = {p: p.stat().st_mtime_ns for p in probes}
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0 and {p: p.stat().st_mtime_ns for p in probes} == mtimes


def test_the_ceiling_chart_draws_what_was_measured_and_says_what_was_not():
    from harness.report.charts.ceiling import DESKTOP_RAM, draw
    from harness.report.charts.style import legend_texts

    table = pd.DataFrame([
        {"cell": "a", "ceiling_context": 54_272, "estimated_context": 51_200, "answer": "54,272",
         "peak_host_unmapped_bytes": 21.5 * 2**30, "peak_host_pinned_bytes": 18 * 2**30, "tokens_per_second": None},
        {"cell": "b", "ceiling_context": None, "estimated_context": 9_216, "answer": "below 8,192",
         "peak_host_unmapped_bytes": None, "peak_host_pinned_bytes": None, "tokens_per_second": None}])
    fig = draw(table, 8_192, 131_072)
    reached, host = fig.axes[0], fig.axes[1]
    assert [round(p.get_width()) for p in reached.patches if p.get_height() == 0.6] == [54_272, 0]
    assert list(reached.collections[0].get_offsets()[:, 0]) == [51_200, 9_216]
    assert reached.get_xlim()[1] < 131_072  # the range's top is far off: not drawn, the data fill the axis
    assert [round(p.get_width(), 1) for p in host.patches] == [21.5, 0.0, 18.0, 0.0]
    assert sorted(round(line.get_xdata()[0], 1) for line in host.lines) == sorted(round(v, 1) for v in
                                                                                 DESKTOP_RAM.values())
    legend = legend_texts(fig)
    assert any("not measured" in t for t in legend) and len(fig.axes) == 2
    table["tokens_per_second"] = [3_380.0, None]
    assert len(draw(table, 8_192, 131_072).axes) == 3


def test_a_warm_search_starts_its_probes_as_run_cell_warm_start_does(monkeypatch, tmp_path):
    from harness.process import ceiling

    commands = []
    monkeypatch.setattr(ceiling.subprocess, "run",
                        lambda command, check: commands.append(command) or subprocess.CompletedProcess(command, 0))
    cell = next(iter(expand(write_matrix(tmp_path, MATRIX, "ceil"))))
    out = tmp_path / "results" / "ceil" / "ceiling" / cell.cell_id / "p.json"
    ceiling.run_probe("ceil", cell, 64, out, warm=True)
    ceiling.run_probe("ceil", cell, 64, out)
    assert "--warm-start" in commands[0] and "--warm-start" not in commands[1]


@pytest.mark.parametrize(("fits", "expected"), [
    ({8: True, 9: False}, 8),  # a fit next to a miss: settled
    ({8: True, 10: False, 12: False}, None),  # 9 is not known yet
    ({4: True, 8: True, 9: False, 6: False}, 8),  # the longest fit decides; a miss below it says nothing more
    ({16: True}, 16),  # the top of the range fits
    ({9: False}, None),
    ({}, None),
])
def test_kept_probes_settle_an_answer_only_next_to_a_miss_or_at_the_top(fits, expected):
    from harness.results.ceiling import settled

    spec = CeilingSpec(low=2, high=16, resolution=1)
    assert settled(fits, spec) == expected


def test_the_committed_probes_settle_a_search_whatever_the_estimate_says_now(tmp_path):
    """The tiled MLP's search started from an estimate of 77,824 tokens; today's estimate would start it
    elsewhere, at contexts never probed. The kept probes already hold 69,632 ok and 70,656 oom: no probe runs."""

    from harness.process import ceiling

    cell = next(c for c in expand("ceiling-16gb") if c.name == "unsloth-offload-tiled-mlp")
    source = REPO / "results" / "ceiling-16gb" / "ceiling" / cell.cell_id
    copy_repository_files(source, tmp_path / "ceiling-16gb" / "ceiling" / cell.cell_id)

    def must_not_run(*args):
        raise AssertionError(f"a probe was run: {args}")

    spec = CeilingSpec(low=8192, high=131072, resolution=1024)
    found = ceiling.search("ceiling-16gb", cell, spec, tmp_path, run=must_not_run)
    assert found.ceiling == 69_632 and found.estimated != 77_824
    assert sorted(found.probes) == sorted(json.loads(p.read_text())["config"]["context"] for p in source.glob("*.json"))
    assert found.row()["probes"].startswith("69632:ok 70656:oom")


def test_a_probe_may_pass_the_models_positions_as_rope_scaling_would_but_a_matrix_cell_may_not():
    """The published Qwen3-8B answers (51-67k tokens) lie past its 40,960 positions: a search must be able to probe
    them again, up to PROBE_POSITIONS_FACTOR times the positions, while a matrix cell there is refused."""
    search = find_cell("ceiling-16gb", "2cac5d6f0095")
    check_cell("ceiling-16gb", probe_cell(search, 54272))
    with pytest.raises(MatrixError, match=f"40,960 positions .*{40960 * PROBE_POSITIONS_FACTOR:,}"):
        check_cell("ceiling-16gb", probe_cell(search, 40960 * PROBE_POSITIONS_FACTOR + 1024))
    with pytest.raises(MatrixError, match=r"54,272 tokens, but arch:qwen3-8b has 40,960 positions$"):
        expand_spec("m", {"fixed": {"model": "arch:qwen3-8b", "context": 54272}, "axes": {"adapter": ["lora"]}},
                    source="m.yaml")
