"""`vramlab aggregate`, `report`, `compare` and `claims` given tables, folders or results they cannot use:
one line, nothing written, and a report never replaced by one that says less; files written whole.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import cli
from harness.core.atomic_files import write_text_atomic, writer_host
from harness.core.errors import UsageError
from harness.report.reproduce import write_comparison
from harness.results import ResultFileError
from tests.conftest import REPO, copy_repository_files
from tests.refusals import TINY2, F, files_in, full_disk, matrix_at, one_line, refused, said_once, snakemake, vramlab

# 9, 10, 25: damaged report tables are one line, and the report is left as it was
DAMAGE = [
    ("cells.csv", lambda t: t.replace(",ok,", ",banana,", 1), "status 'banana' is none vramlab writes"),
    ("cells.csv", lambda t: t + "9,abc,short\n", "has no status"),
    ("cells.csv", lambda t: "", "cells.csv: empty"),
    ("cells.csv", lambda t: t.replace("order,cell_id,name,status,", "order,cell_id,name,state,", 1),
     "no column status"),
    ("design.json", lambda t: "{bad", "design.json: not valid JSON"),
    ("design.json", lambda t: "[1]", "design.json: not a design vramlab wrote"),
    ("design.json", lambda t: json.dumps({**json.loads(t), "baseline": "nosuch"}), "names the cell 'nosuch'"),
    ("steps.csv", lambda t: "", "steps.csv: empty"),
    ("steps.csv", lambda t: "a,b\n1,2\n", "steps.csv: no column cell_id"),
    ("estimate.csv", lambda t: "", "estimate.csv: empty"),
    ("environment.csv", None, "environment.csv does not exist"),
]


def _copies(tmp_path: Path, *folders: str) -> Path:
    """Copies of the committed folders (reports/, results/) to point a command at; it runs from this worktree."""

    for folder in folders:
        copy_repository_files(REPO / folder, tmp_path / folder)
    return tmp_path


@pytest.mark.slow
def test_aggregate_names_a_bad_result_file_instead_of_a_traceback(tmp_path):
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    victim = sorted((tmp_path / "results" / "smoke").glob("*.json"))[0]
    data = json.loads(victim.read_text())
    data["metrics"]["tokens_per_second"] = "fast"
    victim.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "harness", "aggregate", "smoke", "--results-dir",
                           str(tmp_path / "results"), "--reports-dir", str(tmp_path / "reports")], cwd=REPO,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 2
    assert str(victim) in done.stderr and "metrics.tokens_per_second" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "reports").exists()


# 2: an interrupted write leaves the previous file, never a cut one
@pytest.mark.slow
def test_an_interrupted_chart_leaves_the_previous_file_whole(tmp_path):
    import matplotlib.pyplot as plt

    from harness.report.charts.style import save

    (tmp_path / "c.png").write_bytes(b"the committed chart")
    fig, _ = plt.subplots()

    def cut_short(path, **_):
        Path(path).write_bytes(b"half a ch")
        raise KeyboardInterrupt

    fig.savefig = cut_short
    with pytest.raises(KeyboardInterrupt):
        save(fig, tmp_path, "c", ("png",))
    assert files_in(tmp_path) == {"c.png": b"the committed chart"}


@pytest.mark.slow
def test_tables_and_text_are_written_whole_or_not_at_all(tmp_path):
    from harness.core.atomic_files import write_text_atomic

    target = tmp_path / "report.md"
    target.write_text("before")
    with pytest.raises(TypeError):
        write_text_atomic(target, None)  # fails half-way
    assert files_in(tmp_path) == {"report.md": b"before"}


# 4: a cell renamed in its matrix after it ran is reported under its new name
@pytest.mark.slow
def test_a_cell_renamed_after_it_ran_is_reported_under_its_new_name(tmp_path):
    (tmp_path / "ablations").mkdir()
    text = (REPO / "ablations" / "loss-path-16gb.yaml").read_text()
    first = text.split("name: ", 1)[1].split(",")[0].split("}")[0].strip()
    (tmp_path / "ablations" / "loss-path-16gb.yaml").write_text(text.replace(f"name: {first}", "name: renamed", 1))
    copy_repository_files(REPO / "results" / "loss-path-16gb", tmp_path / "results" / "loss-path-16gb")
    assert vramlab("aggregate", "loss-path-16gb", cwd=tmp_path).returncode == 0
    import pandas as pd

    names = list(pd.read_csv(tmp_path / "reports" / "loss-path-16gb" / "cells.csv")["name"])
    assert "renamed" in names and first not in names
    done = vramlab("report", "loss-path-16gb", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "damage", "expected"), DAMAGE)
def test_a_damaged_report_table_is_one_line_and_nothing_is_written(tmp_path, name, damage, expected):
    copy_repository_files(REPO / "reports" / "smoke", tmp_path / "smoke")
    path = tmp_path / "smoke" / name
    if damage is None:
        path.unlink()
    else:
        path.write_text(damage(path.read_text()))
    before = files_in(tmp_path)
    one_line(vramlab("report", "smoke", "--reports-dir", str(tmp_path)), expected)
    assert files_in(tmp_path) == before


@pytest.mark.slow
def test_text_in_a_number_column_is_named(tmp_path):
    copy_repository_files(REPO / "reports" / "smoke", tmp_path / "smoke")
    import pandas as pd

    cells = pd.read_csv(tmp_path / "smoke" / "cells.csv", dtype=str)
    cells.loc[0, "peak_device_bytes"] = "lots"
    cells.to_csv(tmp_path / "smoke" / "cells.csv", index=False)
    one_line(vramlab("report", "smoke", "--reports-dir", str(tmp_path)),
             "line 2, column peak_device_bytes: 'lots' is not a number")


# R04: aggregate holds the results folder's owner (.matrix) as Snakemake and run-cell do; W01: a damaged owner file
# and W04: a file where the results folder goes are one line each
def test_aggregate_refuses_another_matrix_files_results_folder(tmp_path):
    from harness.report.aggregate import aggregate
    from harness.spec.matrix import MatrixError

    (tmp_path / "other").mkdir()
    path = matrix_at(tmp_path / "other", f"fixed: {{{F}}}\naxes: {{adapter: [rslora, lora]}}\n", "base")
    (tmp_path / "results" / "base").mkdir(parents=True)
    (tmp_path / "results" / "base" / ".matrix").write_text("/elsewhere/base.yaml\n")
    with pytest.raises(MatrixError, match=r"holds the results of another matrix file \(/elsewhere/base.yaml\)"):
        aggregate(path, tmp_path / "results", tmp_path / "reports", partial=True)
    assert not (tmp_path / "reports").exists()


# G06: compare reads a reproduction only as the result of the cell its file is named by
def test_compare_refuses_another_cells_result_as_a_reproduction(tmp_path):
    import shutil

    from harness.report.reproduce import write_comparison

    results = tmp_path / "results"
    copy_repository_files(REPO / "results" / "smoke", results / "smoke")
    (results / "smoke" / "reproductions" / "vm").mkdir(parents=True)
    shutil.copy(results / "smoke" / "c5338522d7ed.json", results / "smoke" / "reproductions" / "vm" /
                "d9946bcf27e9.json")  # the result of the cell at context 256 as the one at 128
    with pytest.raises(ResultFileError, match=r"would be named c5338522d7ed\.json"):
        write_comparison("smoke", results, tmp_path / "reports", "vm")
    assert not (tmp_path / "reports").exists()


# t13-059: reproductions/vm a link to the published results/smoke (or into it, or to the folder above): compare read
# the published results as the reproduction and advised moving one of them (through the link) out of results/smoke/
@pytest.mark.parametrize("link", [pytest.param("../../smoke", id="t13-059"), pytest.param("..", id="reproductions"),
                                  pytest.param("../../../results", id="results")])
def test_compare_refuses_a_reproductions_folder_that_resolves_to_the_published_results(tmp_path, monkeypatch, capsys,
                                                                                      link):
    results = tmp_path / "results"
    copy_repository_files(REPO / "results" / "smoke", results / "smoke")
    (results / "smoke" / "reproductions").mkdir()
    (results / "smoke" / "reproductions" / "vm").symlink_to(link)
    before = files_in(results)
    monkeypatch.chdir(REPO)
    err = refused(["compare", "smoke", "--machine", "vm", "--results-dir", str(results), "--reports-dir",
                   str(tmp_path / "reports")], capsys, "results/smoke/reproductions/vm is a link that resolves to")
    assert "so they would be compared with themselves" in err and "move it" not in err, err
    assert files_in(results) == before and not (tmp_path / "reports").exists()


# C36, C45: claims from a results folder that is missing, or holds none of the claims' results, replaces nothing
@pytest.mark.parametrize("given", ["nonexistent", "results/smoke"])
def test_claims_from_a_folder_without_their_results_is_refused(tmp_path, given):

    from harness.report.claims.build import write

    copy_repository_files(REPO / "reports" / "claims", tmp_path / "reports" / "claims")
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    before = files_in(tmp_path / "reports")
    with pytest.raises(UsageError, match="does not exist" if given == "nonexistent" else "holds no result"):
        write(tmp_path / given, tmp_path / "reports")
    assert files_in(tmp_path / "reports") == before


# the class: no report is replaced by one built from fewer measured results, here claims from half the results
# and a partial aggregate of a folder that lost a result
def test_a_report_is_not_replaced_by_one_that_measures_less(tmp_path):
    import shutil

    from harness.report.aggregate import aggregate
    from harness.report.claims.build import write

    copy_repository_files(REPO / "reports" / "claims", tmp_path / "reports" / "claims")
    for matrix in ("ceiling-16gb", "seed-16gb"):
        copy_repository_files(REPO / "results" / matrix, tmp_path / "results" / matrix)
    shutil.rmtree(tmp_path / "results" / "ceiling-16gb")  # the seed's claim is read from a ceiling search
    before = files_in(tmp_path / "reports")
    with pytest.raises(UsageError, match=r"readings measured that .* holds no result for"):
        write(tmp_path / "results", tmp_path / "reports")
    assert files_in(tmp_path / "reports") == before

    copy_repository_files(REPO / "reports" / "smoke", tmp_path / "reports" / "smoke")
    copy_repository_files(REPO / "results" / "smoke", tmp_path / "results" / "smoke")
    next((tmp_path / "results" / "smoke").glob("*.json")).unlink()
    before = files_in(tmp_path / "reports")
    with pytest.raises(UsageError, match="1 cells measured that"):
        aggregate("smoke", tmp_path / "results", tmp_path / "reports", partial=True)
    assert files_in(tmp_path / "reports") == before


# Z01: report --all rebuilds every report it can, says in one line which it cannot, and exits non-zero
@pytest.mark.slow
def test_report_all_is_not_stopped_by_one_report(tmp_path):
    # a report of each kind (a matrix's, a ceiling, the calibration, the claims), not every one: every report is
    # rebuilt and compared by tests/test_readme.py, and here that would be 4 minutes more on 2 cores
    copy = _copies(tmp_path, "results")
    for kind in ("smoke", "ceiling-16gb", "estimate", "claims"):
        copy_repository_files(REPO / "reports" / kind, copy / "reports" / kind)
    (copy / "reports" / "lost").mkdir()  # named before smoke, so that smoke's rebuild shows the rebuild went on
    (copy / "reports" / "lost" / "cells.csv").write_text("order,cell_id,name,status\n")
    done = vramlab("report", "--all", "--results-dir", str(copy / "results"), "--reports-dir", str(copy / "reports"),
                   "--out", str(tmp_path / "out"), timeout=1200)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vramlab: {copy / 'reports' / 'lost'}/: no matrix file"), lines
    rebuilt, committed = tmp_path / "out" / "smoke" / "report.md", REPO / "reports" / "smoke" / "report.md"
    assert rebuilt.read_text() == committed.read_text()
    assert (tmp_path / "out" / "claims" / "claims.md").is_file()


# C19: report NAME --out (or --results-dir) without --all is refused, not ignored over the committed folder
@pytest.mark.slow
def test_report_options_of_all_are_refused_without_it(tmp_path):
    copy = _copies(tmp_path, "reports")
    before = files_in(copy / "reports")
    one_line(vramlab("report", "smoke", "--reports-dir", str(copy / "reports"), "--out", str(tmp_path / "rep")),
             "--out go with --all")
    assert files_in(copy / "reports") == before and not (tmp_path / "rep").exists()


# D-reportall-out-full: the same for a report rebuilt into a folder on a full disk: no empty folder stays
def test_report_all_on_a_full_disk_names_the_file_and_leaves_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(os, "fsync", full_disk)
    out = tmp_path / "rep"
    code = cli.main(["report", "--all", "--out", str(out), "--results-dir", str(REPO / "results"),
                     "--reports-dir", str(REPO / "reports")])
    said = said_once(capsys)
    assert code == 2 and re.search(rf"vramlab: {out}/\S+: No space left on device; free some space", said), said
    assert not out.exists()


# D-report-truncated-csv, D-report-csv-is-dir: a damaged table, or a folder in its place, is said as what it is
@pytest.mark.parametrize(("damage", "expected"), [
    (lambda p: p.write_bytes(p.read_bytes()[:500]), "damaged, not a table vramlab wrote (it ends inside a line"),
    (lambda p: p.write_bytes(p.read_bytes().split(b"\n")[0] + b"\n"), "damaged, not a table vramlab wrote (a header"),
    (lambda p: (p.unlink(), p.mkdir()), "cells.csv is a folder, in the place of a table vramlab writes; move it away"),
], ids=["cut-in-its-header", "a-header-only", "a-folder"])
def test_report_on_a_damaged_table_says_what_is_wrong_and_writes_nothing(tmp_path, capsys, damage, expected):
    reports = tmp_path / "reports"
    copy_repository_files(REPO / "reports" / "smoke", reports / "smoke")
    damage(reports / "smoke" / "cells.csv")
    before = {p: p.read_bytes() for p in (reports / "smoke").iterdir() if p.is_file()}
    assert cli.main(["report", "smoke", "--reports-dir", str(reports)]) == 2
    assert expected in said_once(capsys)
    assert {p: p.read_bytes() for p in (reports / "smoke").iterdir() if p.is_file()} == before


def test_aggregate_names_a_folder_in_the_place_of_its_table(tmp_path, capsys):
    (tmp_path / "reports" / "smoke" / "cells.csv").mkdir(parents=True)
    code = cli.main(["aggregate", "smoke", "--results-dir", str(REPO / "results"), "--reports-dir",
                     str(tmp_path / "reports")])
    said = said_once(capsys)
    assert code == 2 and f"{tmp_path}/reports/smoke/cells.csv: a folder is in the place of this file" in said, said
    assert [p.name for p in (tmp_path / "reports" / "smoke").iterdir()] == ["cells.csv"]


# t17-056: as root, a reports folder in /proc (marked read-only, yet access(2) lets root write) was told in two lines:
# that root writes it all the same, then a bare "No such file or directory"
@pytest.mark.skipif(os.geteuid() != 0 or not os.path.ismount("/proc"), reason="root, where the kernel refuses mkdir")
def test_aggregate_into_a_folder_the_kernel_will_not_make_names_it(capsys):
    refused(["aggregate", "smoke", "--results-dir", str(REPO / "results"), "--reports-dir", "/proc/vramlab-x"],
            capsys, "--reports-dir /proc/vramlab-x: the folder /proc/vramlab-x/smoke cannot be made in /proc (No "
            "such file or directory); give a folder that can be")


# I-kill9-report-inplace: a temporary file whose writer was killed is removed by the next write into its folder;
# one of a live writer (this host's, or another host's on a shared folder) is never touched, and git ignores them
def test_a_killed_writers_temporary_file_goes_with_the_next_write(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no process has now
    host = writer_host()
    stale = tmp_path / f".deltas.{host}-{gone.pid}-f__aph_a.tmp.pdf"
    live = tmp_path / f".deltas.{host}-{os.getpid()}-adgpfgxf.tmp.pdf"
    elsewhere = tmp_path / f".deltas.otherhost-{gone.pid}-adgpfgxf.tmp.pdf"
    for path in (stale, live, elsewhere):
        path.write_bytes(b"half a chart")
    write_text_atomic(tmp_path / "report.md", "# a report\n")
    assert not stale.exists() and live.exists() and elsewhere.exists()
    names = [f"reports/smoke/{stale.name}", f"results/smoke/{live.name}"]
    ignored = subprocess.run(["git", "check-ignore", *names], cwd=REPO, capture_output=True, text=True)
    assert ignored.stdout.split() == names


def test_the_next_report_removes_what_a_killed_one_left(tmp_path, capsys):
    reports = tmp_path / "reports"
    copy_repository_files(REPO / "reports" / "smoke", reports / "smoke")
    gone = subprocess.Popen(["true"])
    gone.wait()
    host = writer_host()
    stale = reports / "smoke" / f".deltas-column.{host}-{gone.pid}-adgpfgxf.tmp.pdf"
    stale.write_bytes(b"")
    assert cli.main(["report", "smoke", "--reports-dir", str(reports)]) == 0
    assert not stale.exists()
    committed = copy_repository_files(REPO / "reports" / "smoke", tmp_path / "committed")
    assert files_in(reports / "smoke") == files_in(committed)


# H10c: a second matrix file of the same name was told its result files are missing before whose folder it is
def test_aggregate_says_whose_folder_it_is_before_what_is_missing(tmp_path, capsys):
    results = tmp_path / "results"
    (results / "m").mkdir(parents=True)
    (results / "m" / ".matrix").write_text("/elsewhere/m.yaml\n")
    refused(["aggregate", matrix_at(tmp_path, TINY2 % ("", "")), "--results-dir", str(results), "--reports-dir",
              str(tmp_path / "reports")], capsys, "holds the results of another matrix file (/elsewhere/m.yaml)")


# R25: report of a name that is no matrix advised to aggregate it
def test_report_of_no_matrix_says_so(tmp_path, capsys):
    refused(["report", "smok", "--reports-dir", str(tmp_path)], capsys,
            "report: no matrix named 'smok'; did you mean 'smoke'?")


# C11, C12: compare over a reproduction cut short said "agrees ... 1 of 1" and ended the resume
def test_compare_refuses_a_reproduction_that_has_not_reached_every_published_cell(tmp_path):
    results = tmp_path / "results"
    copy_repository_files(REPO / "results" / "smoke", results / "smoke")
    (results / "smoke" / "reproductions" / "vm").mkdir(parents=True)
    copy = results / "smoke" / "reproductions" / "vm" / "d9946bcf27e9.json"
    shutil.copy(results / "smoke" / "d9946bcf27e9.json", copy)
    # R65 (round 8): the published file itself is no reproduction
    with pytest.raises(Exception, match=r"is the published result itself"):
        write_comparison("smoke", results, tmp_path / "reports", "vm")
    data = json.loads(copy.read_text())
    data["metrics"]["tokens_per_second"] *= 1.01
    copy.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"7 of the 8 published cells of smoke have no reproduction on vm yet"):
        write_comparison("smoke", results, tmp_path / "reports", "vm")
    assert not (tmp_path / "reports").exists()


# R70 (round 8): report over another matrix's tables titled them with this matrix's name
def test_report_refuses_tables_of_another_matrix(tmp_path, capsys):
    copy_repository_files(REPO / "reports" / "seed-16gb", tmp_path / "smoke")
    before = {p.name: p.read_bytes() for p in (tmp_path / "smoke").iterdir()}
    refused(["report", "smoke", "--reports-dir", str(tmp_path)], capsys, "are no cells of the matrix smoke")
    assert {p.name: p.read_bytes() for p in (tmp_path / "smoke").iterdir()} == before


def _edited(table: str, column: str, edit) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        path = folder / table
        rows = list(csv.reader(path.open(newline="")))
        at = rows[0].index(column)
        rows[1][at] = edit(rows[1][at])
        with path.open("w", newline="") as out:
            csv.writer(out).writerows(rows)
    return change


def _published(tmp_path: Path, matrix: str) -> tuple[Path, Path]:
    """A checkout's published results and reports of `matrix`, copied: (results folder, reports folder)."""
    for folder in ("results", "reports"):
        copy_repository_files(REPO / folder / matrix, tmp_path / folder / matrix)
    return tmp_path / "results", tmp_path / "reports"


# t13-098, t13-116, t13-095: a committed table edited by hand (a number, a status, a score) would be published as
# measured by `report`: refused in one line naming the table, line and column, and not one report file changes
@pytest.mark.slow
@pytest.mark.parametrize(("matrix", "table", "column", "edit", "said"), [
    ("smoke", "cells.csv", "tokens_per_second", lambda v: str(float(v) * 10), "column tokens_per_second"),
    ("smoke", "cells.csv", "status", lambda v: "oom", "column status: oom there, ok from the results"),
    ("quality-smollm2", "quality.csv", "value", lambda v: "7.5", "column value: 7.5 there"),
], ids=["t13-098-number", "t13-116-status", "t13-095-score"])
def test_a_table_edited_by_hand_is_never_published_by_report(tmp_path, matrix, table, column, edit, said):
    results, reports = _published(tmp_path, matrix)
    _edited(table, column, edit)(reports / matrix)
    before = files_in(tmp_path)
    done = vramlab("report", matrix, "--reports-dir", str(reports), "--results-dir", str(results))
    one_line(done, said)
    assert f"{reports / matrix / table} is not what the result files" in done.stderr
    assert files_in(tmp_path) == before


# the check is made where the tables come from: unchanged tables are reported as before, and tables made from the
# results again (aggregate) agree with them
@pytest.mark.slow
def test_report_sets_tables_that_agree_with_their_results(tmp_path):
    results, reports = _published(tmp_path, "smoke")
    before = files_in(reports)
    done = vramlab("report", "smoke", "--reports-dir", str(reports), "--results-dir", str(results))
    assert done.returncode == 0, done.stderr[-2000:]
    assert files_in(reports) == before


# t13-099: the documented rebuild (`snakemake -R report`) over a hand-edited table fails its job, and Snakemake
# deletes none of the report's committed files
@pytest.mark.slow
def test_snakemake_rebuild_of_a_report_over_an_edited_table_keeps_every_file(tmp_path):
    _, reports = _published(tmp_path, "smoke")
    _edited("cells.csv", "tokens_per_second", lambda v: str(float(v) * 10))(reports / "smoke")
    before = files_in(reports)
    done = snakemake(tmp_path, "--cores", "1", "-R", "report", "--allowed-rules", "report", "all",
                     "--config", "matrix=smoke")
    assert done.returncode != 0
    assert "cells.csv is not what the result files" in done.stdout + done.stderr
    assert files_in(reports) == before


# the command line's twin of t13-047: `aggregate --partial` given the reports folder for the results would make
# every cell pending, which reads as a matrix not run; refused naming the folder, nothing written
def test_aggregate_given_the_reports_folder_for_its_results_is_refused(tmp_path):
    done = vramlab("aggregate", "smoke", "--partial", "--results-dir", "reports", "--reports-dir", str(tmp_path / "r"))
    one_line(done, "--results-dir 'reports': reports/smoke holds the reports of 'smoke'")
    assert not (tmp_path / "r").exists()


# t14-008, t14-011: a --results-dir that is not there is one line naming it, before any table is checked or rebuilt
# (report NAME passed silently with nothing checked; report --all said "not rebuilt" once for each matrix)
@pytest.mark.parametrize("command", [["smoke"], ["--all", "--out"]], ids=["t14-008", "t14-011"])
def test_report_refuses_a_results_folder_that_is_not_there(tmp_path, capsys, command):
    reports = copy_repository_files(REPO / "reports" / "smoke", tmp_path / "reports" / "smoke").parent
    before = files_in(reports)
    argv = ["report", *command] + ([str(tmp_path / "out")] if "--out" in command else [])
    missing = str(tmp_path / "nonexistent" / "res")
    refused([*argv, "--results-dir", missing, "--reports-dir", str(reports)], capsys,
            f"report: --results-dir {missing} does not exist")
    assert files_in(reports) == before and not (tmp_path / "out").exists()


# t15-054: compare with a --results-dir that is not there said it held no reproduction and advised reproduce=true;
# it says the folder does not exist, as claims does (t15-055)
@pytest.mark.parametrize(("command", "holding"), [(["compare", "smoke"], "smoke and its reproductions"),
                                                  (["claims"], "the claims' cells")], ids=["t15-054", "t15-055"])
def test_compare_and_claims_refuse_a_results_folder_that_is_not_there(tmp_path, capsys, command, holding):
    missing = str(tmp_path / "nonexistent")
    refused([*command, "--results-dir", missing, "--reports-dir", str(tmp_path / "reports")], capsys,
            f"vramlab: --results-dir {missing} does not exist; give the results folder of {holding}\n")
    assert not (tmp_path / "reports").exists()


# t18-041: compare of a matrix that has no published results said no reproduction held "a result of a published cell"
# and advised reproduce=true, which has nothing to reproduce; it says there is nothing published to compare with
def test_compare_of_a_matrix_without_published_results_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    refused(["compare", "quality-smoke", "--reports-dir", str(tmp_path)], capsys,
            "vramlab: quality-smoke has no published results in results/quality-smoke/, so no reproduction of it can "
            "be compared; its own run (snakemake --cores 1 --config matrix=quality-smoke) makes results to report")
    assert list(tmp_path.iterdir()) == []


# A report over a copy of its reports with a table the aggregate writes deleted rebuilt report.md and tables.tex
# without that table's part, exit 0: quality.csv of a matrix that evaluates (t18-064), estimate.csv (t20-050); the
# missing table is said and nothing is written
@pytest.mark.parametrize(("matrix", "table", "said"), [
    pytest.param("quality-smollm2", "quality.csv", "does not exist, though quality-smollm2 evaluates its cells",
                 id="t18-064"),
    pytest.param("smoke", "estimate.csv", "does not exist; run `vramlab aggregate smoke` first", id="t20-050"),
])
def test_a_report_without_a_table_the_aggregate_writes_is_refused(tmp_path, capsys, monkeypatch, matrix, table, said):
    monkeypatch.chdir(REPO)
    folder = copy_repository_files(REPO / "reports" / matrix, tmp_path / matrix)
    (folder / table).unlink()
    before = files_in(folder)
    refused(["report", matrix, "--reports-dir", str(tmp_path)], capsys, f"vramlab: {folder / table} {said}")
    assert files_in(folder) == before


# t19-048: report --all with --reports-dir an empty folder rebuilt nothing and said nothing, exit 0, as a rebuild
# of every report would end; a folder with no report in it is said before anything is written
def test_report_all_of_a_reports_folder_without_reports_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    (tmp_path / "empty").mkdir()
    refused(["report", "--all", "--reports-dir", str(tmp_path / "empty"), "--out", str(tmp_path / "out")], capsys,
            f"--reports-dir {tmp_path / 'empty'} holds no report to rebuild")
    assert not (tmp_path / "out").exists() and list((tmp_path / "empty").iterdir()) == []


# t20-049: report --all over a reports folder with a folder named after no matrix said "reports/notes/: ... not
# rebuilt", naming the checkout's folder, not the one given
def test_report_all_names_the_reports_folder_it_was_given(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    reports = copy_repository_files(REPO / "reports" / "smoke", tmp_path / "rep" / "smoke").parent
    (reports / "notes").mkdir()
    shutil.copy(reports / "smoke" / "cells.csv", reports / "notes")
    assert cli.main(["report", "--all", "--reports-dir", str(reports), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vramlab: {reports}/notes/: no matrix file") and "; not rebuilt" in err, err


# t21-047: aggregate over a results copy holding a result also under the name x.json left it out without a word
def test_aggregate_says_a_json_file_named_after_no_cell(tmp_path, caplog):
    results = copy_repository_files(REPO / "results" / "smoke", tmp_path / "r" / "smoke").parent
    shutil.copy(results / "smoke" / "4c55591d5771.json", results / "smoke" / "x.json")
    assert cli.main(["aggregate", "smoke", "--results-dir", str(results), "--reports-dir", str(tmp_path / "p")]) == 0
    said = [r.getMessage() for r in caplog.records if "x.json" in r.getMessage()]
    assert said == [f"{results}/smoke/x.json is named after no cell (a result is <cell id>.json), so no table reads "
                    "it; move it out of the folder (`vramlab check` names what it holds)"], caplog.text


# t16-046 (the two roots swapped: aggregate wrote cells.csv, design.json, ... into the published results/smoke/) and
# t16-052 (claims wrote results/claims-out/claims/): a reports folder or a rebuilt report anywhere in a checkout's
# published results/ is refused by every command that takes one, as the Snakefile refuses it (t15-028)
@pytest.mark.parametrize(("argv", "given"), [
    pytest.param(["aggregate", "smoke"], "--reports-dir results", id="t16-046"),
    pytest.param(["claims"], "--reports-dir results/claims-out", id="t16-052"),
    pytest.param(["report", "smoke"], "--reports-dir results", id="report"),
    pytest.param(["compare", "smoke"], "--reports-dir results/mine", id="compare"),
    pytest.param(["ceiling", "smoke"], "--reports-dir results", id="ceiling"),
    pytest.param(["card-check", "--dry-run"], "--reports-dir results", id="card-check"),
    # from outside the checkout, where `--out results/...` is no longer inside --results-dir
    pytest.param(["report", "--all", "--results-dir", str(REPO / "results")], "--out {checkout}/results/rebuilt",
                 id="report-all-out"),
])
def test_reports_inside_the_checkouts_published_results_are_refused(tmp_path, capsys, monkeypatch, argv, given):
    checkout = tmp_path.resolve() / "checkout"
    (checkout / "ablations").mkdir(parents=True)
    copy_repository_files(REPO / "results" / "smoke", checkout / "results" / "smoke")
    monkeypatch.chdir(checkout if "{checkout}" not in given else tmp_path)
    before = files_in(tmp_path)
    flag, value = given.format(checkout=checkout).split()
    refused([*argv, flag, value] + ([] if "--results-dir" in argv else ["--results-dir", str(checkout / "results")]),
            capsys, f"vramlab: {flag} {value}: {checkout}/results/ is the checkout's folder of published results, "
                    "so the reports would be written among them; give ")
    assert files_in(tmp_path) == before and sorted(p.name for p in checkout.iterdir()) == ["ablations", "results"]


def _checkout_with(tmp_path: Path, *folders: str) -> Path:
    """A checkout as the published folders are told by (ablations/ beside reports/), holding copies of the committed
    `folders`: a command that wrote through a link would change the copy, never the real reports/."""
    checkout = tmp_path / "checkout"
    (checkout / "ablations").mkdir(parents=True)
    for folder in folders:
        copy_repository_files(REPO / folder, checkout / folder)
    return checkout


# a matrix's folder (or claims/) under --reports-dir that is a link to a published reports folder, another matrix's or
# reached from outside the checkout: aggregate, report and claims wrote their files over the published ones through it
@pytest.mark.parametrize(("argv", "link", "to", "inside"), [
    pytest.param(["aggregate", "smoke", "--results-dir", str(REPO / "results")], "smoke", "seed-16gb", False,
                 id="aggregate-into-another-matrix"),
    pytest.param(["aggregate", "smoke", "--results-dir", str(REPO / "results")], "smoke", "smoke", False,
                 id="aggregate-into-its-own-from-outside"),
    pytest.param(["aggregate", "smoke", "--results-dir", str(REPO / "results")], "smoke", "seed-16gb", True,
                 id="aggregate-in-the-checkout"),
    pytest.param(["report", "smoke"], "smoke", "seed-16gb", False, id="report"),
    pytest.param(["claims", "--results-dir", str(REPO / "results")], "claims", "smoke", False, id="claims"),
])
def test_a_reports_folder_linked_to_published_reports_is_refused(tmp_path, capsys, argv, link, to, inside):
    checkout = _checkout_with(tmp_path, f"reports/{to}")
    given = checkout / "reports" if inside else tmp_path / "given"
    given.mkdir(exist_ok=True)
    (given / link).symlink_to(checkout / "reports" / to)
    before = files_in(checkout)
    refused([*argv, "--reports-dir", str(given)], capsys,
            f"{given / link} is a link to the published {checkout / 'reports' / to}/, whose files the reports written "
            "there would replace; give a folder of its own")
    assert files_in(checkout) == before


# a matrix's folder under --reports-dir that is a link to nowhere: told as a bare "No such file or directory"
def test_aggregate_names_a_reports_folder_that_is_a_link_to_nowhere(tmp_path, capsys):
    (tmp_path / "smoke").symlink_to(tmp_path / "nowhere")
    refused(["aggregate", "smoke", "--results-dir", str(REPO / "results"), "--reports-dir", str(tmp_path)], capsys,
            f"vramlab: {tmp_path}/smoke is a link to {tmp_path}/nowhere, which does not exist; give a folder of its "
            "own, or make the folder the link names")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["smoke"]


# what stays allowed: the checkout's own folder of the matrix, and a published folder of the same name only read
def test_a_matrix_folder_is_judged_as_its_links_resolve(tmp_path):
    from harness.core.path_problems import linked_folder_problem

    checkout = _checkout_with(tmp_path, "reports/smoke", "reports/seed-16gb")
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "smoke").symlink_to(checkout / "reports" / "smoke")
    assert linked_folder_problem(checkout / "reports", "smoke", "reports") is None
    assert linked_folder_problem(tmp_path / "given", "smoke", "results", writes=False) is None
    (tmp_path / "given" / "seed-16gb").symlink_to(checkout / "reports" / "smoke")  # read as another matrix's
    assert "whose files would be read as the results of seed-16gb" in str(
        linked_folder_problem(tmp_path / "given", "seed-16gb", "results", writes=False))
