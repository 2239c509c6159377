"""What a result was measured on: enough to reproduce it or to explain why it differs."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

# xformers and torchvision: Unsloth declares them, and with xformers present it picks another attention path than
# the measured machine ran (constraints-gpu.txt)
STACK = ("torch", "transformers", "peft", "trl", "accelerate", "datasets", "bitsandbytes", "liger-kernel",
         "unsloth", "unsloth-zoo", "flash-attn", "triton", "lm-eval", "gguf", "tokenizers", "safetensors",
         "numpy", "pandas", "snakemake", "nvidia-ml-py", "xformers", "torchvision", "vramlab")

REPO = Path(__file__).resolve().parents[2]  # the checkout this package runs from (harness/core/ is two down)


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in STACK:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git() -> dict[str, Any]:
    if os.environ.get("VRAMLAB_GIT_COMMIT"):
        # a copy of the tree without .git (a remote GPU machine): the launcher says which commit it is
        dirty = os.environ.get("VRAMLAB_GIT_DIRTY", "").strip()
        return {"commit": os.environ["VRAMLAB_GIT_COMMIT"], "dirty": {"0": False, "1": True}.get(dirty),
                "source": "VRAMLAB_GIT_COMMIT"}
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    # results and reports are outputs: rewriting them while a matrix runs does not make the code dirty
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!results", ":!reports")
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None}


def git_state() -> dict[str, Any]:
    """The commit the code is at and whether its tree differs from it (results and reports aside), as results
    record it."""
    return _git()


def collect(driver: str | None = None) -> dict[str, Any]:
    import psutil
    import torch

    env: dict[str, Any] = {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": _cpu_name(),
        "cpu_count": psutil.cpu_count(logical=True),
        "host_memory_bytes": psutil.virtual_memory().total,
        "python": platform.python_version(),
        "versions": versions(),
        "git": _git(),
        "cuda_available": torch.cuda.is_available(),
        "cuda": torch.version.cuda,
        "gpu": None, "gpu_memory_bytes": None, "gpu_capability": None, "driver": driver,
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, gpu_memory_bytes=props.total_memory,
                   gpu_capability=f"{props.major}.{props.minor}", gpu_count=torch.cuda.device_count())
    return env


def cuda_present() -> bool:
    """Asking torch would start CUDA in this process; a loaded driver with visible devices is what
    torch.cuda.is_available() would find, short of a broken installation."""
    return nvidia_driver() is not None and os.environ.get("CUDA_VISIBLE_DEVICES") not in ("", "-1")


def nvidia_driver() -> str | None:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    words = text.split()
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..."
    return next((w for w in words if w[:1].isdigit() and "." in w), None)
