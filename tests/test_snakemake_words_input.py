"""What a Snakemake run reads differently from what a person may expect is said in one line when its jobs are
built: a yes/no --config value written as another word than true or false (reproduce=yes), and a working folder
that is not the checkout (snakemake --directory), whose results and reports are its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.workflow import elsewhere_note, flag, flag_readings
from tests.checkout_copy import copy_checkout, snakemake


@pytest.mark.parametrize(("config", "said"), [
    pytest.param({"reproduce": "yes"}, ["--config reproduce=yes is read as reproduce=true"], id="t11-125"),
    pytest.param({"replace": 1}, ["--config replace=1 is read as replace=true"], id="replace-1"),
    pytest.param({"warm_start": "off"}, ["--config warm_start=off is read as warm_start=false"], id="off"),
    pytest.param({"reproduce": "true", "replace": False, "warm_start": "auto"}, [], id="the-documented-words"),
    pytest.param({"reproduce": "auto"}, [], id="reproduce-auto")])
def test_a_yes_no_word_other_than_true_or_false_is_told_as_read(config, said):
    assert flag_readings(config) == said
    for name, line in zip(config, said, strict=False):
        assert line.endswith(f"={str(flag(config, name, 'false')).lower()}")


def test_a_working_folder_other_than_the_checkout_is_told_with_its_results(tmp_path):  # t11-119
    checkout = Path(__file__).resolve().parent.parent
    said = elsewhere_note(tmp_path, checkout, ("results", "reports"), "smoke", 0, 8)
    assert said == (f"working in {tmp_path} (snakemake --directory), not in the checkout {checkout}: results go to "
                    f"{tmp_path}/results/smoke/, where 0 of the 8 cells have one, and reports to {tmp_path}/reports/"
                    "smoke/; the published ones in the checkout are neither used nor changed")
    assert elsewhere_note(checkout, checkout, ("results", "reports"), "smoke", 8, 8) is None
    assert elsewhere_note(tmp_path, checkout, (str(tmp_path / "r"), "reports"), "smoke", 0, 8) is None


@pytest.mark.slow
def test_snakemake_says_both_before_a_dry_run(tmp_path):
    clone = copy_checkout(tmp_path / "clone")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = snakemake(clone, "-n", "-d", str(elsewhere), "--config", "matrix=smoke", "reproduce=yes")
    ours = [line for line in done.stderr.splitlines() if line.startswith("vramlab:")]
    assert done.returncode == 0, done.stderr[-3000:]
    assert ours[0].startswith(f"vramlab: working in {elsewhere} (snakemake --directory), not in the checkout")
    assert "vramlab: --config reproduce=yes is read as reproduce=true" in ours
