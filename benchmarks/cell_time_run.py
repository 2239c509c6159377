"""Measure a matrix's cells before and after a change, interleaved, for benchmarks/cell_time.py.

    git archive OLD harness ablations pyproject.toml | tar -x -C /tmp/before
    python benchmarks/cell_time_run.py seed-16gb --before-tree /tmp/before --before-commit OLD \\
        --out results/benchmarks/cell-time [--cell ID ...] [--primer ID ...]

For each cell, one after the other on the same device: the cell run by the tree before the change (a fresh
`vramlab run-cell` there), then the spares that `--warm-start` would have left started and waited for until
ready, then the cell run by this checkout with `--warm-start`, then the spares stopped, so that nothing of
the after side runs while the next before cell does. A single pass of all before cells and then all after
cells measured differences of up to 40% in single phases between two runs of the same code on the GPU
machine (results/benchmarks/cell-time-trial/); interleaving puts both sides of a cell under the same
conditions. Every after cell finds a spare ready, as every cell but a matrix's first does. Primer cells
(run fresh by each side, not recorded) run first, so that neither side pays for cold compiler caches: the
Triton kernels they share, and the folder of code Unsloth compiles in each side's working folder.

Writes OUT/before/<id>.json, OUT/after/<id>.json, OUT/walls.tsv (the wall time of each `vramlab run-cell` as
seen from here) and OUT/comparison.md.

With `--gpus N` (and `--per-gpu M`, default 1) the primers are dealt to N*M streams and run side by side
first, then the cells are dealt in turn to the streams, stream k on GPU k mod N (CUDA_VISIBLE_DEVICES), each
run as above by a process of its own writing to OUT/stream-k; when all have ended their files are gathered into
OUT and compared together. A cell's before and after runs stay in one stream, back to back, and each stream's
spares are its own (its number is in the environment, which is part of a spare's key). Streams that share a GPU
contend for it, and for the CPU: a phase of either side may overlap any phase of another stream, so timings are
noisier than with one stream per GPU, alike for both sides. Peaks are unaffected: each process is judged on its
own device memory (NVML, by process) and capped by its own allocator.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.cell_time import comparison, load  # noqa: E402
from harness.process import warm_start  # noqa: E402
from harness.spec.matrix import expand  # noqa: E402
from harness.stack.backends import name_for  # noqa: E402

SPARE_WAIT_SECONDS = 600.0


STREAM_ENV = "VRAMLAB_CELL_TIME_STREAM"


def stream_env(k: int, gpus: int) -> dict[str, str]:
    """Stream k's GPU, and its number: streams sharing a GPU must not take or stop each other's spares. The streams
    place their cells themselves, so the harness's device leases are off (VRAMLAB_DEVICES empty): with them, the
    streams of one GPU would wait for each other instead of contending for it as --per-gpu asks."""
    return {"CUDA_VISIBLE_DEVICES": str(k % gpus), STREAM_ENV: str(k), "VRAMLAB_DEVICES": ""}


def run_cell(tree: Path, matrix: str, cell_id: str, out: Path, log: Path, warm: bool,
             env: dict[str, str]) -> tuple[float, float]:
    command = [sys.executable, "-m", "harness", "run-cell", "--matrix", matrix, "--cell", cell_id, "--out",
               str(out), "--log", str(log)] + ["--warm-start"] * warm
    start = time.time()
    subprocess.run(command, cwd=tree, env=env, check=True)
    return start, time.time()


@dataclass(frozen=True)
class Sides:
    """How each side runs a cell: the before tree on PYTHONPATH (with its commit for its results), the after
    side from this checkout."""
    before_tree: Path
    before_env: dict[str, str]
    after_env: dict[str, str]
    matrix: str

    @classmethod
    def of(cls, args: argparse.Namespace) -> Sides:
        tree = args.before_tree.resolve()
        before = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
        if args.before_commit:
            before["VRAMLAB_GIT_COMMIT"] = args.before_commit
        matrix = str(Path(args.matrix).resolve()) if Path(args.matrix).is_file() else args.matrix
        return cls(tree, before, dict(os.environ), matrix)

    def on_stream(self, k: int, gpus: int) -> Sides:
        where = stream_env(k, gpus)
        return Sides(self.before_tree, {**self.before_env, **where}, {**self.after_env, **where}, self.matrix)

    def prime(self, primers: list[str], out: Path) -> None:
        """Each primer once per side, fresh, unrecorded: each tree has its own Unsloth compiled-code folder, and
        compiler caches are the machine's, so later cells on any GPU find them warm."""
        (out / "logs").mkdir(parents=True, exist_ok=True)
        for cell_id in primers:
            for tree, env, side in ((self.before_tree, self.before_env, "before"), (REPO, self.after_env, "after")):
                run_cell(tree, self.matrix, cell_id, out / "primer" / side / f"{cell_id}.json",
                         out / "logs" / f"primer-{side}-{cell_id}.log", False, env)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("matrix")
    p.add_argument("--before-tree", type=Path, required=True, help="the harness as it was before the change")
    p.add_argument("--before-commit", help="its commit, for its results' environment record")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--cell", action="append", help="only these cells (ids or names), in this order; default: all")
    p.add_argument("--primer", action="append", default=[], help="cells run first by each side, unrecorded")
    p.add_argument("--gpus", type=int, default=1, help="GPUs to deal the cells to, in turn, one stream per GPU")
    p.add_argument("--per-gpu", type=int, default=1, help="streams on each GPU (they contend for it)")
    args = p.parse_args(argv)
    if args.gpus < 1 or args.per_gpu < 1:
        p.error("--gpus and --per-gpu must be at least 1")
    cells = {c.cell_id: c for c in expand(args.matrix)}
    by_name = {c.name: c.cell_id for c in cells.values()}
    unknown = [x for x in (args.cell or []) + args.primer if x not in cells and x not in by_name]
    if unknown:
        p.error(f"{args.matrix} has no cell {', '.join(unknown)} (give ids or names)")
    order = [by_name.get(x, x) for x in args.cell] if args.cell else list(cells)
    args.primer = [by_name.get(x, x) for x in args.primer]
    if args.gpus * args.per_gpu > 1:
        run_streams(args, order)
        return
    kinds = warm_start.kinds_for({name_for(c.settings) for c in cells.values() if warm_start.applies_to(c.settings)})
    sides = Sides.of(args)
    out = args.out.resolve()
    os.chdir(REPO)  # where the after side runs: a spare serves only a client in its own folder
    (out / "logs").mkdir(parents=True, exist_ok=True)
    sides.prime(args.primer, out)
    walls = ["variant\tcell_id\tstart\tend"]
    try:
        for cell_id in order:
            start, end = run_cell(sides.before_tree, sides.matrix, cell_id, out / "before" / f"{cell_id}.json",
                                  out / "logs" / f"before-{cell_id}.log", False, sides.before_env)
            walls.append(f"before\t{cell_id}\t{start:.3f}\t{end:.3f}")
            warm_start.wait_until_ready(warm_start.launch_spares(kinds), SPARE_WAIT_SECONDS)
            start, end = run_cell(REPO, sides.matrix, cell_id, out / "after" / f"{cell_id}.json",
                                  out / "logs" / f"after-{cell_id}.log", True, sides.after_env)
            walls.append(f"after\t{cell_id}\t{start:.3f}\t{end:.3f}")
            warm_start.stop_spares()
            (out / "walls.tsv").write_text("\n".join(walls) + "\n")
    finally:
        warm_start.stop_spares()
    (out / "comparison.md").write_text(comparison(load(out)))
    print((out / "comparison.md").read_text())


def run_streams(args: argparse.Namespace, order: list[str]) -> None:
    """The primers dealt to the streams and run side by side, then one process of this script per stream, each
    with every n-th cell and no primer; then their files in one folder."""
    out = args.out.resolve()
    sides = Sides.of(args)
    n = args.gpus * args.per_gpu
    with ThreadPoolExecutor(n) as pool:
        list(pool.map(lambda k: sides.on_stream(k, args.gpus).prime(args.primer[k::n], out / f"stream-{k}"),
                      range(n)))
    streams = []
    for k in range(n):
        cells = order[k::n]
        if not cells:
            continue
        command = [sys.executable, str(Path(__file__).resolve()), str(args.matrix), "--before-tree",
                   str(args.before_tree.resolve()), "--out", str(out / f"stream-{k}")]
        command += ["--before-commit", args.before_commit] * bool(args.before_commit)
        command += [f"--cell={cell_id}" for cell_id in cells]
        streams.append(subprocess.Popen(command, env={**os.environ, **stream_env(k, args.gpus)}))
    failed = [k for k, stream in enumerate(streams) if stream.wait() != 0]
    walls = ["variant\tcell_id\tstart\tend"]
    for folder in sorted(out.glob("stream-*")):
        for side in ("before", "after"):
            (out / side).mkdir(parents=True, exist_ok=True)
            for result in sorted((folder / side).glob("*.json")):
                result.replace(out / side / result.name)
        if (folder / "walls.tsv").is_file():
            walls += (folder / "walls.tsv").read_text().splitlines()[1:]
    (out / "walls.tsv").write_text("\n".join(walls) + "\n")
    if failed:
        raise SystemExit(f"stream(s) {', '.join(map(str, failed))} failed; what they finished is in {out}")
    (out / "comparison.md").write_text(comparison(load(out)))
    print((out / "comparison.md").read_text())


if __name__ == "__main__":
    main()
