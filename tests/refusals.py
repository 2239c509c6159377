"""A vramlab command refused in-process: its exit code and its one line on stderr."""

from __future__ import annotations

import pytest

from harness import cli


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], said: str, code: int = 2) -> str:
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err, err
    return err
