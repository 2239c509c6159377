"""The committed cell-time trial (results/benchmarks/cell-time-trial/): its comparison is what its files say,
and what docs/gpu.md says of it holds: peaks unchanged, every cell fresh, the shorter exit."""

from __future__ import annotations

import json

from benchmarks.cell_time import comparison, load
from tests.conftest import REPO

TRIAL = REPO / "results" / "benchmarks" / "cell-time-trial"


def test_the_committed_comparison_is_the_one_its_files_give():
    assert comparison(load(TRIAL)) == (TRIAL / "comparison.md").read_text()


def test_the_trial_kept_every_peak_and_every_cell_started_fresh():
    table = load(TRIAL)
    before = table[table.variant == "before"].set_index("cell_id")
    after = table[table.variant == "after"].set_index("cell_id").loc[before.index]
    assert len(before) == 4
    assert (before["peak_device"] == after["peak_device"]).all()
    assert ((after["peak_host"] - before["peak_host"]).abs() <= 4 * 2**20).all()
    assert set(table["start"]) == {"fresh"}
    assert (before["status"] == after["status"]).all()


def test_the_measuring_process_exits_sooner_once_its_result_is_written():
    table = load(TRIAL)
    inside = table[[c for c in table.columns if c.startswith("phase:")]].sum(axis=1)
    outside = (table["wall"] - inside).groupby(table["variant"])
    # as docs/gpu.md rounds them
    assert (round(outside.min()["before"], 1), round(outside.max()["before"], 1)) == (3.0, 5.6)
    assert (round(outside.min()["after"], 1), round(outside.max()["after"], 1)) == (1.1, 2.4)


def test_unsloths_import_is_what_the_readme_says_of_the_unsloth_cells():
    table = load(TRIAL)
    unsloth = table[table.cell != "liger-not-unsloth"]
    assert (round(unsloth["phase:prepare"].min()), round(unsloth["phase:prepare"].max())) == (22, 32)
    assert (round(unsloth["rest"].min()), round(unsloth["rest"].max())) == (44, 69)


MATRIX = REPO / "results" / "benchmarks" / "cell-time-seed-16gb"


def compared(folder):
    """A sitting's before and after rows by cell, its table checked to give its committed comparison."""
    table = load(folder)
    assert comparison(table) == (folder / "comparison.md").read_text()
    before = table[table.variant == "before"].set_index("cell_id")
    return before, table[table.variant == "after"].set_index("cell_id").loc[before.index]


def test_the_whole_matrix_comparison_is_what_its_files_and_the_readme_say():
    before, after = compared(MATRIX)
    assert len(before) == 17  # every cell of seed-16gb that runs (liger-and-unsloth is a declared skip)
    assert (before["peak_device"] == after["peak_device"]).all() and (before["status"] == after["status"]).all()
    assert (before["start"] == "fresh").all() and (after["start"] == "warm").sum() == 14
    assert after["bytecode"].all() and not before["bytecode"].any()
    rest_before, rest_after = before["rest"].sum(), after["rest"].sum()
    readme = (REPO / "docs" / "gpu.md").read_text()
    assert f"from {rest_before:.1f} s to\n{rest_after:.1f} s: **{1 - rest_after / rest_before:.0%} less**" in readme
    # the after side is what results/seed-16gb holds
    for cell_id in after.index:
        assert (MATRIX / "after" / f"{cell_id}.json").read_text() == \
            (REPO / "results" / "seed-16gb" / f"{cell_id}.json").read_text()


GC_FREEZE = REPO / "results" / "benchmarks" / "cell-time-gc-freeze"


def test_the_gc_freeze_sitting_is_what_its_files_and_the_readme_say():
    first = GC_FREEZE / "first-start"
    before, after = compared(first)
    assert len(before) == 6
    assert (before["peak_device"] == after["peak_device"]).all() and (before["status"] == after["status"]).all()
    assert (after["start"] == "warm").all() and (before["start"] == "fresh").all()
    rest_before, rest_after = before["rest"].sum(), after["rest"].sum()
    readme = " ".join((REPO / "docs" / "gpu.md").read_text().split())
    cut = 1 - rest_after / rest_before
    assert f"from {rest_before:.1f} s to {rest_after:.1f} s ({cut:.0%} less) on 6 cells" in readme
    # the second start's comparison was written on the device; the after files it read all came back
    second = (GC_FREEZE / "second-start" / "comparison.md").read_text()
    assert "4 of 4 after" in second and "163.8 s before, 83.4 s after, 49% less" in second
    assert "from 163.8 s to 83.4 s (49% less) on 4 more" in readme
    for path in sorted(GC_FREEZE.rglob("after/*.json")):
        process = json.loads(path.read_text())["records"]["process"]
        assert process["start"] == "warm" and process["gc_frozen_objects"] > 0


ONE_SITTING = REPO / "results" / "benchmarks" / "cell-time-one-sitting"


def test_the_one_sitting_comparison_is_what_its_files_and_the_readmes_say():
    before, after = compared(ONE_SITTING)
    assert len(before) == 18  # the whole matrix, its declared skip included
    assert before["peak_device"].equals(after["peak_device"]) and (before["status"] == after["status"]).all()
    assert (before["start"] == "fresh").all() and (after["start"] == "warm").sum() == 17
    cut = 1 - after["rest"].sum() / before["rest"].sum()
    readme = " ".join((REPO / "docs" / "gpu.md").read_text().split())
    smallest = (1 - after["rest"] / before["rest"]).min()
    assert cut >= 0.40 and f"the smallest cut of a cell is {smallest:.0%}," in readme
    assert f"from {before['rest'].sum():.1f} s to {after['rest'].sum():.1f} s: **{cut:.0%} less**" in readme
    runs = before.index[before["status"] != "skipped"]
    cut_run = 1 - after.loc[runs, "rest"].sum() / before.loc[runs, "rest"].sum()
    assert f"({cut_run:.0%} on the 17 cells that run" in readme and len(runs) == 17
    # the 10 cells also measured one stream per GPU: what sharing the GPU did to their cut (read from the
    # comparisons, since two before files of the second start only stand in its comparison.md)
    alone = {**rest_column(GC_FREEZE / "first-start"), **rest_column(GC_FREEZE / "second-start")}
    here = rest_column(ONE_SITTING)
    assert len(alone) == 10

    def cut_of(rest: dict[str, tuple[float, float]]) -> float:
        return 1 - sum(rest[c][1] for c in alone) / sum(rest[c][0] for c in alone)

    assert f"gave {cut_of(alone):.0%} less one stream per GPU and {cut_of(here):.0%} less here" in readme


def rest_column(folder) -> dict[str, tuple[float, float]]:
    """A comparison.md's "the rest s" column: cell name -> (before, after)."""
    lines = (folder / "comparison.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| cell "))
    column = [c.strip() for c in header.split("|")].index("the rest s")
    rows = [[c.strip() for c in line.split("|")] for line in lines[lines.index(header) + 2:] if line.startswith("|")]
    rows = rows[:next((i for i, r in enumerate(rows) if "→" not in r[column]), len(rows))]
    return {r[1]: tuple(float(x) for x in r[column].split("→")) for r in rows}
