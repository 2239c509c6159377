"""The README a researcher reads first, and the documentation it links to: short, the two commands near the top,
every table and number it quotes made from the committed reports and results, every link resolving."""

import re

import pandas as pd
import pytest

from harness.report.readme import BLOCKS, block_names, outside_blocks, rewritten
from tests.conftest import REPO, repository_files

README = REPO / "README.md"
# a number a report gives: a decimal, a percentage, or a count with a thousands separator
QUOTED = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+\.\d+|\d+%)(?![\w.]*\d)")


def test_ci_runs_the_readme_test_command():
    """.ci/run takes the README's one test command (a line that makes a venv and ends in pytest) and runs it."""
    readme = README.read_text()
    ci = (REPO / ".ci" / "run").read_text()
    pattern = "^python3 -m venv .* && pytest"
    test_lines = [line for line in readme.splitlines() if re.match(pattern, line)]
    assert len(test_lines) == 1 and "pip install -c constraints-cpu.txt -e '.[test]'" in test_lines[0]
    assert f"command=$(grep -m1 -E '{pattern}' README.md)" in ci and 'bash -c "$command"' in ci


def test_the_readme_is_short_and_gives_the_two_commands_first():
    lines = README.read_text().splitlines()
    # 3,300 words: the study block grows to about 20 rows when the quality study has run every part
    assert len(" ".join(lines).split()) <= 3300
    main = [i for i, line in enumerate(lines)
            if line.startswith("python3 -m venv") and line.endswith("snakemake --cores 1")]
    tests = [i for i, line in enumerate(lines) if re.match("^python3 -m venv .* && pytest", line)]
    assert len(main) == 1 and len(tests) == 1 and max(main + tests) < 60
    fast = [line for line in lines if line.endswith('pytest -m "not slow"')]
    # the fast tier's command installs what it runs, ruff included, wherever it is run
    assert fast and all(line.startswith("pip install -c constraints-cpu.txt -e '.[test]' && ruff check .")
                        for line in fast)


def test_the_readme_blocks_are_what_the_reports_give():
    """Every generated block is present once and equal to what `vramlab readme` makes of the committed files."""
    text = README.read_text()
    assert sorted(block_names(text)) == sorted(BLOCKS)
    again, changed = rewritten(text, REPO)
    assert changed == [] and again == text


def _study_rows(text: str) -> list[tuple[str, str]]:
    """(matrix, the row as its report's summary would say it) for each row of the README's study block."""
    block = text.split("<!-- generated: study -->\n", 1)[1].split("<!-- end generated: study -->", 1)[0]
    rows, matrix = [], None
    for line in block.splitlines()[2:]:
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        matrix = re.search(r"\[`([^`]+)`\]", cells[0])[1] if cells[0] else matrix
        measured, effect, n, word = cells[2:]
        rows.append((matrix, f"{measured} {effect}, {n}: {word}" if effect != "–" else f"{measured}: {word}"))
    return rows


def test_the_study_block_says_each_verdict_in_its_reports_summary_words():
    """The README states the quality study's claims word for word as each report's summary does (effect, interval
    at its Holm level, n and the rule's word), and names the study matrices it has no report of yet."""
    text = README.read_text()
    rows = _study_rows(text)
    assert rows, "the study block lists no comparison"
    for matrix, said in rows:
        summary = (REPO / "reports" / matrix / "report.md").read_text().split("## Setup")[0]
        assert said in summary, (matrix, said)
    reported = {matrix for matrix, _ in rows}
    waiting = [m for m in ("study-vocabulary", "study-truncation-1-5b", "study-vocabulary-1-5b")
               if not (REPO / "reports" / m / "comparisons.csv").is_file()]
    assert all(f"`{m}`" in text.split("No results yet:")[1].split("\n")[0] for m in waiting)
    assert reported.isdisjoint(waiting)


def test_the_study_block_turns_a_verdict_into_the_readme_as_the_summary_says_it(tmp_path):
    """A study report with verdicts (higher, no difference) and a difference-in-differences, made from a
    comparisons.csv of the committed report with five seeds: each row is its summary line's words."""
    from harness.report.comparison_text import headline, read_comparisons
    from harness.report.readme import study

    table = read_comparisons(REPO / "reports" / "study-truncation")
    table = table.assign(seeds=5, level=0.9875, low=table["effect"] - 0.01, high=table["effect"] + 0.01,
                         p_holm=0.5, verdict=["no difference"] * (len(table) - 1) + ["higher"])
    folder = tmp_path / "reports" / "study-truncation"
    folder.mkdir(parents=True)
    table.to_csv(folder / "comparisons.csv", index=False)
    summary = "\n".join(headline(read_comparisons(folder)))
    (folder / "report.md").write_text(f"# study-truncation\n\n## Summary\n\n{summary}\n\n## Setup\n")
    block = study(tmp_path)
    rows = _study_rows(f"<!-- generated: study -->\n{block}<!-- end generated: study -->")
    truncation = table[table["family"] == "truncation"]
    assert len(rows) == len(truncation) and rows[-1][1].endswith(": **higher**")
    assert all(said in summary for _, said in rows)
    assert "0 of 10 cells" in block and "difference-in-differences" in block


def test_a_block_changed_by_hand_is_found_and_made_again():
    text = README.read_text()
    cell = next(line for line in text.splitlines() if line.startswith("| `seed-stack` |"))
    edited = text.replace(cell, cell.replace("10.83", "10.38"))
    assert edited != text
    again, changed = rewritten(edited, REPO)
    assert changed == ["headline"] and again == text


def test_the_readme_command_checks_and_rewrites_the_blocks(tmp_path, capsys):
    from harness.cli import main

    assert main(["readme", "--check", "--file", str(README)]) == 0
    copy = REPO / f".readme-test-{tmp_path.name}.md"  # beside the reports the blocks are made from
    try:
        copy.write_text(README.read_text().replace("| 5,884 |", "| 5,844 |", 1))
        assert main(["readme", "--check", "--file", str(copy)]) == 1
        assert "headline" in capsys.readouterr().err
        assert main(["readme", "--file", str(copy)]) == 0
        assert copy.read_text() == README.read_text()
    finally:
        copy.unlink(missing_ok=True)


def _report_text() -> str:
    return "\n".join(p.read_text(errors="replace") for p in repository_files(REPO / "reports")
                     if p.suffix in (".md", ".csv"))


def test_every_number_the_readme_quotes_is_in_the_reports():
    """Outside its generated blocks the README quotes no number (a decimal, a percentage, a count like 1,024) that
    the committed reports do not give."""
    prose = re.sub(r"```.*?```", "", outside_blocks(README.read_text()), flags=re.DOTALL)
    reports = _report_text()
    quoted = QUOTED.findall(prose)
    assert "1,024" in quoted  # it reads the prose (the ceiling's resolution, which its report gives)
    assert [n for n in quoted if n not in reports] == []


def test_the_number_check_finds_a_number_no_report_gives():
    assert QUOTED.findall("peaks at 10.47 GiB, 7% faster, 12,345 tokens; torch 2.13.0, r=16") == \
        ["10.47", "7%", "12,345"]
    assert "10.47" not in _report_text().split()


def _links(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def _anchor(heading: str) -> str:
    """GitHub's id of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip("# ").lower()).replace(" ", "-")


def _anchors(path) -> set[str]:
    return {_anchor(line) for line in path.read_text().splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_link_resolves(page):
    for link in _links(page):
        if link.startswith(("http://", "https://", "mailto:")):
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), (page.name, link)
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), (page.name, link)


def test_the_docs_index_lists_every_page_and_docs_hold_no_trial_log():
    assert not (REPO / "docs" / "bad-input").exists()
    listed = {link.partition("#")[0] for link in _links(REPO / "docs" / "index.md")}
    pages = {p.name for p in (REPO / "docs").glob("*.md")} - {"index.md"}
    assert pages <= listed
    assert "docs/index.md" in README.read_text()


# Matrices completed over several GPU sessions: their committed report is partial and says so (pending rows).
# None at present (quality-qwen has a result for every cell since its third session).
PARTIAL: set[str] = {"study-truncation"}  # the quality study runs one seed a session (docs/quality-study.md)


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


def test_the_quality_notes_table_is_the_committed_report():
    """Every number of docs/results-quality-smollm2.md's table: n, peak memory, and each task's mean, spread and
    untrained score, recomputed from the committed quality.csv and cells.csv."""
    import math

    from harness.report.quality_findings import GIB, group_name, summarize

    section = (REPO / "docs" / "results-quality-smollm2.md").read_text().split("\n## ", 1)[0]
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
