"""`--machine`, the folder name of this machine's results under results/<matrix>/reproductions/ (card-check, compare):
a path or an empty name is refused in one line, by the dry run too, since the real run would use it."""

from __future__ import annotations

import pytest

from harness import cli
from tests.conftest import REPO
from tests.refusals import refused


@pytest.mark.parametrize("machine", [pytest.param("../../x", id="t10-071-a-path"),
                                     pytest.param("", id="t10-072-empty"), pytest.param("a/b", id="a-folder-below")])
# the real card-check run asks for its GPU first (without one, nothing would be measured or written), then the name
@pytest.mark.parametrize(("command", "folder"), [(["card-check", "--dry-run"], "results/card-check/reproductions/"),
                                                 (["compare", "smoke"], "results/<matrix>/reproductions/")])
def test_a_machine_that_is_no_folder_name_is_refused(command, folder, machine, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    refused([*command, "--machine", machine], capsys, f"--machine {machine!r}: a machine is named by its folder under "
                                                       f"{folder}")


def test_the_dry_run_with_a_machine_name_says_what_would_run(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert cli.main(["card-check", "--dry-run", "--machine", "rtx-4080_1"]) == 0
    assert "The real-card check runs" in capsys.readouterr().out
