"""The untrained model's scores (the adapter disabled), shared by sibling cells through a cache file: cells
evaluated at once on one device score it once, the others wait for the file and read it."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

from harness.evaluation.stage import Session
from harness.results import Score


class _Model:
    @contextlib.contextmanager
    def disable_adapter(self):
        yield


def _session(tmp_path, calls: list[str]) -> Session:
    session = Session.__new__(Session)  # only what _baseline reads: no model is loaded
    session.results_dir = tmp_path
    session.cell = SimpleNamespace(matrix="m")
    session.model = _Model()
    session._baseline_key = lambda config: "k" * 16

    def scores(config, item_fields):
        calls.append(threading.current_thread().name)
        time.sleep(0.3)  # long enough for the sibling to ask for the same key meanwhile
        return [Score(metric="acc", value=0.5, n=1, higher_is_better=True)], [{"item": 1}]

    session._scores = scores
    return session


def test_sibling_cells_score_the_untrained_model_once(tmp_path):
    calls: list[str] = []
    got: dict[str, object] = {}

    def evaluate(name: str) -> None:
        got[name] = _session(tmp_path, calls)._baseline({"task": "t"}, (("item",), ()))

    threads = [threading.Thread(target=evaluate, args=(f"cell{i}",), name=f"cell{i}") for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len({repr(v) for v in got.values()}) == 1
    assert (tmp_path / "m" / "evaluations" / "baselines" / f"{'k' * 16}.json").is_file()


def test_a_task_is_keyed_alike_in_every_process():
    # sibling cells are separate processes: a key that differs between them scores the untrained model again
    code = ("from pathlib import Path; from harness.evaluation.stage import task_identity; "
            "from harness.tasks.catalog import PROJECT_TASKS; "
            "print(task_identity(PROJECT_TASKS['workload_recall'].config(Path('recall.jsonl'))))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(runs) == 1
    assert "process_recall" in runs.pop()
