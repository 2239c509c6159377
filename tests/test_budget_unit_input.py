"""A budget's unit in another case than KiB, MiB, GiB, TiB ('16gib', '16GIB'): refused in one line with the
spelling to write, as decimal units ('16GB') are, rather than read silently as one of them."""

from __future__ import annotations

import pytest

from harness.core.budget import budget_problem, host_budget_problem
from tests.refusals import refused

MATRIX = ('fixed: {{model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, steps: 1, context: 64, '
          "{setting}}}\naxes: {{adapter: [lora, rslora]}}\n")


def test_a_lower_case_unit_in_a_matrix_is_refused_with_the_spelling_to_write(tmp_path, capsys):  # t10-113
    path = tmp_path / "m.yaml"
    path.write_text(MATRIX.format(setting="budget: 16gib"))
    refused(["validate", str(path)], capsys, "fixed.budget: '16gib': units are written B, KiB, MiB, GiB and TiB, "
                                             "with that case; write 16GiB")


@pytest.mark.parametrize(("value", "spelling"), [("16GIB", "16GiB"), ("16 gib", "16GiB"), ("512mib", "512MiB"),
                                                 ("1Tib", "1TiB")])
def test_every_miscased_binary_unit_is_refused_naming_its_spelling(value, spelling):
    assert f"write {spelling.replace(' ', '')}" in budget_problem(value)


def test_a_host_budget_and_a_display_reserve_are_held_to_the_same_spelling():
    assert "write 1MiB" in host_budget_problem("1mib")
    assert "write 512MiB" in budget_problem({"card": "rtx4080", "display_reserve": "512mib"})


@pytest.mark.parametrize("value", ["16GiB", "16 GiB", "16384MiB", 17179869184, "rtx4080"])
def test_the_written_units_stay_accepted(value):
    assert budget_problem(value) is None
