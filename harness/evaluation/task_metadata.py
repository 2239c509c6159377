"""What lm-eval's tasks are told about the cell beside its model: `simple_evaluate(metadata=...)` reaches every
task's config, and the tasks that make their own data read it there. lm-eval's RULER tasks (niah_single_1, ...)
build their prompts at each length of `max_seq_lengths` (4k to 128k unless told), sized with the tokenizer named
by `tokenizer`; told nothing, they would build prompts the cell's context cannot hold and ask for a tokenizer by a
hub name. Given the cell's context and its own tokenizer, they run at what the cell trained at."""

from __future__ import annotations

from typing import Any


def task_metadata(context: int, tokenizer: Any) -> dict[str, Any]:
    """The metadata of a cell's evaluation: its context as the one length, its tokenizer's folder (or hub id)."""
    return {"max_seq_lengths": [context], "tokenizer": str(tokenizer.name_or_path)}
