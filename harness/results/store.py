"""The result file of a cell: the public contract that researchers parse.

results/<matrix>/<cell_id>.json holds, at the top level:
  schema_version, cell_id, name, matrix, status (ok | oom | skipped | error), reason,
  config (every setting), environment, metrics, quality (null until evaluated), plus
  started_at / finished_at and detail fields. Units are raw: bytes, seconds, tokens.

It is written to a temporary file in the same folder and renamed: a file under its final name is
always complete, so a cell killed half-way leaves nothing that looks finished.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.cells import Cell

SCHEMA_VERSION = 1
STATUSES = ("ok", "oom", "skipped", "error")
REQUIRED_METRICS = ("peak_allocated_bytes", "peak_reserved_bytes", "peak_device_bytes", "tokens_per_second",
                    "step_seconds", "loss", "load_seconds")


def empty_metrics() -> dict[str, Any]:
    return {name: ([] if name in ("step_seconds", "loss") else None) for name in REQUIRED_METRICS}


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def new_result(cell: Cell) -> dict[str, Any]:
    """The skeleton of a cell's result, before it runs: every contract key present."""
    return {
        "schema_version": SCHEMA_VERSION, "cell_id": cell.cell_id, "name": cell.name,
        "matrix": cell.matrix, "status": None, "reason": None, "config": cell.settings, "varied": cell.varied,
        "environment": None, "metrics": empty_metrics(), "quality": None,
        "started_at": now(), "finished_at": None,
    }


def pending_result(cell: Cell) -> dict[str, Any]:
    """Stands in a partial report for a cell that has not run yet; never written as a result file."""
    result = new_result(cell)
    result.update(status="pending", reason="not run yet: no result file", environment={}, started_at=None)
    return result


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN; a diverged loss is recorded as null
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def write_atomic(path: Path, result: dict[str, Any]) -> None:
    validate(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(_jsonable(result), handle, indent=2, sort_keys=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def validate(result: dict[str, Any]) -> None:
    for key in ("schema_version", "cell_id", "name", "status", "reason", "config", "environment", "metrics",
                "quality"):
        if key not in result:
            raise ValueError(f"result lacks {key!r}")
    if result["status"] not in STATUSES:
        raise ValueError(f"status {result['status']!r} is not one of {STATUSES}")
    missing = [m for m in REQUIRED_METRICS if m not in result["metrics"]]
    if missing:
        raise ValueError(f"result metrics lack {missing}")


def read(path: Path) -> dict[str, Any]:
    result = json.loads(Path(path).read_text())
    validate(result)
    return result


def result_path(results_dir: Path, matrix: str, cell_id: str) -> Path:
    return Path(results_dir) / matrix / f"{cell_id}.json"
