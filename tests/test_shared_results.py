"""A results folder shared by several people: result files everyone can read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.test_published_results import _env, matrix_with_cell_id_after


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_result_file_is_as_readable_as_the_folders_other_files(tmp_path, umask, mode):
    """A shared results folder (a lab's server, a cluster's shared disk): result files get the permissions the
    umask gives any new file, as the logs and reports beside them do."""
    matrix, _ = matrix_with_cell_id_after(tmp_path, first="")
    done = subprocess.run([sys.executable, "-c", f"""
import os
os.umask({umask})
from pathlib import Path
from tests.test_published_results import write_published
write_published(Path({str(tmp_path / "results")!r}), Path({str(matrix)!r}))
"""], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "results").rglob("*.json")]
    assert len(files) == 3 and {oct(p.stat().st_mode & 0o777) for p in files} == {oct(mode)}
