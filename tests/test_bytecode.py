"""Bytecode in the cache folder where Python is told not to write it (harness/run/bytecode.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run_estimate(tmp_path: Path, **env: str) -> Path:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "VRAMLAB_BYTECODE_CACHE")}
    cache = tmp_path / "cache"
    subprocess.run([sys.executable, "-m", "harness", "estimate", "ablations/smoke.yaml"], cwd=REPO, check=True,
                   capture_output=True, env={**base, "VRAMLAB_CACHE": str(cache), **env})
    return cache / "bytecode"


@pytest.mark.slow
def test_bytecode_goes_to_the_cache_where_python_writes_none(tmp_path):
    folder = _run_estimate(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    # the estimate's modules are imported by the command, after the switch
    assert any(p.parent.name == "estimate" for p in folder.rglob("*.pyc"))
    # read back by the next process: nothing new is compiled for the same sources
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*.pyc")}
    _run_estimate(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*.pyc")} == before


@pytest.mark.slow
def test_nothing_changes_where_python_writes_bytecode_or_it_is_turned_off(tmp_path):
    assert not _run_estimate(tmp_path / "a").exists()
    assert not _run_estimate(tmp_path / "b", PYTHONDONTWRITEBYTECODE="1", VRAMLAB_BYTECODE_CACHE="0").exists()


def test_the_result_records_it(tmp_path):
    code = ("import sys; from harness.run import bytecode; from harness.run.worker_status import started_how; "
            "bytecode.enable(); print(started_how()['bytecode_cache'])")
    base = {k: v for k, v in os.environ.items() if k != "VRAMLAB_BYTECODE_CACHE"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True,
                         env={**base, "VRAMLAB_CACHE": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}).stdout
    assert out.strip() == "$VRAMLAB_CACHE/bytecode"
