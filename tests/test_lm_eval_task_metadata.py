"""lm-eval's own RULER tasks run at a cell's context: the metadata the evaluate stage hands `simple_evaluate` is
what lm-eval's TaskManager passes to those tasks' data builders."""

from __future__ import annotations

import pytest

from harness.evaluation.task_metadata import task_metadata
from harness.stack.models.presets import PRESETS
from harness.stack.models.sources import make_placeholder_tokenizer


@pytest.mark.slow
def test_lm_eval_ruler_tasks_build_their_prompts_at_the_cells_context(tmp_path):
    pytest.importorskip("wonderwords", reason="lm-eval's RULER tasks need lm-eval[ruler] (the test extra has it)")
    from lm_eval.tasks import TaskManager
    from transformers import AutoTokenizer

    make_placeholder_tokenizer(1000, PRESETS["tiny-llama"]).save_pretrained(tmp_path / "tokenizer")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tokenizer")
    metadata = task_metadata(384, tokenizer)
    assert metadata == {"max_seq_lengths": [384], "tokenizer": str(tmp_path / "tokenizer")}

    # what simple_evaluate does with its metadata when it is given no task manager
    tasks = TaskManager(metadata=metadata).load(["niah_single_1"])["tasks"]
    (task,) = tasks.values() if isinstance(tasks, dict) else tasks
    docs = list(task.test_docs())
    assert docs and {doc["max_length"] for doc in docs} == {384}  # one length, the cell's (not 4k to 128k)
    # the prompt leaves room for the answer lm-eval generates (max_gen_toks 128 in niah_single_1.yaml)
    longest = max(len(tokenizer(doc["input"])["input_ids"]) for doc in docs)
    assert 384 // 2 < longest <= 384 - 128
