"""Training data from the document and chat workloads (harness/workload): the seed's long documents, where
each example's target is one section and its input the preceding text as the truncation policy keeps it
within `context`, a folder of the user's plain-text documents through the same splitter, and the user's
chat conversations in JSONL, formatted with the model's chat template.

Sequences differ in length (at most `context`), so the trainer counts each step's real tokens. With
`completion_only: on` the loss counts only on the target section (the assistant turns); with `off`, on
every token.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from harness.data import TrainingData, fingerprint

TRAINING_CORPUS_SEED = 0  # the training documents; evaluation draws its held-out documents from other seeds


def encoder(tokenizer: Any):
    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    return encode


def training_documents(settings: dict[str, Any]) -> list[Any]:
    from harness.workload import generate_corpus, read_text_folder

    kind = settings["data"]
    if kind == "grant-reports":
        words = settings["document_words"]
        return generate_corpus(TRAINING_CORPUS_SEED, settings["documents"], words // 2, words * 3 // 2)
    return read_text_folder(Path(kind[len("text:"):]).expanduser())


def build(kind: str, settings: dict[str, Any], tokenizer: Any, count: int) -> TrainingData:
    if kind.startswith("chat:"):
        return _chat(Path(kind[len("chat:"):]).expanduser(), settings, tokenizer, count)
    from harness.workload import training_examples

    documents = training_documents(settings)
    training = training_examples(documents, encoder(tokenizer), settings["context"], settings["truncation"],
                                 settings["truncation_decay"], count, settings["seed"])
    sequences = [list(e.input_ids) for e in training.examples]
    masks = [list(e.completion_mask) for e in training.examples] if settings["completion_only"] == "on" else None
    detail = {"documents": len(documents), "truncation": settings["truncation"],
              "truncation_decay": settings["truncation_decay"], **training.stats.as_dict()}
    return TrainingData(sequences, "grant-reports" if kind == "grant-reports" else "text", fingerprint(sequences),
                        detail, masks)


def _chat(path: Path, settings: dict[str, Any], tokenizer: Any, count: int) -> TrainingData:
    from harness.workload import chat_example, read_chat_jsonl

    conversations = read_chat_jsonl(path)
    order = list(range(len(conversations)))
    random.Random(settings["seed"]).shuffle(order)
    examples = [chat_example(tokenizer, conversations[order[i % len(order)]], settings["context"])
                for i in range(count)]
    sequences = [list(e.input_ids) for e in examples]
    masks = [list(e.completion_mask) for e in examples] if settings["completion_only"] == "on" else None
    detail = {"conversations": len(conversations), "file": path.name,
              "cut_to_fit": sum(bool(e.notes) for e in examples)}
    return TrainingData(sequences, "chat", fingerprint(sequences), detail, masks)
