"""A matrix that makes no cell: with neither `axes` nor `cells` (nor a `design` to name the missing part by), the
refusal says that one of the two is needed, rather than a design the file never named."""

from __future__ import annotations

from tests.refusals import refused


def test_a_matrix_of_fixed_alone_is_told_to_give_axes_or_cells(tmp_path, capsys):  # t10-040
    path = tmp_path / "m.yaml"
    path.write_text('fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, steps: 1, '
                    "context: 64}\n")
    err = refused(["validate", str(path)], capsys, "top level: neither `axes` nor `cells`, so the matrix makes no cell")
    assert "list design" not in err and "give `axes`" in err and "or `cells`" in err, err


def test_a_list_design_named_without_cells_still_says_the_list_design_needs_them(tmp_path, capsys):
    path = tmp_path / "m.yaml"
    path.write_text('design: list\nfixed: {model: "arch:tiny-llama", device: cpu}\n')
    refused(["validate", str(path)], capsys, "cells: the list design needs a non-empty list of cells")
