from __future__ import annotations

import pytest
import yaml

from harness.core.budget import parse_bytes
from harness.spec.cells import cell_id_of
from harness.spec.matrix import MatrixError, available_matrices, expand, expand_spec
from harness.spec.settings import defaults


def spec(text: str):
    return yaml.safe_load(text)


def test_full_design_is_the_product_of_axes():
    cells = expand_spec("m", spec("""
fixed: {model: "arch:tiny-llama", steps: 2}
axes: {adapter: [lora, rslora], checkpointing: ["off", "on", offload], context: [64, 128]}
"""))
    assert len(cells) == 12
    assert {c.settings["adapter"] for c in cells} == {"lora", "rslora"}
    assert all(c.settings["steps"] == 2 and c.settings["model"] == "arch:tiny-llama" for c in cells)
    assert cells[0].name == "adapter=lora,checkpointing=off,context=64"
    assert len({c.cell_id for c in cells}) == 12


def test_one_at_a_time_varies_one_axis_from_the_baseline():
    cells = expand_spec("m", spec("""
axes: {adapter: [lora, rslora], optimizer: [adamw_torch, adamw_8bit, paged_adamw_8bit]}
design: one_at_a_time
baseline: {adapter: rslora, optimizer: paged_adamw_8bit}
"""))
    assert [c.name for c in cells] == ["baseline", "adapter=lora", "optimizer=adamw_torch", "optimizer=adamw_8bit"]
    assert cells[1].settings["optimizer"] == "paged_adamw_8bit"


def test_list_design_keeps_names_and_include_exclude_apply():
    cells = expand_spec("m", spec("""
fixed: {context: 64}
design: list
cells:
  - {name: a, adapter: lora}
  - {name: b, adapter: rslora}
include:
  - {name: c, adapter: rslora, checkpointing: "on"}
exclude:
  - {adapter: lora}
"""))
    assert [c.name for c in cells] == ["b", "c"]


def test_exclude_matches_on_fixed_and_default_values_too():
    cells = expand_spec("m", spec("""
axes: {adapter: [lora, rslora]}
exclude: [{adapter: lora, attention: sdpa}]
"""))
    assert [c.settings["adapter"] for c in cells] == ["rslora"]


def test_a_cell_reached_twice_is_an_error_not_a_silent_merge():
    with pytest.raises(MatrixError, match="have the same settings, so they are one cell"):
        expand_spec("m", spec("""
axes: {adapter: [lora, rslora]}
include: [{adapter: lora}]
"""))


@pytest.mark.parametrize(("text", "expected"), [
    ("axes: {adaptor: [lora]}", "axes: unknown setting 'adaptor'; did you mean 'adapter'?"),
    ("axes: {adapter: [lora, rsloar]}",
     "axes.adapter: level 'rsloar' is not one of lora, rslora; did you mean 'rslora'?"),
    ("fixed: {optimizer: paged_adamw8bit}\naxes: {adapter: [lora]}",
     "fixed.optimizer: level 'paged_adamw8bit' is not one of adamw_torch, adamw_8bit, paged_adamw_8bit; "
     "did you mean 'paged_adamw_8bit'?"),
    ("axis: {adapter: [lora]}", "top level: unknown key 'axis'; did you mean 'axes'?"),
    ("axes: {adapter: [lora]}\ndesign: ful",
     "design: 'ful' is not one of full, one_at_a_time, list; did you mean 'full'?"),
    ("axes: {adapter: lora}", "axes.adapter: expected a non-empty list of levels"),
    ("axes: {context: [1024, big]}", "axes.context: 'big' is not an integer"),
    ("fixed: {budget: 16 gigs}\naxes: {adapter: [lora]}", "fixed.budget: '16 gigs': unknown unit"),
    ("fixed: {adapter: lora}\naxes: {adapter: [lora]}", "axes.adapter: is also fixed"),
    ("axes: {adapter: [lora]}\ndesign: one_at_a_time",
     "baseline: one_at_a_time needs a baseline level for axes adapter"),
    ("axes: {adapter: [lora]}\nexclude: [{adapter: lora}]", "exclude: every cell was excluded"),
    ("axes: {vocabulary: [native, 12]}", "axes.vocabulary: 12 is neither 'native' nor a vocabulary size"),
    ("design: list\ncells: [{name: x, kernls: liger}]", "cells[0]: unknown setting 'kernls'; did you mean 'kernels'?"),
    ("[1, 2]", "top level: a matrix file must be a mapping"),
])
def test_validation_errors_are_one_clear_line(text, expected):
    with pytest.raises(MatrixError) as err:
        expand_spec("m", spec(text), source="ablations/m.yaml")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("ablations/m.yaml: ")
    assert expected in message


def test_unknown_matrix_name_suggests_a_known_one():
    with pytest.raises(MatrixError, match="did you mean 'smoke'"):
        expand("smok")


def test_invalid_yaml_is_reported_not_raised_raw(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("axes: {adapter: [lora\n")
    with pytest.raises(MatrixError, match="not valid YAML"):
        expand(str(path))


def test_unsloth_with_liger_is_a_declared_conflict_not_a_changed_cell():
    cells = expand_spec("m", spec("axes: {kernels: [liger, unsloth, liger+unsloth]}"))
    conflicted = [c for c in cells if c.conflict]
    assert [c.settings["kernels"] for c in conflicted] == ["liger+unsloth"]
    assert conflicted[0].conflict.name == "unsloth-with-liger"
    assert "RMSNorm" in conflicted[0].conflict.reason


def test_a_tiled_mlp_off_the_unsloth_path_is_a_declared_conflict_and_off_renames_no_cell():
    cells = expand_spec("m", spec("axes: {kernels: [none, liger, unsloth], tiled_mlp: ['off', arctic]}"))
    conflicted = [(c.settings["kernels"], c.conflict.name) for c in cells if c.conflict]
    assert conflicted == [("none", "tiled-mlp-needs-unsloth"), ("liger", "tiled-mlp-needs-unsloth")]
    # a setting added after results were committed counts in the id only off its default
    untiled = expand_spec("m", spec("axes: {kernels: [unsloth]}"))[0]
    assert untiled.cell_id == next(c for c in cells if c.settings["kernels"] == "unsloth"
                                   and c.settings["tiled_mlp"] == "off").cell_id


def test_every_shipped_matrix_is_valid():
    names = available_matrices()
    assert {"smoke", "seed-16gb", "gpu-check"} <= set(names)
    for name in names:
        assert expand(name)


def test_cell_id_depends_only_on_settings():
    settings = defaults()
    assert cell_id_of(settings) == cell_id_of(dict(reversed(list(settings.items()))))
    changed = {**settings, "context": settings["context"] + 1}
    assert cell_id_of(changed) != cell_id_of(settings)


def test_cell_id_is_stable_across_releases():
    # Result files are named by this id; if it changes, every finished cell would run again.
    assert cell_id_of({"a": 1, "b": [1, 2], "c": "x"}) == "ed60d8300f9d"


def test_same_cell_in_two_matrices_has_the_same_id():
    a = expand_spec("one", spec("fixed: {context: 64}\naxes: {adapter: [lora, rslora]}"))
    b = expand_spec("two", spec("axes: {context: [64]}\nfixed: {adapter: rslora}"))
    assert a[1].cell_id == b[0].cell_id


@pytest.mark.parametrize(("text", "value"), [("16GiB", 16 * 2**30), ("16000MB", 16 * 10**9), ("512 MiB", 2**29),
                                             (1024, 1024), ("1.5GiB", 3 * 2**29)])
def test_parse_bytes(text, value):
    assert parse_bytes(text) == value
