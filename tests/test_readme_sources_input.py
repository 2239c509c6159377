"""What `vramlab readme` makes its blocks from: the committed matrix files, results and reports. An uncommitted edit
or deletion of one of them is refused in one line (exit 2) naming the file and `git checkout HEAD -- <path>`, by
`readme` and `readme --check` alike, and README.md is left as it was, rather than rewritten from the uncommitted
state (it once counted a deleted result out of the published table)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.core.errors import UsageError
from harness.report import readme
from tests.checkout_copy import copy_checkout, git, status, vramlab
from tests.refusals import one_line


def _published(tmp_path: Path) -> Path:
    """A checkout of one matrix file, one result and one report, committed."""
    for name, text in (("ablations/m.yaml", "fixed: {}\n"), ("results/m/abc.json", "{}\n"),
                       ("reports/m/cells.csv", "cell_id\n"), ("results/benchmarks/b/walls.tsv", "1\n")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "published", cwd=tmp_path)
    return tmp_path


# an uncommitted edit of a tracked matrix file, a deleted result, a report replaced by a folder, a hand-edited report
# (t12-046: a peak edited in reports/seed-16gb/cells.csv was published into the README's headline): each named
@pytest.mark.parametrize(("change", "path", "said"), [
    (lambda p: p.write_text("fixed: {steps: 3}\n"), "ablations/m.yaml", "(edited)"),
    (lambda p: p.unlink(), "results/m/abc.json", "(deleted)"),
    (lambda p: (p.unlink(), p.mkdir()), "reports/m/cells.csv", "(deleted)"),
    (lambda p: p.write_text("cell_id\nabc\n"), "reports/m/cells.csv", "(edited)"),
], ids=["matrix-edited", "result-deleted", "report-made-a-folder", "report-edited"])
def test_readme_sources_that_differ_from_the_commit_are_refused(tmp_path, monkeypatch, change, path, said):
    root = _published(tmp_path)
    monkeypatch.chdir(root)  # paths are named as typed in the checkout's folder, where `vramlab readme` runs
    readme.check_sources_committed(root)  # as committed: nothing to say
    change(root / path)
    with pytest.raises(UsageError) as refused:
        readme.check_sources_committed(root)
    assert f"readme: {path} differs from the commit {said}" in str(refused.value)
    assert f"`git checkout HEAD -- {path}`, or commit it first" in str(refused.value)


# what the README does not show (a benchmark's own record) and files git does not track are no reason to refuse
def test_readme_sources_leave_benchmarks_and_untracked_files_alone(tmp_path):
    root = _published(tmp_path)
    (root / "results/benchmarks/b/walls.tsv").write_text("2\n")
    (root / "results/m/new.json").write_text("{}\n")
    readme.check_sources_committed(root)


# the whole command on a copy of the checkout: a deleted published result, README.md and the rest unchanged
@pytest.mark.slow
@pytest.mark.parametrize("check", [False, True], ids=["rewrite", "check"])
def test_readme_refuses_a_deleted_published_result_and_leaves_the_readme(tmp_path, check):
    clone = copy_checkout(tmp_path / "clone")
    result = next(p for p in sorted((clone / "results" / "smoke").glob("*.json")))
    name = result.relative_to(clone).as_posix()
    result.unlink()
    done = vramlab(clone, "readme", *(["--check"] if check else []))
    one_line(done, f"readme: {name} differs from the commit (deleted)")
    assert f"git checkout HEAD -- {name}" in done.stderr
    assert status(clone) == f" D {name}\n"
    shutil.rmtree(clone)
