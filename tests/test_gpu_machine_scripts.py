"""The scripts that run a study part on the lent GPU machine: a trained cell brought back in pieces and put back for
its evaluation comes back byte for byte, and bad input says why."""

import os
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "gpu-machine"


def _run(script: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(TOOLS / script), *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


@pytest.mark.parametrize("script", sorted(p.name for p in TOOLS.glob("*.sh")))
def test_every_machine_script_parses(script: str) -> None:
    assert subprocess.run(["bash", "-n", str(TOOLS / script)], capture_output=True).returncode == 0


def _trained_cell(st: Path, matrix: str, cell_id: str) -> dict[str, bytes]:
    cell = st / "results" / matrix
    (cell / "adapters" / cell_id).mkdir(parents=True)
    files = {f"{cell_id}.json": b'{"status": "ok"}\n',
             f"adapters/{cell_id}/adapter_model.safetensors": os.urandom(33_000_000),
             f"adapters/{cell_id}/adapter_config.json": b"{}\n"}
    for name, data in files.items():
        (cell / name).write_bytes(data)
    return files


def test_a_trained_cell_comes_back_in_pieces_and_is_restored_byte_for_byte(tmp_path: Path) -> None:
    st, out, root = tmp_path / "st", tmp_path / "out", tmp_path / "later"
    out.mkdir()
    files = _trained_cell(st, "study-x", "abc123")
    brought = _run("study-adapters.sh", "study-x", "0", "abc123", env={"ST": str(st), "OUT": str(out)})
    assert brought.returncode == 0, brought.stderr
    pieces = sorted(p.name for p in out.iterdir())
    assert pieces == [f"cell-study-x-abc123.tar.part0{i}" for i in range(3)]  # 15 MB each: under what a call returns
    assert all(p.stat().st_size <= 15_000_000 for p in out.iterdir())
    restored = _run("study-restore.sh", "study-x", str(out), str(root), env={})
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "restored cell-study-x-abc123" in restored.stdout
    for name, data in files.items():
        assert (root / "results" / "study-x" / name).read_bytes() == data


def test_a_cell_not_yet_trained_brings_back_nothing_and_says_so(tmp_path: Path) -> None:
    st, out = tmp_path / "st", tmp_path / "out"
    (st / "results" / "study-x").mkdir(parents=True)
    out.mkdir()
    brought = _run("study-adapters.sh", "study-x", "0", "abc123", env={"ST": str(st), "OUT": str(out)})
    assert brought.returncode == 1
    assert "abc123: not trained" in brought.stdout
    assert list(out.iterdir()) == []


def test_restoring_from_a_folder_without_pieces_refuses(tmp_path: Path) -> None:
    restored = _run("study-restore.sh", "study-x", str(tmp_path), str(tmp_path / "later"), env={})
    assert restored.returncode == 1
    assert "holds no cell-study-x-*.tar.part00" in restored.stdout
    assert not (tmp_path / "later").exists()


def test_restoring_pieces_that_make_no_archive_refuses(tmp_path: Path) -> None:
    (tmp_path / "cell-study-x-abc123.tar.part00").write_bytes(b"not a tar archive" * 100)
    restored = _run("study-restore.sh", "study-x", str(tmp_path), str(tmp_path / "later"), env={})
    assert restored.returncode == 1
    assert "its pieces make no archive" in restored.stdout
