"""harness/run/gc_freeze.py: after a GPU cell's imports, what they made is frozen out of the collector's walks; the
count is recorded, the variable turns it off; and the allocator reading the sampler takes 100 times a second
is the one torch.cuda.memory_reserved() gives. Spares are kept per GPU (harness/process/warm_start.py's key)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness.process import warm_start
from harness.run.trackers.memory import reserved_bytes
from tests.conftest import REPO

PROBE = """
import gc, json
from harness.run import gc_freeze
made = [[i] for i in range(1000)]  # reachable: survives the collection and is frozen
count = gc_freeze.freeze_imports()
print(json.dumps({"count": count, "recorded": gc_freeze.frozen(), "gc_count": gc.get_freeze_count()}))
"""


def _probe(**env: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_imports_are_frozen_and_the_count_recorded():
    seen = _probe()
    assert seen["count"] == seen["recorded"] == seen["gc_count"] > 1000


def test_the_variable_turns_it_off():
    assert _probe(VRAMLAB_GC_FREEZE="0") == {"count": 0, "recorded": None, "gc_count": 0}


class _Cuda:
    def __init__(self, stats: dict) -> None:
        self.stats = stats

    def memory_stats_as_nested_dict(self) -> dict:
        return self.stats


class _Torch:
    def __init__(self, stats: dict) -> None:
        self.cuda = _Cuda(stats)


def test_reserved_bytes_is_the_allocators_current_reservation():
    stats = {"reserved_bytes": {"all": {"current": 3 << 30, "peak": 5 << 30}, "large_pool": {"current": 1}}}
    assert reserved_bytes(_Torch(stats)) == 3 << 30
    assert reserved_bytes(_Torch({})) == 0  # CUDA not initialized yet: memory_reserved() says 0 too


def test_spares_are_kept_per_gpu_and_per_cell_bookkeeping_is_ignored():
    base = {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0"}
    assert warm_start.key(base, "/w") != warm_start.key({**base, "CUDA_VISIBLE_DEVICES": "1"}, "/w")
    assert warm_start.key(base, "/w") == warm_start.key({**base, "VRAMLAB_STATUS_FILE": "/x", "SHLVL": "3"}, "/w")
