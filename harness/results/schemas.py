"""JSON Schemas of the result files, generated from the result model and committed beside it, so that a
researcher can validate results without vramlab (`vramlab schema` rewrites them; a test keeps them current)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.core.atomic_files import write_text_atomic
from harness.core.made_folders import make_folders
from harness.results.freshness_file import FreshnessRecord
from harness.results.model import CellResult, EvaluationResult

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
MODELS = {"cell-result.schema.json": CellResult, "evaluation-result.schema.json": EvaluationResult,
          "freshness.schema.json": FreshnessRecord}


def schema_text(model: type) -> str:
    return json.dumps(model.model_json_schema(mode="serialization"), indent=2, sort_keys=True) + "\n"


def write_schemas(folder: Path | None = None) -> list[Path]:
    folder = folder or SCHEMA_DIR
    make_folders(folder)
    written = []
    for name, model in MODELS.items():
        write_text_atomic(folder / name, schema_text(model))
        written.append(folder / name)
    return written
