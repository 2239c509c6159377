"""Why do the seed-16gb cells peak lower than shared/notes/stack-measurements.md? Runs the notes' stack
(Unsloth, NF4, LoRA r=16 on all linear layers, paged 8-bit AdamW, SDPA choosing its kernel, 16 GiB
allocator cap) at 20,480 tokens twice, in fresh processes, differing only in who computes the loss:

- `sft`: TRL's SFTTrainer, as every harness cell does (TRL's chunked LM head and log-probabilities);
- `plain`: a bare loop that passes labels to the model, so Unsloth's own fused cross-entropy runs.

    python benchmarks/loss_path.py [arch:qwen3-8b]

Writes results/benchmarks/loss-path.json. A run that fails (an OOM included) is kept with its error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.standalone_run import run_standalone, standalone_report  # noqa: E402
from harness.core import environment  # noqa: E402
from harness.stack.models import sources as models  # noqa: E402

CONTEXT = 20480
CAP_BYTES = 16 * 1024**3  # the notes capped the allocator at the whole budget
STEPS, WARMUP = 6, 1


def run(model_path: Path, loop: str) -> dict:
    done = run_standalone(model_path, context=CONTEXT, steps=STEPS, warmup=WARMUP, cap_bytes=CAP_BYTES,
                          options=("--loop", loop, "--attention", "auto", "--adapter", "lora"))
    report = standalone_report(done)
    if report is not None:
        return {"status": "ok", **report}
    return {"status": "failed", "loop": loop, "returncode": done.returncode, "stderr_tail": done.stderr[-4000:]}


def main(model: str) -> None:
    model_path = models.resolve(model, seed=0).path
    runs = {loop: run(model_path, loop) for loop in ("sft", "plain")}
    sft, plain = runs["sft"], runs["plain"]
    both = sft["status"] == plain["status"] == "ok"
    comparison = {
        "model": model, "context": CONTEXT, "allocator_cap_bytes": CAP_BYTES,
        "environment": environment.collect(), "runs": runs,
        "plain_minus_sft_peak_allocated_bytes": plain["peak_allocated_bytes"] - sft["peak_allocated_bytes"]
        if both else None,
        "plain_minus_sft_peak_reserved_bytes": plain["peak_reserved_bytes"] - sft["peak_reserved_bytes"]
        if both else None,
    }
    out = REPO / "results" / "benchmarks" / "loss-path.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(comparison, indent=2) + "\n")
    print(json.dumps({k: v for k, v in comparison.items() if k.endswith("_bytes")}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "arch:qwen3-8b")
