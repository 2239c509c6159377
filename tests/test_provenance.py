"""The commit a result records where the tree has no .git (a copy on a remote GPU machine): the launcher names the
commit (VRAMLAB_GIT_COMMIT) and whether the copy differs from it (VRAMLAB_GIT_DIRTY)."""

from __future__ import annotations

import pytest

from harness.core import environment
from harness.core.environment_variables import git_dirty
from harness.core.errors import UsageError


@pytest.mark.parametrize(("dirty", "recorded"), [("0", False), ("1", True), (None, None)])
def test_a_copy_records_the_commit_and_cleanliness_its_launcher_names(monkeypatch, dirty, recorded):
    monkeypatch.setenv("VRAMLAB_GIT_COMMIT", "abcdef1")
    if dirty is None:
        monkeypatch.delenv("VRAMLAB_GIT_DIRTY", raising=False)
    else:
        monkeypatch.setenv("VRAMLAB_GIT_DIRTY", dirty)
    assert environment.git_state() == {"commit": "abcdef1", "dirty": recorded, "source": "VRAMLAB_GIT_COMMIT"}


def test_a_dirty_flag_that_is_neither_0_nor_1_is_refused(monkeypatch):
    monkeypatch.setenv("VRAMLAB_GIT_DIRTY", "yes")
    with pytest.raises(UsageError, match="neither 0"):
        git_dirty()
