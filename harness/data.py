"""Training sequences for a cell, made on the machine without any download.

- `stdlib-docs`: real English prose, the docstrings of a fixed list of Python standard-library
  modules, one document per module, tokenized with the model's own tokenizer and packed into
  sequences of exactly `context` tokens (documents separated by EOS). Every machine has it; its
  fingerprint is recorded because it follows the Python version.
- `zipf`: token ids drawn with a Zipf law over the vocabulary, ranks shuffled over ids by the seed.
  For models with random weights, where text means nothing but the frequency skew still matters to
  vocabulary slicing.

Every sequence is full: tokens/s counts real tokens, with no padding.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

STDLIB_MODULES = (
    "argparse", "asyncio", "base64", "bisect", "calendar", "collections", "concurrent.futures",
    "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal", "difflib",
    "email.message", "enum", "fractions", "functools", "gzip", "hashlib", "heapq", "http.client",
    "http.server", "inspect", "io", "ipaddress", "itertools", "json", "logging", "mailbox", "math",
    "multiprocessing", "operator", "os", "pathlib", "pickle", "pprint", "queue", "random", "re",
    "sched", "secrets", "selectors", "shlex", "shutil", "smtplib", "socket", "sqlite3", "statistics",
    "string", "struct", "subprocess", "tarfile", "tempfile", "textwrap", "threading", "timeit",
    "tokenize", "typing", "unittest", "urllib.parse", "urllib.request", "uuid", "warnings", "weakref",
    "zipfile",
)


@dataclass
class TrainingData:
    sequences: list[list[int]]
    kind: str
    fingerprint: str  # sha256 of the token ids, so two cells can be shown to have seen the same data
    detail: dict[str, Any]


def stdlib_documents() -> list[str]:
    documents = []
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        parts = [f"Module {name}.\n\n{inspect.getdoc(module) or ''}"]
        for attr in sorted(vars(module)):
            obj = getattr(module, attr)
            if attr.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            doc = inspect.getdoc(obj)
            if doc:
                parts.append(f"{attr}\n{doc}")
            if inspect.isclass(obj):
                for meth_name, meth in sorted(vars(obj).items()):
                    meth_doc = None if meth_name.startswith("_") else inspect.getdoc(meth)
                    if meth_doc and callable(meth):
                        parts.append(f"{attr}.{meth_name}\n{meth_doc}")
        documents.append("\n\n".join(parts))
    return documents


def _pack(stream: list[int], context: int, count: int) -> list[list[int]]:
    if len(stream) < context:
        stream = stream * (context // max(len(stream), 1) + 1)
    sequences, start = [], 0
    for _ in range(count):
        if start + context > len(stream):
            start = 0  # the corpus is read again from the top rather than padded
        sequences.append(stream[start:start + context])
        start += context
    return sequences


def build(kind: str, tokenizer: Any, vocab_size: int, context: int, count: int, seed: int) -> TrainingData:
    if kind == "stdlib-docs":
        eos = tokenizer.eos_token_id
        stream: list[int] = []
        for doc in stdlib_documents():
            stream.extend(tokenizer(doc, add_special_tokens=False)["input_ids"])
            if eos is not None:
                stream.append(eos)
        sequences = _pack(stream, context, count)
        detail = {"corpus_tokens": len(stream), "documents": len(STDLIB_MODULES)}
    elif kind == "zipf":
        rng = np.random.default_rng(seed)
        ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
        weights = 1.0 / (ranks + 2.7) ** 1.07  # Zipf-Mandelbrot, close to natural-language counts
        ids_by_rank = rng.permutation(vocab_size)
        drawn = rng.choice(vocab_size, size=(count, context), p=weights / weights.sum())
        sequences = ids_by_rank[drawn].tolist()
        detail = {"zipf_exponent": 1.07, "zipf_offset": 2.7}
    else:
        raise ValueError(f"unknown data kind {kind!r}")
    digest = hashlib.sha256(np.asarray(sequences, dtype=np.int64).tobytes()).hexdigest()[:16]
    return TrainingData(sequences, kind, digest, detail)
