"""Result files: the typed model (schema, statuses, columns) and the store (atomic writes, strict reads)."""

from harness.results.model import (
    CELL_SCHEMA_VERSION,
    STEP_COLUMNS,
    CellResult,
    EvaluationResult,
    EvaluationStatus,
    Metrics,
    Score,
    Status,
    new_result,
    now,
)
from harness.results.store import (
    ResultFileError,
    adapter_folder,
    check,
    evaluation_path,
    read,
    read_evaluation,
    result_path,
    set_aside,
    write_atomic,
)

__all__ = ["CELL_SCHEMA_VERSION", "STEP_COLUMNS", "CellResult", "EvaluationResult", "EvaluationStatus", "Metrics",
           "ResultFileError", "Score", "Status", "adapter_folder", "check", "evaluation_path", "new_result", "now",
           "read", "read_evaluation", "result_path", "set_aside", "write_atomic"]
