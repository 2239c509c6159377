"""A copy of this checkout as a fresh clone has it (its tracked files and the new ones git does not ignore, so that
the working tree under test is what runs), committed in a repository of its own: `git status` there says whether a
command changed, added or deleted any published file. Tests never run such commands on the real tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def copy_checkout(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # a file deleted in the working tree and not yet committed is no file of the copy
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "copy", cwd=dest)
    return dest


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def status(clone: Path) -> str:
    """`git status --porcelain` of the copy, untracked files listed one by one."""
    return git("status", "--porcelain", "--untracked-files=all", cwd=clone)


def environment(clone: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(clone), **extra}


def snakemake(clone: Path, *argv: str, timeout: int = 600, **env: str) -> subprocess.CompletedProcess:
    """`snakemake --cores 1 ARGV` in the copy, as a person types it there (its workflow profile applies)."""
    return subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *argv], cwd=clone,
                          env=environment(clone, **env), capture_output=True, text=True, timeout=timeout)


def vramlab(clone: Path, *argv: str, timeout: int = 600, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=clone, env=environment(clone, **env),
                          capture_output=True, text=True, timeout=timeout)


def last_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else ""
