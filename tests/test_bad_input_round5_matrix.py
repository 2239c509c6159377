"""Bad input, fifth round, matrix and run cases (docs/bad-input/round5.md, "Non-clear cases"): a matrix that can
measure nothing, or measures a thing other than it says, is refused before any cell runs, in one line naming the
file, the place and the setting, exit 2, nothing written. In-process, so that they stay in the fast tier."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.matrix import MatrixError, expand

F = 'model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0'


def _matrix(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def _base(tmp_path: Path, fixed: str = "", rest: str = "") -> str:
    """The trial's tiny base with one change: `fixed` adds to its fixed settings, `rest` adds sections."""
    more = f", {fixed}" if fixed else ""
    return _matrix(tmp_path, f"fixed: {{{F}{more}}}\naxes: {{adapter: [lora, rslora]}}\n{rest}")


def _refused(path: str, expected: str) -> None:
    with pytest.raises(MatrixError) as err:
        expand(path)
    assert expected in str(err.value) and "\n" not in str(err.value), str(err.value)


def _validate(path: str, capsys: pytest.CaptureFixture[str], command: str = "validate") -> tuple[int, str]:
    """`vramlab validate PATH` in this process: its exit status and its stderr; it writes nothing beside PATH."""
    folder = Path(path).parent
    before = sorted(folder.iterdir())
    code = main([command, path])
    assert sorted(folder.iterdir()) == before
    return code, capsys.readouterr().err.strip()


# M-budget_TiB_huge: a budget larger than any device caps nothing and only makes cells of their own ids
@pytest.mark.parametrize("budget", ["99999999TiB", "1025GiB", "2TiB"])
def test_a_budget_beyond_any_device_is_refused_naming_the_bound(tmp_path, budget):
    _refused(_base(tmp_path, f"budget: {budget}"), f"fixed.budget: '{budget}' is more than 1TiB")


def test_a_budget_at_the_bound_is_accepted(tmp_path):
    assert expand(_base(tmp_path, "budget: 1TiB"))
