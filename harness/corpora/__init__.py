"""A small, fixed, checksummed parallel corpus: prose from Debian's manual pages in en, es, fr and de.

Why it exists: vocabulary slicing keeps the tokens that the kept languages use, counted on real
text (`train`), and the language-modelling evaluation (rolling log-likelihood: bits per byte, word
perplexity) needs held-out real text (`heldout`) in the kept languages and in others. Both must
work offline, and a comparison across languages is only fair when every language says the same
thing: each split holds the same pages, and the same paragraphs of them, in the four languages
(po4a translations by manpages-l10n of the English pages). A page is in one split only.

The files next to this module are committed and never change unless `python -m
harness.corpora.build` is rerun (see build.py for what is kept and why, and MANIFEST.json for the
provenance and licences: the texts are GPL-3+ translations of Linux man-pages and GNU pages, not
under vramlab's licence; NOTICES.txt and LICENSES.txt go with them). Every load checks the file's
sha256 against MANIFEST.json, so a measured number cannot silently come from altered text.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "es", "fr", "de")
SPLITS = ("train", "heldout")
MANIFEST = "MANIFEST.json"


@dataclass(frozen=True)
class Document:
    """One man page in one language: id is "<page>.<section>" (e.g. "open.2"), the same in every language."""

    id: str
    lang: str
    text: str  # prose paragraphs separated by a blank line


def file_name(lang: str, split: str) -> str:
    """The data file of a language and split, after checking that both are known."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: the corpus has {', '.join(LANGUAGES)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: the corpus has {', '.join(SPLITS)}")
    return f"{lang}.{split}.jsonl"


def manifest(folder: Path | None = None) -> dict[str, Any]:
    """MANIFEST.json: per-file sha256, size and document count, and the provenance and licences.

    folder: where the corpus files are; by default this package's own folder (tests give a copy).
    """
    return json.loads(_read(MANIFEST, folder).decode("utf-8"))


def documents(lang: str, split: str, *, folder: Path | None = None) -> list[Document]:
    """The documents of one language and split, in id order, after checking the file's sha256.

    Raises ValueError, naming the file, when its bytes are not the ones the manifest records.
    """
    name = file_name(lang, split)
    expected = manifest(folder)["files"].get(name)
    if expected is None:
        raise ValueError(f"{name} is not listed in {MANIFEST}")
    data = _read(name, folder)
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected["sha256"]:
        raise ValueError(f"{name}: sha256 {digest} does not match {MANIFEST} ({expected['sha256']}); "
                         "the file was changed: restore it or rebuild with `python -m harness.corpora.build`")
    out = []
    for line in data.decode("utf-8").splitlines():
        record = json.loads(line)
        out.append(Document(id=record["id"], lang=record["lang"], text=record["text"]))
    return out


def texts(lang: str, split: str, *, folder: Path | None = None) -> list[str]:
    """The texts of `documents(lang, split)`, for code that needs only the strings."""
    return [document.text for document in documents(lang, split, folder=folder)]


def _read(name: str, folder: Path | None) -> bytes:
    if folder is not None:
        return (Path(folder) / name).read_bytes()
    return resources.files(__name__).joinpath(name).read_bytes()
