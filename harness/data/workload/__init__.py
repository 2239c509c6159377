"""The long-document training workload: seeded synthetic grant reports, the truncation of the context
before a target section, training and evaluation examples, and readers for the user's own data.

documents (generate) -> sections (split text) -> truncation (choose context) -> examples (token ids, eval
strings); userdata reads JSONL conversations and .txt folders; chat masks a conversation's loss.
"""

from harness.data.workload.chat import Example, TemplateError, chat_example
from harness.data.workload.documents import (
    Document,
    Fact,
    Section,
    generate_corpus,
    generate_document,
    words_for_tokens,
)
from harness.data.workload.examples import (
    DEFAULT_TARGETS,
    TrainingSet,
    TrainingStats,
    recall_items,
    section_items,
    target_sections,
    training_examples,
)
from harness.data.workload.sections import split_sections
from harness.data.workload.truncation import POLICIES, DoesNotFit, allocate, describe, truncate, truncate_text
from harness.data.workload.userdata import DataError, read_chat_jsonl, read_text_folder

__all__ = [
    "DEFAULT_TARGETS",
    "POLICIES",
    "DataError",
    "Document",
    "DoesNotFit",
    "Example",
    "Fact",
    "Section",
    "TemplateError",
    "TrainingSet",
    "TrainingStats",
    "allocate",
    "chat_example",
    "describe",
    "generate_corpus",
    "generate_document",
    "read_chat_jsonl",
    "read_text_folder",
    "recall_items",
    "section_items",
    "split_sections",
    "target_sections",
    "training_examples",
    "truncate",
    "truncate_text",
    "words_for_tokens",
]
