"""The README's generated-block markers as `vramlab readme` reads them: a block without its end or its start, a
block twice, a block name vramlab does not make, or a file that is not UTF-8 is refused in one line (exit 2) that
names the block and the line, and the file is left as it was, rather than rewritten around a marker it skipped. A
file with Windows line ends is read and rewritten with them."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from harness.report import readme
from harness.spec.matrix import shipped_matrices
from tests.conftest import REPO
from tests.refusals import refused

README = (REPO / "README.md").read_text()
CLAIMS = re.search(r"<!-- generated: claims -->\n.*?<!-- end generated: claims -->\n", README, re.DOTALL).group(0)

BROKEN = [
    pytest.param(README.replace("<!-- end generated: headline -->", ""),
                 "the block 'headline' (line 55) has no end marker before the next block starts", id="t11-061"),
    pytest.param(README + CLAIMS, "the block 'claims' appears twice", id="t11-062"),
    pytest.param(README.replace("<!-- generated: claims -->\n", ""),
                 "ends a block 'claims' that no <!-- generated: claims --> opens", id="t11-174"),
    pytest.param(README + "\n<!-- generated: nosuch -->\nx\n<!-- end generated: nosuch -->\n",
                 "starts a block 'nosuch' vramlab does not make (the blocks are headline, ceiling", id="t11-176"),
    pytest.param(README.replace("<!-- end generated: reproduction -->", ""), "has no end marker; add <!-- end "
                 "generated: reproduction --> after its last line", id="last-block-open"),
    # t20-054: markers written GENERATED: were not read, so --check left the block out and said the others agreed
    pytest.param(README.replace("<!-- generated: headline -->", "<!-- GENERATED: headline -->"),
                 "holds '<!-- GENERATED: headline -->', a marker in another case", id="t20-054"),
]


@pytest.mark.parametrize(("text", "said"), BROKEN)
@pytest.mark.parametrize("check", [False, True], ids=["rewrite", "check"])  # t11-175: --check names it too
def test_readme_refuses_markers_that_do_not_pair_into_known_blocks(tmp_path, capsys, text, said, check):
    path = tmp_path / "R.md"
    path.write_text(text)
    refused(["readme", "--file", str(path), *(["--check"] if check else [])], capsys, said)
    assert path.read_text() == text


def test_readme_refuses_a_file_that_is_not_utf8_in_one_line(tmp_path, capsys):  # t11-067
    path = tmp_path / "R.md"
    data = README.encode() + b"\n\xe9t\xe9\n"
    path.write_bytes(data)
    refused(["readme", "--file", str(path)], capsys, f"is not UTF-8 text (byte {len(README.encode()) + 1} is 0xe9)")
    assert path.read_bytes() == data


def test_readme_reads_and_writes_a_file_with_windows_line_ends(tmp_path, capsys):  # t12-048
    # its markers went unmatched behind the \r: stale numbers were called "what the reports give" and kept
    for folder in ("reports", "results", "ablations"):
        (tmp_path / folder).symlink_to(REPO / folder)
    path = tmp_path / "R.md"
    stale = README.replace("| 20,480 | ok | 10.83 |", "| 20,480 | ok | 99.99 |")
    assert stale != README
    path.write_bytes(stale.replace("\n", "\r\n").encode())
    from harness import cli
    assert cli.main(["readme", "--check", "--file", str(path)]) == 1
    assert "differ from what the reports give (headline)" in capsys.readouterr().err
    assert cli.main(["readme", "--file", str(path)]) == 0
    assert path.read_bytes() == README.replace("\n", "\r\n").encode()


def test_block_names_of_the_committed_readme_are_each_block_once():
    assert readme.block_names(README) == ["headline", "ceiling", "study", "claims", "matrices", "reproduction"]


def _untracked_matrix(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    local = tmp_path / "pilot-study.yaml"
    local.write_text((REPO / "ablations" / "smoke.yaml").read_text())
    return local


@pytest.mark.slow
def test_local_matrices_are_the_shipped_matrix_files_git_does_not_track(tmp_path, monkeypatch):  # t11-060
    local = _untracked_matrix(tmp_path)
    monkeypatch.setattr(readme, "shipped_matrices", lambda: {**shipped_matrices(), "pilot-study": local})
    assert readme.local_matrices() == {"pilot-study": local}
    assert "`pilot-study`" not in readme.matrices(REPO) and "`smoke`" in readme.matrices(REPO)


@pytest.mark.slow
def test_readme_check_says_which_local_matrix_its_table_leaves_out(tmp_path, monkeypatch, capsys):  # t11-060
    local = _untracked_matrix(tmp_path)
    monkeypatch.setattr(readme, "shipped_matrices", lambda: {**shipped_matrices(), "pilot-study": local})
    from harness import cli
    assert cli.main(["readme", "--check", "--file", str(REPO / "README.md")]) == 0
    err = capsys.readouterr().err
    assert f"the matrices table leaves out pilot-study ({local}): matrix files git does not track" in err, err


# `readme --file README.md/` (a trailing slash: Path dropped it and rewrote README.md) and `--file docs` (a folder)
@pytest.mark.parametrize("given", ["R.md/", "folder", "folder/"])
def test_readme_refuses_a_file_given_as_a_folder(tmp_path, capsys, given):
    path = tmp_path / "R.md"
    path.write_text(README)
    (tmp_path / "folder").mkdir()
    refused(["readme", "--file", f"{tmp_path}/{given}"], capsys, f"--file {tmp_path}/{given} names a folder")
    assert path.read_text() == README


# t16-053: `readme --file /dev/null` said "no file /dev/null"; a path that is there but no regular file says what it is
@pytest.mark.parametrize(("given", "kind"), [("/dev/null", "a character device"), ("fifo", "a FIFO (a named pipe)")],
                         ids=["t16-053", "fifo"])
def test_readme_says_what_a_file_that_is_no_regular_file_is(tmp_path, capsys, given, kind):
    os.mkfifo(tmp_path / "fifo")
    path = given if given.startswith("/") else str(tmp_path / given)
    refused(["readme", "--file", path], capsys, f"readme: --file {path} is {kind}, not a regular file; give the README")


# t17-071: `readme --file L`, L a symlink to itself, was told "no file L; run it in the repository's folder" (later a
# RuntimeError traceback, where --file is resolved); a link that loops, or one above the file, is said to loop
@pytest.mark.parametrize("given", ["loop", "loop/README.md", "one"], ids=["itself", "above-the-file", "two-links"])
def test_readme_says_a_file_behind_a_symlink_loop_loops(tmp_path, capsys, given):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "one").symlink_to("two")
    (tmp_path / "two").symlink_to("one")
    path = str(tmp_path / given)
    refused(["readme", "--file", path], capsys, f"readme: --file {path}: a symlink on its path loops (leads back to "
            "itself), so there is no file to read; give the README file itself")


# t19-054: a README copy in docs/ (`readme --file docs/R2.md`) was refused with the FileNotFoundError of
# docs/reports/seed-16gb/cells.csv; the blocks are made from the reports and results beside the README, so a README
# without them is said to be in the wrong place, and left as it was
def test_a_readme_away_from_the_reports_it_is_made_from_is_refused(tmp_path, capsys):
    path = tmp_path / "docs" / "R2.md"
    path.parent.mkdir()
    path.write_text(README)
    refused(["readme", "--file", str(path)], capsys, f"readme: {path} has no reports/ and results/ beside it")
    assert path.read_text() == README
