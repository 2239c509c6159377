"""Training sequences for a cell, made on the machine without any download, and the data settings.
Why it is so: docs/data.md."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import random
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.path_problems import not_a_regular_file
from harness.core.setting import Setting
from harness.data.workload import DoesNotFit, chat_example, generate_corpus, training_examples
from harness.data.workload.documents import SECTION_SEPARATOR
from harness.data.workload.spelling import Spell, counted
from harness.data.workload.truncation import POLICIES as TRUNCATION_POLICIES
from harness.data.workload.userdata import DataError, looked_at, read_chat_jsonl, read_text_folder

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


DATA_KINDS = ("auto", "stdlib-docs", "zipf", "grant-reports")
USER_DATA_PREFIXES = ("chat:", "text:")


def _data_level(value: Any) -> str | None:
    if value in DATA_KINDS:
        return None
    if isinstance(value, str) and value.startswith(USER_DATA_PREFIXES) and len(value) > 5:
        path = Path(value.split(":", 1)[1]).expanduser()
        chat = value.startswith("chat:")
        kind = not_a_regular_file(path)
        if kind is not None and (chat or kind != "a folder"):
            return (f"{value!r}: {path.absolute()} is {kind}, not a {'file' if chat else 'folder'}; "
                    "chat: takes a .jsonl file of conversations, text: a folder of .txt files")
        if path.exists() and path.is_dir() == chat:
            return (f"{value!r}: {looked_at(path)} is a {'folder, not a file' if chat else 'file, not a folder'}; "
                    "chat: takes a .jsonl file of conversations, text: a folder of .txt files")
        if not (path.is_file() if chat else path.is_dir()):
            return f"{value!r}: no such {'file' if chat else 'folder'} {looked_at(path)}"
        return _user_data_problem(value)
    return (f"{value!r} is not one of {', '.join(DATA_KINDS)}, nor 'chat:<file.jsonl>' or "
            "'text:<folder of .txt files>'")


_CHECKED: dict[tuple[str, tuple[tuple[str, int, int], ...]], str | None] = {}


def _user_data_problem(value: str) -> str | None:
    """The user's data read as training will read it (harness/data/workload/userdata.py), without a model: a file that
    is empty, binary, not UTF-8, not JSON lines of conversations with roles, or a folder without text; once per
    version of the files in a process."""
    path = Path(value.split(":", 1)[1]).expanduser()
    files = [path] if value.startswith("chat:") else sorted(p for p in path.glob("*.txt") if p.is_file())
    try:
        key = (value, tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))
    except OSError:
        key = (value, ())
    if key not in _CHECKED:
        try:
            read_chat_jsonl(path) if value.startswith("chat:") else read_text_folder(path)
            _CHECKED[key] = None
        except DataError as err:
            _CHECKED[key] = str(err)
    return _CHECKED[key]


def input_digest(settings: dict[str, Any]) -> str | None:
    """sha256 of the user's data a cell reads (the chat file, or the folder's .txt files by name and content), so a
    result can tell whether it came from the data that is there now; None for the built-in data, or where the
    data cannot be read."""
    kind = settings.get("data")
    if not isinstance(kind, str) or not kind.startswith(USER_DATA_PREFIXES):
        return None
    path = Path(kind.split(":", 1)[1]).expanduser()
    digest = hashlib.sha256()
    try:
        if kind.startswith("chat:"):
            digest.update(path.read_bytes())
        else:
            for file in sorted(p for p in path.glob("*.txt") if p.is_file()):
                content = file.read_bytes()
                digest.update(f"{file.name}\0{len(content)}\0".encode())
                digest.update(content)
    except OSError:
        return None
    return digest.hexdigest()


def _decay(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        return f"{value!r} is not a number strictly between 0 and 1"
    return None


DATA_SETTINGS: tuple[Setting, ...] = (
    Setting("data", str, "auto",
            "'stdlib-docs' (English docstrings of Python's standard library, tokenized), 'zipf' (token ids "
            "with a Zipf law over the vocabulary), 'grant-reports' (long synthetic documents: each section "
            "trained on its truncated preceding text), 'chat:<file.jsonl>', 'text:<folder>', or 'auto' "
            "(zipf for arch: models, stdlib-docs otherwise)", validate=_data_level, owner="data"),
    Setting("completion_only", str, "off",
            "'on': loss only on the completion (the target section, the assistant turns)",
            levels=("off", "on"), owner="data",
            # packed corpora are token streams with no prompt and no completion to tell apart
            acts_when=lambda settings: not fixed_length(settings), acts_where="data: grant-reports, chat: or text:"),
    Setting("truncation", str, "tail",
            "how a section's preceding text is cut to fit the context: 'none' (all of it, or the cell is "
            "skipped), 'tail' (the most recent tokens), 'exp_decay' (geometric shares per section, newest "
            "first)", levels=TRUNCATION_POLICIES, hashed_at_default=False, owner="data",
            # packed corpora are full sequences and chat drops whole turns: only documents' sections are cut
            acts_when=lambda settings: cut_into_sections(settings), acts_where="data: grant-reports or text:"),
    Setting("truncation_decay", float, 0.5, "exp_decay's ratio between the shares of consecutive sections",
            validate=_decay, hashed_at_default=False, owner="data",
            acts_when=lambda settings: settings.get("truncation") == "exp_decay", acts_where="truncation: exp_decay"),
    # the synthetic workload's size: the other workloads read what they read (stdlib-docs its modules, text: a folder)
    Setting("documents", int, 16, "training documents of the grant-reports workload", minimum=1, maximum=100_000,
            hashed_at_default=False, owner="data", acts_when=lambda settings: settings.get("data") == "grant-reports",
            acts_where="data: grant-reports"),
    Setting("document_words", int, 6000, "mean length in words of a grant-reports document", minimum=200,
            maximum=10_000_000, hashed_at_default=False, owner="data",
            acts_when=lambda settings: settings.get("data") == "grant-reports", acts_where="data: grant-reports"),
)


@dataclass
class TrainingData:
    sequences: list[list[int]]
    kind: str
    fingerprint: str  # sha256 of the token ids, so two cells can be shown to have seen the same data
    detail: dict[str, Any]
    completion_masks: list[list[int]] | None = None  # 1 where the loss counts, when only completions train
    # the document workloads' encoder, which keeps what it read: a sliced vocabulary reads the documents again
    encode: Any = field(default=None, repr=False, compare=False)

    @property
    def mean_length(self) -> int:
        return round(sum(map(len, self.sequences)) / max(len(self.sequences), 1))

    def columns(self) -> dict[str, list[list[int]]]:
        """The columns of the trainer's dataset."""
        columns = {"input_ids": self.sequences}
        if self.completion_masks is not None:
            columns["completion_mask"] = self.completion_masks
        return columns

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "fingerprint": self.fingerprint, "sequences": len(self.sequences), **self.detail}


def fingerprint(sequences: list[list[int]]) -> str:
    if len({len(s) for s in sequences}) <= 1:  # equal lengths: the digest results have recorded since v1
        return hashlib.sha256(np.asarray(sequences, dtype=np.int64).tobytes()).hexdigest()[:16]
    digest = hashlib.sha256()
    for sequence in sequences:
        digest.update(np.asarray([len(sequence), *sequence], dtype=np.int64).tobytes())
    return digest.hexdigest()[:16]


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


def data_kind(settings: dict[str, Any], random_weights: bool | None = None) -> str:
    """The data a cell trains on; 'auto' is zipf for random weights (text means nothing to them)."""
    kind = settings["data"]
    if kind != "auto":
        return kind
    if random_weights is None:
        random_weights = str(settings["model"]).startswith("arch:")
    return "zipf" if random_weights else "stdlib-docs"


def fixed_length(settings: dict[str, Any]) -> bool:
    """Whether every sequence is exactly `context` tokens (packed corpora), so tokens per step are known."""
    return data_kind(settings) in ("stdlib-docs", "zipf")


def cut_into_sections(settings: dict[str, Any]) -> bool:
    """Whether the cell trains on documents whose preceding sections the truncation policy cuts to the context."""
    kind = data_kind(settings)
    return kind == "grant-reports" or kind.startswith("text:")


def sequences_needed(settings: dict[str, Any]) -> int:
    return (settings["warmup_steps"] + settings["steps"]) * settings["grad_accum"] * settings["batch_size"]


def build_for(settings: dict[str, Any], tokenizer: Any, vocab_size: int, random_weights: bool) -> TrainingData:
    """The training data of a cell, as its settings describe it."""
    kind = data_kind(settings, random_weights)
    count = sequences_needed(settings)
    if kind in ("stdlib-docs", "zipf"):
        return build(kind, tokenizer, vocab_size, settings["context"], count, settings["seed"])
    return _from_workload(kind, settings, tokenizer, count)


def spelled(training: TrainingData, settings: dict[str, Any], tokenizer: Any, vocab_size: int,
            spell: Spell) -> TrainingData:
    """The cell's training data made again in a sliced model's own tokens (`spell`), spelled before it is fitted to
    the context: the truncation policy shares out the context in the tokens the model reads, a target or an
    assistant turn is never cut (one that alone is too long is passed over and counted), and a packed corpus is
    packed again. Its detail adds the tokenizer's tokens it holds and how many of them fell outside the kept set."""
    count = sequences_needed(settings)
    if training.kind in ("stdlib-docs", "zipf"):
        return build(training.kind, tokenizer, vocab_size, settings["context"], count, settings["seed"], spell)
    return _from_workload(settings["data"], settings, tokenizer, count, spell, training.encode)


def training_text(training: TrainingData, settings: dict[str, Any], tokenizer: Any) -> list[Sequence[int]]:
    """The tokenizer's ids of the text the cell's sequences are cut from: every section of every training document
    and the separator between them for the document workloads (whatever part of them a seed's sequences hold), the
    sequences themselves for chat and packed data. A model that keeps every token of it trains without spelling."""
    if training.kind not in ("grant-reports", "text"):
        return list(training.sequences)
    encode = training.encode or encoder(tokenizer)
    return [encode(SECTION_SEPARATOR), *(encode(s.text) for d in training_documents(settings) for s in d.sections)]


def build(kind: str, tokenizer: Any, vocab_size: int, context: int, count: int, seed: int,
          spell: Spell | None = None) -> TrainingData:
    if kind == "stdlib-docs":
        eos = tokenizer.eos_token_id
        stream: list[int] = []
        for doc in stdlib_documents():
            stream.extend(tokenizer(doc, add_special_tokens=False)["input_ids"])
            if eos is not None:
                stream.append(eos)
        detail: dict[str, Any] = {"corpus_tokens": len(stream), "documents": len(STDLIB_MODULES)}
    elif kind == "zipf":
        rng = np.random.default_rng(seed)
        ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
        weights = 1.0 / (ranks + 2.7) ** 1.07  # Zipf-Mandelbrot, close to natural-language counts
        ids_by_rank = rng.permutation(vocab_size)
        drawn = rng.choice(vocab_size, size=(count, context), p=weights / weights.sum())
        stream = ids_by_rank[drawn].ravel().tolist()  # packs back into the rows drawn
        detail = {"zipf_exponent": 1.07, "zipf_offset": 2.7}
    else:
        raise ValueError(f"unknown data kind {kind!r}")
    if spell is None:
        sequences = _pack(stream, context, count)
    else:
        stream, marks = spell(stream)
        sequences = _pack(stream, context, count)
        counts = [counted(bytes(m)) for m in _pack(list(marks), context, count)]
        detail |= {"text_tokens": sum(c[0] for c in counts), "outside_tokens": sum(c[1] for c in counts)}
    return TrainingData(sequences, kind, fingerprint(sequences), detail)


# --- the document and chat workloads (harness/data/workload/) -----------------------------------------------

TRAINING_CORPUS_SEED = 0  # the training documents; evaluation draws its held-out documents from other seeds


def encoder(tokenizer: Any):
    """The tokenizer's ids of a text, each text encoded once (as 8-byte arrays): a cell that slices its vocabulary
    reads its documents again, to count their tokens and to spell them."""
    seen: dict[str, array[int]] = {}

    def encode(text: str) -> array[int]:
        if text not in seen:
            seen[text] = array("q", tokenizer(text, add_special_tokens=False)["input_ids"])
        return seen[text]

    return encode


def training_documents(settings: dict[str, Any]) -> list[Any]:
    kind = settings["data"]
    if kind == "grant-reports":
        words = settings["document_words"]
        return generate_corpus(TRAINING_CORPUS_SEED, settings["documents"], words // 2, words * 3 // 2)
    return read_text_folder(Path(kind[len("text:"):]).expanduser())


def _from_workload(kind: str, settings: dict[str, Any], tokenizer: Any, count: int, spell: Spell | None = None,
                   encode: Any = None) -> TrainingData:
    if kind.startswith("chat:"):
        return _chat(Path(kind[len("chat:"):]).expanduser(), settings, tokenizer, count, spell)
    documents = training_documents(settings)
    encode = encode or encoder(tokenizer)
    training = training_examples(documents, encode, settings["context"], settings["truncation"],
                                 settings["truncation_decay"], count, settings["seed"], spell)
    sequences = [list(e.input_ids) for e in training.examples]
    masks = [list(e.completion_mask) for e in training.examples] if settings["completion_only"] == "on" else None
    detail = {"documents": len(documents), "truncation": settings["truncation"],
              "truncation_decay": settings["truncation_decay"], **training.stats.as_dict()}
    return TrainingData(sequences, "grant-reports" if kind == "grant-reports" else "text", fingerprint(sequences),
                        detail, masks, encode=encode if spell is None else None)


def _chat(path: Path, settings: dict[str, Any], tokenizer: Any, count: int, spell: Spell | None = None) -> TrainingData:
    """Conversations in a seeded order, cycling; spelled (a sliced vocabulary), one whose last turn alone is too
    long is passed over for the next, and counted."""
    conversations = read_chat_jsonl(path)
    order = list(range(len(conversations)))
    random.Random(settings["seed"]).shuffle(order)
    examples: list[Any] = []
    skipped: dict[int, int] = {}  # conversation -> the tokens it needs
    turn = 0
    while len(examples) < count:
        chosen = order[turn % len(order)]
        turn += 1
        try:
            examples.append(chat_example(tokenizer, conversations[chosen], settings["context"], spell))
        except DoesNotFit as error:
            if spell is None:
                raise
            skipped[chosen] = error.needed
            if len(skipped) == len(order):
                raise DoesNotFit(min(skipped.values()), settings["context"],
                                 "no conversation fits the context once spelled") from None
    sequences = [list(e.input_ids) for e in examples]
    masks = [list(e.completion_mask) for e in examples] if settings["completion_only"] == "on" else None
    detail: dict[str, Any] = {"conversations": len(conversations), "file": path.name,
                              "cut_to_fit": sum(bool(e.notes) for e in examples)}
    if spell is not None:
        counts = [counted(e.marks) for e in examples]
        detail |= {"targets_skipped": len(skipped), "text_tokens": sum(c[0] for c in counts),
                   "outside_tokens": sum(c[1] for c in counts)}
    return TrainingData(sequences, "chat", fingerprint(sequences), detail, masks)
