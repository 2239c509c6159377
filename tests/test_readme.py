import pandas as pd
import pytest

from tests.conftest import REPO, repository_files


def test_ci_runs_the_readme_test_command():
    """.ci/run takes the README's one test command (a line that makes a venv and ends in pytest) and runs it."""
    import re

    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    pattern = "^python3 -m venv .* && pytest"
    test_lines = [line for line in readme.splitlines() if re.match(pattern, line)]
    assert len(test_lines) == 1 and "pip install -c constraints-cpu.txt -e '.[test]'" in test_lines[0]
    assert f"command=$(grep -m1 -E '{pattern}' README.md)" in ci and 'bash -c "$command"' in ci


def test_readme_main_command_ends_with_the_default_job():
    readme = (REPO / "README.md").read_text()
    assert any(line.startswith("python3 -m venv") and line.endswith("snakemake --cores 1")
               for line in readme.splitlines())


def _headline_rows() -> list[list[str]]:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Headline results", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| `")]


def test_readme_headline_is_the_committed_report():
    """The README's numbers are copied by hand; they must still be those of the generated report."""
    cells = pd.read_csv(REPO / "reports" / "seed-16gb" / "cells.csv", dtype={"cell_id": str}).set_index("name")
    rows = _headline_rows()
    assert len(rows) == len(cells)
    for name, _, context, result, device, allocated, tokens in rows:
        cell = cells.loc[name.strip("`")]
        assert f"{cell['context']:,}" == context
        assert result.split()[0] == cell["status"], name
        for shown, column in ((device, "peak_device_bytes"), (allocated, "peak_allocated_bytes")):
            assert shown == ("–" if pd.isna(cell[column]) else f"{cell[column] / 2**30:.2f}"), (name, column)
        assert tokens == ("–" if pd.isna(cell["tokens_per_second"]) else f"{cell['tokens_per_second']:,.0f}")


# Matrices completed over several GPU sessions: their committed report is partial and says so (pending rows).
# None at present (quality-qwen has a result for every cell since its third session).
PARTIAL: set[str] = set()


@pytest.mark.slow
def test_committed_reports_are_generated_from_the_committed_results(tmp_path):
    """`vramlab report --all --out DIR` rebuilds every committed report from the committed results: every file,
    tables, text and charts, byte for byte."""
    from harness.report.rebuild import committed_matrices, rebuild_all

    matrices = committed_matrices(REPO / "reports")
    assert {"seed-16gb", "smoke", "gpu-check", "quality-smollm2"} <= set(matrices)
    # A committed report has a result for every cell of its matrix, unless it is declared partial above.
    for matrix in matrices:
        pending = pd.read_csv(REPO / "reports" / matrix / "cells.csv")["status"].eq("pending")
        assert pending.any() == (matrix in PARTIAL), matrix
    written = rebuild_all(REPO / "results", REPO / "reports", tmp_path)
    # the ceiling report and the estimate's calibration are rebuilt too, every file of theirs as committed
    for path in written:
        if path.parent.name not in matrices:
            assert path.read_bytes() == (REPO / "reports" / path.parent.name / path.name).read_bytes(), path
    assert {"ceiling-16gb", "estimate"} <= {path.parent.name for path in written}
    for matrix in matrices:
        # every committed file is one the report writes: no hand-written notes that go stale beside it
        committed = sorted(p.name for p in repository_files(REPO / "reports" / matrix))
        assert committed == sorted(p.name for p in (tmp_path / matrix).iterdir()), matrix
        for name in committed:
            assert (tmp_path / matrix / name).read_bytes() == (REPO / "reports" / matrix / name).read_bytes(), \
                (matrix, name)


def test_readme_quality_table_is_the_committed_report():
    """Every number of the README's quality table: n, peak memory, and each task's mean, spread and untrained
    score, recomputed from the committed quality.csv and cells.csv."""
    import math

    from harness.report.quality_findings import GIB, group_name, summarize

    readme = (REPO / "README.md").read_text()
    section = readme.split("## Quality on real weights, CPU-sized: `quality-smollm2`", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| `")]
    cells = pd.read_csv(REPO / "reports" / "quality-smollm2" / "cells.csv")
    table = summarize(pd.read_csv(REPO / "reports" / "quality-smollm2" / "quality.csv"))
    ok = cells[cells["status"] == "ok"].assign(group=lambda c: c["name"].map(group_name))
    assert [row[0].strip("`") for row in rows] == list(dict.fromkeys(ok["group"]))
    for group, _, n, peak, *scores in rows:
        members = ok[ok["group"] == group.strip("`")]
        assert int(n) == len(members) and peak == f"{members['peak_device_bytes'].mean() / GIB:.2f}", group
        for task, shown in zip(["workload_bpb", "text_en", "text_es", "text_de"], scores, strict=True):
            row = table[(table["group"] == group.strip("`")) & (table["task"] == task)
                        & (table["metric"] == "bits_per_byte")].iloc[0]
            spread = f" ± {row['sd']:.3f}" if not math.isnan(row["sd"]) else ""
            assert shown == f"{row['mean']:.3f}{spread} ({row['baseline']:.3f})", (group, task)


def test_readme_ceiling_table_is_the_committed_ceiling_report():
    """Every number of the README's ceiling table, from reports/ceiling-16gb/ceiling.csv."""
    table = pd.read_csv(REPO / "reports" / "ceiling-16gb" / "ceiling.csv").set_index("cell")
    readme = (REPO / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| `") and line.count("|") == 8]
    found = {}
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        found[cells[0].strip("`")] = cells[1:]
    gib = 2**30
    for name, r in table.iterrows():
        assert found[name] == [f"{int(r.ceiling_context):,}", f"{int(r.estimated_context):,}",
                               f"{r.peak_device_bytes / gib:.2f}", f"{r.peak_host_unmapped_bytes / gib:.2f}",
                               f"{r.peak_host_pinned_bytes / gib:.2f}", f"{r.tokens_per_second:,.0f}"], name
