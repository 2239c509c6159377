"""Runs benchmarks/standalone_seed_stack.py in a fresh process, as both benchmarks compare against it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "benchmarks" / "standalone_seed_stack.py"


def run_standalone(model_path: Path, *, context: int, steps: int, warmup: int, cap_bytes: int,
                   options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), str(model_path), "--context", str(context), "--steps", str(steps),
               "--warmup", str(warmup), "--cap-bytes", str(cap_bytes), *options]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True)


def standalone_report(done: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    """The script's JSON report (its last line of output), or None when it failed."""
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if done.returncode == 0 and lines else None
