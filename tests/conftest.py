from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(config, items):
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """One model cache for the whole session: arch: and GGUF conversions are made once."""
    path = tmp_path_factory.mktemp("vramlab-cache")
    os.environ["VRAMLAB_CACHE"] = str(path)
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
