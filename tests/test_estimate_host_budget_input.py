"""`vramlab estimate` of a cell with a host budget: where the layer inputs that offloaded checkpointing pins exceed
it, the total's verdict says the cell does not fit (not `fits` beside a pinned figure over the budget), names the
host budget and by how much, and a matrix with `predicted_oom: skip` says that such a cell is not run."""

from __future__ import annotations

from harness import cli

OFFLOAD = ["--set", "model=arch:qwen3-8b", "--set", "device=cuda", "--set", "checkpointing=offload"]
FITS_THE_DEVICE = [*OFFLOAD, "--set", "quantization=nf4", "--set", "context=20480"]


def estimated(argv: list[str], capsys) -> str:
    assert cli.main(["estimate", *argv]) == 0
    return capsys.readouterr().out


def total_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.strip().startswith("total"))


def test_a_cell_that_fits_the_device_but_not_its_host_budget_does_not_fit(capsys):  # t10-161
    total = total_line(estimated([*FITS_THE_DEVICE, "--set", "host_budget=1MiB"], capsys))
    assert "fits the device (3.31 GiB left), but does not fit: its pinned host memory is over the 1.0 MiB host " \
           "budget by 9.00 GiB" in total, total


def test_a_cell_over_both_budgets_names_the_host_budget_too(capsys):  # t10-158
    out = estimated([*OFFLOAD, "--set", "host_budget=1MiB"], capsys)
    assert "does not fit (1.05 GiB over), and its pinned host memory is over the 1.0 MiB host budget" in total_line(out)
    assert "each held as 8 MiB; of a 1.0 MiB host budget" in out, out


def test_a_host_budget_that_holds_the_pinned_inputs_leaves_the_verdict_fits(capsys):
    out = estimated([*FITS_THE_DEVICE, "--set", "host_budget=16GiB"], capsys)
    assert total_line(out).endswith("budget: fits (3.31 GiB left)") and "of a 16.00 GiB host budget" in out, out


def test_a_predicted_oom_skip_matrix_says_its_cells_over_the_host_budget_are_not_run(tmp_path, capsys):  # t10-173
    path = tmp_path / "m.yaml"
    path.write_text("predicted_oom: skip\nfixed: {model: \"arch:qwen3-8b\", device: cuda, quantization: nf4, "
                    "checkpointing: offload, context: 20480, host_budget: 1MiB, kernels: none}\n"
                    "axes: {adapter: [lora, rslora]}\n")
    out = estimated([str(path)], capsys)
    assert out.count("but does not fit: its pinned host memory is over the 1.0 MiB host budget") == 2, out
    assert out.count("predicted_oom: skip: on a CUDA GPU this cell is not run, and is recorded as skipped") == 2, out
