"""Does the harness slow what it measures? Compares one harness cell with benchmarks/standalone_seed_stack.py
on the same machine, in one run, and writes results/benchmarks/harness-overhead.json.

    python benchmarks/harness_overhead.py seed-16gb 3232155d81f9 [--reuse]

With --reuse, the cell's result file from this same session (results/<matrix>/<id>.json) stands for the
harness side instead of a new run.

Both run in fresh processes, one after the other, with the same allocator cap. The harness adds a
memory-sampling thread (NVML and host RSS every 10 ms), step callbacks and a one-off attention probe.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.standalone_run import run_standalone, standalone_report  # noqa: E402
from harness import results  # noqa: E402
from harness.core import environment  # noqa: E402
from harness.spec.matrix import find_cell  # noqa: E402
from harness.stack.models import sources as models  # noqa: E402


def main(matrix: str, cell_id: str, reuse: bool) -> None:
    cell = find_cell(matrix, cell_id)
    out = REPO / "results" / "benchmarks"
    out.mkdir(parents=True, exist_ok=True)
    harness_file = results.result_path(REPO / "results", cell.matrix, cell_id)
    if not (reuse and harness_file.is_file()):
        harness_file = out / f"harness-{cell_id}.json"
        subprocess.run([sys.executable, "-m", "harness", "run-cell", "--matrix", matrix, "--cell", cell_id,
                        "--out", str(harness_file)], check=True, cwd=REPO)
    harnessed = results.read(harness_file).model_dump(mode="json")  # the typed result, as the dict read below
    cap = harnessed["budget"]["allocator_cap_bytes"]
    model_path = models.resolve(cell.settings["model"], seed=cell.settings["seed"]).path
    done = run_standalone(model_path, context=cell.settings["context"],
                          steps=cell.settings["steps"] + cell.settings["warmup_steps"],
                          warmup=cell.settings["warmup_steps"], cap_bytes=cap)
    done.check_returncode()
    standalone = standalone_report(done)
    if standalone is None:
        raise RuntimeError(f"the stand-alone script printed no report:\n{done.stderr[-4000:]}")
    h, s = harnessed["metrics"], standalone
    comparison = {
        "cell_id": cell_id, "matrix": matrix, "environment": environment.collect(),
        "harness": {k: h.get(k) for k in ("tokens_per_second", "median_step_seconds", "step_seconds",
                                          "peak_allocated_bytes", "peak_reserved_bytes", "peak_device_bytes")},
        "harness_status": harnessed["status"], "harness_result": str(harness_file.relative_to(REPO)),
        "standalone": standalone,
        "tokens_per_second_gap": (1 - h["tokens_per_second"] / s["tokens_per_second"])
        if h["tokens_per_second"] else None,
        "train_peak_allocated_gap_bytes": h["phases"]["train"]["peak_allocated_bytes"] - s["peak_allocated_bytes"],
        "threshold": 0.03,
    }
    gap = comparison["tokens_per_second_gap"]
    comparison["within_threshold"] = gap is not None and abs(gap) < comparison["threshold"]
    (out / "harness-overhead.json").write_text(json.dumps(comparison, indent=2) + "\n")
    print(json.dumps({k: comparison[k] for k in ("tokens_per_second_gap", "train_peak_allocated_gap_bytes",
                                                 "within_threshold")}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], reuse="--reuse" in sys.argv[3:])
