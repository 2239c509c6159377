"""What the workflow is given, said in one line where it cannot be used: a key written twice in a --configfile (or
given by two of them), which Snakemake would take silently; a results folder whose path the file system cannot hold;
the SLURM profile on a machine without SLURM, where the executor would wait, then fail in many lines."""

from __future__ import annotations

import shutil

import pytest

from harness import cli
from harness.core.errors import UsageError
from harness.workflow import check_config, check_configfiles
from tests.checkout_copy import copy_checkout, last_line, snakemake, status


def test_a_key_written_twice_in_a_configfile_is_refused(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("matrix: smoke\nreproduce: false\nmatrix: seed-16gb\n")
    with pytest.raises(UsageError, match=rf"--configfile {path}: line 3: key 'matrix' is written twice \(first on line "
                                         r"1\).*; give it once"):
        check_configfiles([path])


def test_a_key_given_by_two_configfiles_is_refused(tmp_path):
    (tmp_path / "a.yaml").write_text("matrix: smoke\n")
    (tmp_path / "b.json").write_text('{"matrix": "seed-16gb"}')
    with pytest.raises(UsageError, match=r"--configfile: matrix is given by .*a.yaml and by .*b.json"):
        check_configfiles([tmp_path / "a.yaml", tmp_path / "b.json"])
    check_configfiles([tmp_path / "a.yaml"])  # once is fine


@pytest.mark.parametrize("too_long", ["name", "path"])
def test_a_results_folder_the_file_system_cannot_hold_is_one_line(tmp_path, capsys, too_long):
    folder = tmp_path / ("a" * 300) if too_long == "name" else tmp_path.joinpath(*["b" * 250] * 16)
    said = "is 300 bytes, and a file or folder name may have at most 255" if too_long == "name" else \
        "bytes long, and a path may have at most 4,095 here, the 256 of the files under it included"
    with pytest.raises(UsageError, match=f"--config results_dir=.*: the (name|path) .*{said}"):
        check_config({"results_dir": str(folder)}, [])
    assert cli.main(["aggregate", "smoke", "--results-dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err, err


@pytest.mark.slow
def test_a_configfile_key_given_twice_stops_snakemake(tmp_path):
    clone = copy_checkout(tmp_path / "clone")
    (tmp_path / "config.yaml").write_text("matrix: smoke\nmatrix: gpu-check\n")
    done = snakemake(clone, "-n", "--configfile", str(tmp_path / "config.yaml"))
    assert done.returncode == 2 and "key 'matrix' is written twice" in last_line(done), done.stderr[-3000:]
    assert status(clone) == ""


@pytest.mark.slow
def test_the_slurm_profile_without_slurm_is_one_line(tmp_path):
    if shutil.which("sbatch"):
        pytest.skip("this machine has SLURM")
    clone = copy_checkout(tmp_path / "clone")
    done = snakemake(clone, "--profile", "profiles/slurm", "--config", "matrix=smoke", timeout=300)
    assert done.returncode == 2, done.stderr[-3000:]
    assert last_line(done) == ("vramlab: the slurm executor (profiles/slurm) submits each job with sbatch, which this "
                               "machine does not have; run on a machine of the cluster, or without the profile (a dry "
                               "run, -n, shows its jobs anywhere)")
    assert status(clone) == ""
    assert snakemake(clone, "-n", "--profile", "profiles/slurm", "--config", "matrix=smoke").returncode == 0
