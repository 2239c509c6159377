"""Small, fixed, checksummed parallel corpora: the same prose in several languages, from Debian packages.
Why it is so: docs/corpora.md."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

CORPORA: dict[str, tuple[str, ...]] = {  # corpus -> its languages
    "manpages": ("en", "es", "fr", "de"),
    "help": ("en", "es", "ca", "fr", "de"),
}
DEFAULT_CORPUS = "manpages"
LANGUAGES = CORPORA[DEFAULT_CORPUS]  # the default corpus's languages
SPLITS = ("train", "heldout")
MANIFEST = "MANIFEST.json"  # the default corpus's manifest
_PREFIX = {"manpages": "", "help": "help."}  # of every file of the corpus
FOLDER = Path(__file__).resolve().parent  # the corpus files, where tools/corpora/ builds them


@dataclass(frozen=True)
class Document:
    """One page in one language, its id the same in every language: "<page>.<section>" for a man page
    (e.g. "open.2"), the HTML file's name without .html for the GIMP manual (e.g. "gimp-concepts-undo")."""

    id: str
    lang: str
    text: str  # prose paragraphs separated by a blank line


def languages(corpus: str = DEFAULT_CORPUS) -> tuple[str, ...]:
    """The languages of a corpus, after checking that the corpus is known."""
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}: the corpora are {', '.join(CORPORA)}")
    return CORPORA[corpus]


def manifest_name(corpus: str = DEFAULT_CORPUS) -> str:
    """The manifest file of a corpus: MANIFEST.json for the man pages, help.MANIFEST.json for the GIMP manual."""
    languages(corpus)
    return f"{_PREFIX[corpus]}{MANIFEST}"


def file_name(lang: str, split: str, corpus: str = DEFAULT_CORPUS) -> str:
    """The data file of a language and split of a corpus, after checking that all three are known."""
    known = languages(corpus)
    if lang not in known:
        raise ValueError(f"unknown language {lang!r}: the {corpus} corpus has {', '.join(known)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: the corpus has {', '.join(SPLITS)}")
    return f"{_PREFIX[corpus]}{lang}.{split}.jsonl"


def manifest(folder: Path | None = None, *, corpus: str = DEFAULT_CORPUS) -> dict[str, Any]:
    """A corpus's manifest: per-file sha256, size and document count, and the provenance and licences.

    folder: where the corpus files are; by default this package's own folder (tests give a copy).
    """
    return json.loads(_read(manifest_name(corpus), folder).decode("utf-8"))


def documents(lang: str, split: str, corpus: str = DEFAULT_CORPUS, *, folder: Path | None = None) -> list[Document]:
    """The documents of one language and split of a corpus, in id order, after checking the file's sha256.

    Raises ValueError, naming the file, when its bytes are not the ones the corpus's manifest records.
    """
    name = file_name(lang, split, corpus=corpus)
    manifest_file = manifest_name(corpus)
    expected = manifest(folder, corpus=corpus)["files"].get(name)
    if expected is None:
        raise ValueError(f"{name} is not listed in {manifest_file}")
    data = _read(name, folder)
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected["sha256"]:
        builder = "build_manpages" if corpus == "manpages" else "build_help"
        raise ValueError(f"{name}: sha256 {digest} does not match {manifest_file} ({expected['sha256']}); "
                         f"the file was changed: restore it or rebuild with `python -m tools.corpora.{builder}`")
    out = []
    for line in data.decode("utf-8").splitlines():
        record = json.loads(line)
        out.append(Document(id=record["id"], lang=record["lang"], text=record["text"]))
    return out


def texts(lang: str, split: str, corpus: str = DEFAULT_CORPUS, *, folder: Path | None = None) -> list[str]:
    """The texts of `documents(lang, split, corpus=corpus)`, for code that needs only the strings."""
    return [document.text for document in documents(lang, split, corpus=corpus, folder=folder)]


def _read(name: str, folder: Path | None) -> bytes:
    if folder is not None:
        return (Path(folder) / name).read_bytes()
    return resources.files(__name__).joinpath(name).read_bytes()
