"""The `report:` section: defaults derived from the design, what a researcher may override, design.json."""

from __future__ import annotations

import yaml

from harness.spec.design import ReportDesign, resolve
from harness.spec.matrix import expand_spec

# the seed matrix in small: a stack, each technique removed, and the stack and a second one swept over context
SWEEPS = """
fixed: {model: "arch:tiny-llama", context: 256, kernels: liger, checkpointing: "on", optimizer: adamw_8bit}
design: list
cells:
  - {name: stack}
  - {name: no-checkpointing, checkpointing: "off"}
  - {name: plain-optimizer, optimizer: adamw_torch}
  - {name: plain-kernels, kernels: none}
  - {name: stack-64, context: 64}
  - {name: stack-128, context: 128}
  - {name: plain-kernels-64, context: 64, kernels: none}
  - {name: lone-64, context: 64, checkpointing: "off", optimizer: adamw_torch}
"""


def design(text: str, report: str = "") -> ReportDesign:
    spec = yaml.safe_load(text + report)
    return resolve(spec, expand_spec("m", yaml.safe_load(text + report)))


def test_defaults_come_from_the_design():
    d = design(SWEEPS)
    assert d.baseline == "stack" and d.x == "context" and d.lines == ("kernels",)
    # a line per group of cells that differ only in context, in increasing context; lone-64 is on none
    assert [(line.label, line.cells) for line in d.sweep] == [
        ("kernels liger", ("stack-64", "stack-128", "stack")), ("kernels none", ("plain-kernels-64", "plain-kernels"))]
    # the colour key: what differs from the baseline with the context aside, the same for a line and its cells
    assert [line.change for line in d.sweep] == ["", "kernels none"]
    assert d.changes["plain-kernels-64"] == d.changes["plain-kernels"] == "kernels none"
    assert d.changes["lone-64"] == "checkpointing off, optimizer adamw_torch"
    # held against the baseline: the cells at its context
    assert d.deltas == ("no-checkpointing", "plain-optimizer", "plain-kernels")
    # random weights, a few steps: no loss chart (harness/spec/design.py)
    assert d.charts == ("overview", "sweep", "deltas", "tradeoff")
    assert d.random_weights and d.steps < 20


def test_a_section_overrides_the_baseline_the_x_axis_and_the_line_names():
    d = design(SWEEPS, "report: {baseline: plain-kernels, lines: [kernels]}")
    assert d.baseline == "plain-kernels" and d.changes["stack"] == "kernels liger" and d.changes["plain-kernels"] == ""
    assert "stack" in d.deltas and "plain-kernels" not in d.deltas
    without = design(SWEEPS, "report: {x: null}")
    assert without.sweep == () and "sweep" not in without.charts
    # with no x every other cell is held against the baseline, whatever its context
    assert len(without.deltas) == 7
    ranks = design('fixed: {model: "arch:tiny-llama"}\naxes: {lora_rank: [4, 8, 16], adapter: [lora, rslora]}\n',
                   "report: {x: lora_rank}")
    assert [line.label for line in ranks.sweep] == ["adapter lora", "adapter rslora"]
    assert ranks.sweep[0].cells == ("lora_rank=4,adapter=lora", "lora_rank=8,adapter=lora", "lora_rank=16,adapter=lora")


def test_no_sweep_without_two_cells_that_differ_only_in_context():
    d = design('fixed: {model: "arch:tiny-llama"}\naxes: {adapter: [lora, rslora], checkpointing: ["off", "on"]}\n'
               "design: one_at_a_time\nbaseline: {adapter: lora, checkpointing: \"off\"}\n")
    assert d.x is None and d.sweep == () and d.baseline == "baseline"
    assert d.deltas == ("adapter=rslora", "checkpointing=on")


def test_repeats_are_one_group_and_shared_devices_have_no_speed_chart():
    d = design('fixed: {model: "arch:tiny-llama"}\naxes: {context: [64, 128]}\nseeds: [0, 1, 2]\n'
               "concurrent_cells: 4\nevaluation: {tasks: [text_en]}\n")
    assert d.baseline == "context=64" and d.sweep[0].cells == ("context=64", "context=128")
    assert list(d.changes) == ["context=64", "context=128"]
    assert not d.throughput_measured and "tradeoff" not in d.charts
    assert d.charts[-2:] == ("quality_vs_memory", "quality_by_cell")
    # the two-point sweep draws no chart; each chart two columns wide (PDF, PNG) and one column wide (PDF)
    assert "sweep" not in d.charts
    assert d.files()[:3] == ["overview.pdf", "overview.png", "overview-column.pdf"]


def test_design_json_reads_back_as_written(tmp_path):
    d = design(SWEEPS)
    d.write(tmp_path / "design.json")
    assert ReportDesign.read(tmp_path / "design.json") == d


def test_a_line_is_not_labelled_with_a_setting_that_does_nothing_in_it():
    # quality-qwen's lines: exp_decay at two ratios and tail, whose cells keep the default ratio it never uses
    d = design("""
fixed: {model: "arch:tiny-llama", data: grant-reports, truncation: exp_decay, context: 256}
design: list
cells:
  - {name: exp}
  - {name: exp-64, context: 64}
  - {name: exp9, truncation_decay: 0.9}
  - {name: exp9-64, truncation_decay: 0.9, context: 64}
  - {name: tail, truncation: tail}
  - {name: tail-64, truncation: tail, context: 64}
""")
    assert [line.label for line in d.sweep] == ["truncation exp_decay, truncation_decay 0.5",
                                                "truncation exp_decay, truncation_decay 0.9", "truncation tail"]
    # two tail lines told apart only by a ratio that acts in neither: the full labels, so that no two lines read the
    # same (a matrix where the ratio acts in no cell at all is refused: tests/test_matrix_input.py)
    inert = design("""
fixed: {model: "arch:tiny-llama", data: grant-reports}
axes: {truncation: [tail, exp_decay], truncation_decay: [0.5, 0.9], context: [64, 256]}
""")
    assert [line.label for line in inert.sweep][:2] == ["truncation tail, truncation_decay 0.5",
                                                        "truncation tail, truncation_decay 0.9"]
