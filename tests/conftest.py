from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(config, items):
    import torch

    # the tests that take minutes go first: under `pytest -n 2` each then runs beside the many short ones, where last
    # in file order one of them alone would set the suite's end
    items.sort(key=lambda item: "minutes" not in item.keywords)  # a stable sort: file order within each kind
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory, request) -> Path:
    """One model cache for the whole session, shared by the workers of `pytest -n N`: arch: and GGUF conversions are
    made once (a model is built under a lock and renamed into place, harness/stack/models/sources.py)."""
    base = tmp_path_factory.getbasetemp()
    worker = hasattr(request.config, "workerinput")  # a worker of pytest-xdist: its temp folder is one per worker
    path = (base.parent if worker else base) / "vramlab-cache"
    path.mkdir(exist_ok=True)
    os.environ["VRAMLAB_CACHE"] = str(path)
    return path


@pytest.fixture
def spare_cache(tmp_path) -> Path:
    """A cache of this test's own, for tests that wait for, count or stop warm-start spares: the spares live in the
    cache, and under `pytest -n N` the session's shared cache holds those of the tests running beside it."""
    path = tmp_path / "cache"
    path.mkdir()
    return path


# one tiny cell (random weights, real stack) on the CPU: format with cells="  - {name: x, context: 32}"
TINY = """
fixed:
  model: "arch:tiny-llama"
  data: zipf
  device: cpu
  steps: 2
  warmup_steps: 1
  grad_accum: 2
  lora_rank: 4
  lora_alpha: 8
  budget: 16GiB
design: list
cells:
{cells}
"""


def write_matrix(folder: Path, text: str, name: str = "m") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


def run_vramlab(*args: str, cwd: Path, cache: Path, timeout: int = 600,
                address_space: int | None = None) -> subprocess.CompletedProcess:
    """`python -m harness ...` in a child process; `address_space` caps its virtual memory (bytes), so that a
    test provoking an allocation failure fails inside the child instead of filling the machine's memory."""
    env = {**os.environ, "VRAMLAB_CACHE": str(cache), "PYTHONPATH": str(REPO)}

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit if address_space else None)


def repository_files(folder: Path) -> list[Path]:
    """The files under a folder of this checkout that the repository holds (committed, or new and not ignored): never
    an ignored output of an earlier run here, such as the main job's results/<matrix>/reproductions/ (.gitignore)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", str(folder)],
                            cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:  # no git checkout (an unpacked archive), so no run's outputs among the files either
        return sorted(p for p in Path(folder).rglob("*") if p.is_file())
    return sorted(p for name in listed.stdout.split("\0") if name and (p := REPO / name).is_file())


def copy_repository_files(source: Path, target: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """shutil.copytree of what the repository holds under source (repository_files), without the folders named in
    leave_out."""
    for path in repository_files(source):
        relative = path.relative_to(source)
        if set(relative.parts) & set(leave_out):
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / relative)
    return target
