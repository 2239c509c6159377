"""The committed man-page corpus: intact, parallel, split by page, clean prose in the right language."""

from __future__ import annotations

import hashlib
import re
import shutil
import unicodedata
from importlib import resources
from pathlib import Path

import pytest

from harness import corpora
from harness.corpora import LANGUAGES, SPLITS, Document

# Function words that only one of the four languages uses ("de", "la", "en", "que" are shared by
# Spanish and French, so they would not tell those two apart).
FUNCTION_WORDS = {
    "en": {"the", "and", "of", "is", "to"},
    "es": {"el", "los", "las", "y", "del", "por", "una"},
    "fr": {"le", "les", "des", "et", "est", "du", "une"},
    "de": {"der", "die", "und", "das", "ist", "nicht"},
}
# What a rendering or stripping mistake would leave: font escapes, escaped minus, named characters,
# string interpolation, a request at the start of a line, overstrike, terminal escape sequences.
ROFF_LEFTOVERS = re.compile(
    r"\\f[BIRP1-4(\[]|\\-|\\\([a-z]{2}|\\\[[a-z]|\\\*"
    r"|(^|\n)[.'](TH|SH|SS|TP|PP|IP|B|I|BR|IR|RS|RE|nf|fi)\b"
    r"|.\x08|\x1b\["
)


def folder() -> Path:
    return Path(str(resources.files("harness.corpora")))


def function_word_shares(text: str) -> dict[str, float]:
    words = re.findall(r"\w+", text.lower())
    return {lang: sum(word in vocabulary for word in words) / max(len(words), 1)
            for lang, vocabulary in FUNCTION_WORDS.items()}


def test_manifest_checksums_match():
    manifest = corpora.manifest()
    data_files = {f"{lang}.{split}.jsonl" for lang in LANGUAGES for split in SPLITS}
    assert data_files <= set(manifest["files"])
    for name, info in manifest["files"].items():
        data = (folder() / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"], name
        assert len(data) == info["bytes"], name
        if name in data_files:
            assert data.count(b"\n") == info["documents"], name


def test_provenance_is_recorded():
    manifest = corpora.manifest()
    packages = manifest["packages"]
    for name in ("manpages", "manpages-dev", "manpages-es", "manpages-fr", "manpages-de"):
        assert packages[name]["version"], name
    assert {packages[f"manpages-{lang}"]["source_package"] for lang in LANGUAGES[1:]} == {"manpages-l10n"}
    assert manifest["debian_release"].startswith("Debian ")
    assert manifest["command"] == "python -m harness.corpora.build"
    assert "GPL-3.0-or-later" in manifest["license"]
    assert all(page["license"] for page in manifest["pages"].values())
    assert (folder() / "NOTICES.txt").stat().st_size > 0 and (folder() / "LICENSES.txt").stat().st_size > 0


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_language_has_both_splits_with_a_plausible_size(lang, split):
    documents = corpora.documents(lang, split)
    assert all(isinstance(d, Document) and d.lang == lang for d in documents)
    assert len(documents) >= 50
    size = sum(len(d.text.encode("utf-8")) for d in documents)
    assert 100_000 <= size <= 300_000, size
    assert corpora.texts(lang, split) == [d.text for d in documents]


def test_splits_share_no_page():
    manifest = corpora.manifest()
    for lang in LANGUAGES:
        train = {d.id for d in corpora.documents(lang, "train")}
        heldout = {d.id for d in corpora.documents(lang, "heldout")}
        assert not train & heldout
        assert all(manifest["pages"][page]["split"] == "train" for page in train)
        assert all(manifest["pages"][page]["split"] == "heldout" for page in heldout)
    # and no held-out paragraph repeats a training paragraph verbatim
    train_paragraphs = {p for d in corpora.documents("en", "train") for p in d.text.split("\n\n")}
    assert not any(p in train_paragraphs for d in corpora.documents("en", "heldout") for p in d.text.split("\n\n"))


@pytest.mark.parametrize("split", SPLITS)
def test_the_same_pages_and_paragraphs_in_every_language(split):
    by_lang = {lang: corpora.documents(lang, split) for lang in LANGUAGES}
    ids = [d.id for d in by_lang["en"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[\w.+-]+\.[1-8]", page) for page in ids)
    for lang in LANGUAGES[1:]:
        assert [d.id for d in by_lang[lang]] == ids, lang
        for english, translated in zip(by_lang["en"], by_lang[lang], strict=True):
            english_paragraphs, paragraphs = english.text.split("\n\n"), translated.text.split("\n\n")
            assert len(paragraphs) == len(english_paragraphs), (lang, english.id)
            # a translation, not the English paragraph left as it was
            assert not set(paragraphs) & set(english_paragraphs), (lang, english.id)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_texts_are_clean_prose(lang, split):
    text = "\n\n".join(corpora.texts(lang, split))
    assert not ROFF_LEFTOVERS.search(text), ROFF_LEFTOVERS.search(text)
    nonspace = [c for c in text if not c.isspace()]
    assert sum(c.isalpha() for c in nonspace) / len(nonspace) > 0.85
    assert unicodedata.normalize("NFC", text) == text
    assert not re.search(r"[^\S\n]{2,}|[^\S\n]\n|\n[^\S\n]|\n{3,}|[\x00-\x09\x0b-\x1f\x7f\u00ad]", text)
    for paragraph in text.split("\n\n"):
        assert len(paragraph.split()) >= 6, paragraph
    if lang != "en":  # accents survived the rendering
        assert re.search("[áéíóúñ]" if lang == "es" else "[éèàçê]" if lang == "fr" else "[äöüß]", text)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_language_is_the_files_own(lang, split):
    documents = corpora.documents(lang, split)
    shares = function_word_shares(" ".join(d.text for d in documents))
    own = shares.pop(lang)
    assert own > 0.05 and own > 5 * max(shares.values()), (own, shares)
    for document in documents:  # every page, not only the file as a whole
        document_shares = function_word_shares(document.text)
        assert max(document_shares, key=document_shares.get) == lang, document.id


def test_the_check_tells_the_languages_apart():
    english = "The file is opened and the offset of the file is set to zero."
    german = "Die Datei wird geöffnet und der Versatz der Datei ist null, das ist nicht alles."
    assert max(function_word_shares(english).items(), key=lambda kv: kv[1])[0] == "en"
    assert max(function_word_shares(german).items(), key=lambda kv: kv[1])[0] == "de"


def test_a_tampered_copy_fails_the_checksum_naming_the_file(tmp_path):
    for path in folder().iterdir():
        if path.suffix in (".json", ".jsonl"):
            shutil.copyfile(path, tmp_path / path.name)
    assert corpora.documents("fr", "heldout", folder=tmp_path) == corpora.documents("fr", "heldout")
    target = tmp_path / "fr.heldout.jsonl"
    data = bytearray(target.read_bytes())
    index = data.index(b" la ")
    data[index + 1: index + 3] = b"le"
    target.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"fr\.heldout\.jsonl"):
        corpora.documents("fr", "heldout", folder=tmp_path)
    with pytest.raises(ValueError, match=r"fr\.heldout\.jsonl"):
        corpora.texts("fr", "heldout", folder=tmp_path)
    assert corpora.texts("fr", "train", folder=tmp_path)  # the other files still load


def test_unknown_language_or_split_lists_the_known_ones():
    with pytest.raises(ValueError, match="en, es, fr, de"):
        corpora.documents("it", "train")
    with pytest.raises(ValueError, match="train, heldout"):
        corpora.texts("en", "test")


def test_documents_are_frozen():
    document = corpora.documents("en", "train")[0]
    with pytest.raises(AttributeError):
        document.text = ""  # type: ignore[misc]
