"""The committed corpora (Debian manual pages; the GIMP User Manual, with Catalan): intact, parallel, split
by page, clean prose in the right language; and how a vocabulary source names them."""

from __future__ import annotations

import hashlib
import re
import shutil
import unicodedata
from importlib import resources
from pathlib import Path

import pytest
import yaml

from harness.data import corpora
from harness.data.corpora import LANGUAGES, SPLITS, Document

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
    return Path(str(resources.files("harness.data.corpora")))


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


# ---------------------------------------------------------------------------------------------------------
# The man-page corpus stays byte for byte what committed results were measured on: its manifest holds the
# sha256 of every file, and here is the manifest's own.
MANPAGES_MANIFEST_SHA256 = "502f9222f303d171b8d5e417d0b270d0df725b78172394e880cf4aa2f07284e5"


def test_the_man_page_corpus_is_unchanged():
    data = (folder() / "MANIFEST.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == MANPAGES_MANIFEST_SHA256
    assert corpora.LANGUAGES == corpora.languages() == corpora.languages("manpages") == ("en", "es", "fr", "de")
    assert corpora.file_name("en", "train") == "en.train.jsonl" == corpora.file_name("en", "train", "manpages")
    assert corpora.documents("de", "heldout") == corpora.documents("de", "heldout", corpus="manpages")


# ---------------------------------------------------------------------------------------------------------
# The GIMP User Manual corpus ("help"): en, es, ca, fr, de.
HELP = "help"
HELP_LANGUAGES = ("en", "es", "ca", "fr", "de")
# Function words of one of the five languages only (Catalan shares "el", "la", "de", "del", "una", "les"
# with Spanish or French, Spanish "le" and "una" with French or Catalan, so those are left out).
HELP_FUNCTION_WORDS = {
    "en": {"the", "and", "of", "is", "to"},
    "es": {"los", "las", "y", "por", "con", "pero", "puede"},
    "ca": {"els", "amb", "per", "dels", "és", "més", "aquesta"},
    "fr": {"le", "et", "est", "du", "une", "vous", "avec"},
    "de": {"der", "die", "und", "das", "ist", "nicht"},
}


def help_shares(text: str) -> dict[str, float]:
    words = re.findall(r"\w+", text.lower())
    return {lang: sum(word in vocabulary for word in words) / max(len(words), 1)
            for lang, vocabulary in HELP_FUNCTION_WORDS.items()}


def paragraphs(lang: str, split: str) -> list[list[str]]:
    return [d.text.split("\n\n") for d in corpora.documents(lang, split, corpus=HELP)]


def test_help_manifest_checksums_match():
    manifest = corpora.manifest(corpus=HELP)
    assert manifest["corpus"] == HELP and tuple(manifest["languages"]) == HELP_LANGUAGES == corpora.languages(HELP)
    data_files = {f"help.{lang}.{split}.jsonl" for lang in HELP_LANGUAGES for split in SPLITS}
    assert set(manifest["files"]) == data_files | {"help.NOTICES.txt", "help.LICENSES.txt"}
    for name, info in manifest["files"].items():
        data = (folder() / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"], name
        assert len(data) == info["bytes"], name
        if name in data_files:
            assert data.count(b"\n") == info["documents"], name
            assert data.count(b"\\n\\n") + info["documents"] == info["paragraphs"], name
    # its files are not in the man pages' manifest, nor theirs in its
    assert not set(corpora.manifest()["files"]) & set(manifest["files"])


def test_help_provenance_and_licence_are_recorded():
    manifest = corpora.manifest(corpus=HELP)
    packages = manifest["packages"]
    assert set(packages) == {f"gimp-help-{lang}" for lang in HELP_LANGUAGES} | {"gimp-help-common"}
    for name, info in packages.items():
        assert (info["version"], info["source_package"]) == ("2.10.34-2", "gimp-help"), name
        assert info["license"] == "GFDL-1.2-or-later", name
    assert manifest["debian_release"] == "Debian 12 (bookworm)"
    assert manifest["command"] == "python -m harness.corpora.build_help"
    assert "GFDL-1.2-or-later" in manifest["license"] and "no Invariant Sections" in manifest["license"]
    notices = (folder() / "help.NOTICES.txt").read_text(encoding="utf-8")
    for needed in ("GIMP Documentation Team", "Free Documentation License", "== History", "Softcatalà",
                   "L'equip de documentació del GIMP"):
        assert needed in notices, needed
    licence = (folder() / "help.LICENSES.txt").read_text(encoding="utf-8")
    assert "GNU Free Documentation License" in licence and "Version 1.2, November 2002" in licence


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lang", HELP_LANGUAGES)
def test_help_has_every_language_and_split_at_a_size_like_the_man_pages(lang, split):
    documents = corpora.documents(lang, split, corpus=HELP)
    assert all(isinstance(d, Document) and d.lang == lang for d in documents)
    assert len(documents) >= 50
    size = sum(len(d.text.encode("utf-8")) for d in documents)
    assert 100_000 <= size <= 150_000, size
    assert corpora.texts(lang, split, HELP) == [d.text for d in documents]


@pytest.mark.parametrize("split", SPLITS)
def test_help_has_the_same_pages_and_paragraphs_in_every_language(split):
    by_lang = {lang: corpora.documents(lang, split, corpus=HELP) for lang in HELP_LANGUAGES}
    ids = [d.id for d in by_lang["en"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-z0-9][\w.-]*", page) for page in ids)
    for lang in HELP_LANGUAGES[1:]:
        assert [d.id for d in by_lang[lang]] == ids, lang
        for english, translated in zip(by_lang["en"], by_lang[lang], strict=True):
            english_paragraphs, own = english.text.split("\n\n"), translated.text.split("\n\n")
            assert len(own) == len(english_paragraphs), (lang, english.id)
            for a, b in zip(english_paragraphs, own, strict=True):  # the same paragraph: a comparable length
                assert 0.5 <= len(b) / len(a) <= 2.0, (lang, english.id, a, b)


def test_help_splits_share_no_page_and_no_paragraph():
    manifest = corpora.manifest(corpus=HELP)
    for lang in HELP_LANGUAGES:
        train = {d.id for d in corpora.documents(lang, "train", corpus=HELP)}
        heldout = {d.id for d in corpora.documents(lang, "heldout", corpus=HELP)}
        assert train and heldout and not train & heldout
        assert {page for page, meta in manifest["pages"].items() if meta["split"] == "train"} == train
        assert {page for page, meta in manifest["pages"].items() if meta["split"] == "heldout"} == heldout
        train_paragraphs = {p for document in paragraphs(lang, "train") for p in document}
        assert not any(p in train_paragraphs for document in paragraphs(lang, "heldout") for p in document), lang
    # nor with the man-page corpus
    man_pages = {p for split in SPLITS for d in corpora.documents("en", split) for p in d.text.split("\n\n")}
    assert not any(p in man_pages for split in SPLITS for document in paragraphs("en", split) for p in document)


@pytest.mark.parametrize("split", SPLITS)
def test_catalan_is_catalan_not_english_or_spanish(split):
    english, spanish, catalan = paragraphs("en", split), paragraphs("es", split), paragraphs("ca", split)
    for en_doc, es_doc, ca_doc in zip(english, spanish, catalan, strict=True):
        for en, es, ca in zip(en_doc, es_doc, ca_doc, strict=True):
            assert ca not in (en, es), ca
            # most of its words are not words of the English paragraph (names and terms like GIMP are)
            ca_words, en_words = re.findall(r"[^\W\d_]+", ca.lower()), set(re.findall(r"[^\W\d_]+", en.lower()))
            assert sum(word in en_words for word in ca_words) <= 0.5 * len(ca_words), (en, ca)
            shares = help_shares(ca)
            assert shares["en"] <= 0.1, ca  # "to" is Catalan too (tone)
    for document in corpora.documents("ca", split, corpus=HELP):
        shares = help_shares(document.text)
        assert max(shares, key=shares.get) == "ca", (document.id, shares)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lang", HELP_LANGUAGES)
def test_help_texts_are_clean_prose_in_their_own_language(lang, split):
    documents = corpora.documents(lang, split, corpus=HELP)
    text = "\n\n".join(d.text for d in documents)
    assert not re.search(r"<[a-zA-Z/]|&[a-z]+;|&#\d+;|\[\d+\]", text)  # no markup, entity or footnote mark
    nonspace = [c for c in text if not c.isspace()]
    assert sum(c.isalpha() for c in nonspace) / len(nonspace) > 0.85
    assert unicodedata.normalize("NFC", text) == text
    assert not re.search(r"[^\S\n]{2,}|[^\S\n]\n|\n[^\S\n]|\n{3,}|[\x00-\x09\x0b-\x1f\x7f\u00ad]", text)
    for paragraph in text.split("\n\n"):
        assert len(paragraph.split()) >= 6, paragraph
    accents = {"en": None, "es": "[áéíóúñ]", "ca": "l·l|[àèéíòóúç]", "fr": "[éèàçê]", "de": "[äöüß]"}[lang]
    if accents:
        assert re.search(accents, text)
    shares = help_shares(text)
    own = shares.pop(lang)
    assert own > 0.04 and own > 5 * max(shares.values()), (own, shares)
    for document in documents:
        document_shares = help_shares(document.text)
        assert max(document_shares, key=document_shares.get) == lang, document.id


def test_a_tampered_help_file_fails_its_checksum_and_the_man_pages_still_load(tmp_path):
    for path in folder().iterdir():
        if path.suffix in (".json", ".jsonl"):
            shutil.copyfile(path, tmp_path / path.name)
    assert corpora.documents("ca", "heldout", HELP, folder=tmp_path) == corpora.documents("ca", "heldout", HELP)
    target = tmp_path / "help.ca.heldout.jsonl"
    data = bytearray(target.read_bytes())
    index = data.index(b" amb ")
    data[index + 1: index + 4] = b"con"
    target.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"help\.ca\.heldout\.jsonl.*help\.MANIFEST\.json.*build_help"):
        corpora.texts("ca", "heldout", HELP, folder=tmp_path)
    assert corpora.texts("ca", "train", HELP, folder=tmp_path)
    assert corpora.texts("fr", "heldout", folder=tmp_path)


def test_unknown_corpus_or_language_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown corpus 'gimp': the corpora are manpages, help"):
        corpora.documents("en", "train", "gimp")
    with pytest.raises(ValueError, match="the help corpus has en, es, ca, fr, de"):
        corpora.texts("it", "train", corpus=HELP)
    with pytest.raises(ValueError, match="the manpages corpus has en, es, fr, de"):
        corpora.texts("ca", "train")  # Catalan is only in the GIMP manual


# ---------------------------------------------------------------------------------------------------------
# vocabulary_source: "corpus:<languages>" (the man pages, as before) or "corpus:<corpus>:<languages>"

@pytest.mark.parametrize(("value", "expected"), [
    ("corpus:en,de", ("manpages", ["en", "de"])),
    ("corpus:en", ("manpages", ["en"])),
    ("corpus:manpages:en,de", ("manpages", ["en", "de"])),
    ("corpus:help:es,ca,en", ("help", ["es", "ca", "en"])),
])
def test_a_vocabulary_source_names_a_corpus_and_its_languages(value, expected):
    from harness.stack.techniques.vocabulary import _source_level, corpus_source

    assert corpus_source(value) == expected
    assert _source_level(value) is None


@pytest.mark.parametrize(("value", "expected"), [
    ("corpus:gimp:es,ca", "unknown corpus 'gimp'; known: manpages (en, es, fr, de); help (en, es, ca, fr, de)"),
    ("corpus:ca,en", "unknown language(s) ca in corpus 'manpages'; known: en, es, fr, de"),
    ("corpus:help:es,it", "unknown language(s) it in corpus 'help'; known: en, es, ca, fr, de"),
    ("corpus:help:", "unknown language(s) (none given) in corpus 'help'"),
    ("corpus:help", "to name the help corpus, write 'corpus:help:<languages>'"),
    ("help:es,ca", "nor 'corpus:<corpus>:<languages>' (e.g. 'corpus:help:es,ca,en')"),
    # a corpus and the training data: corpus:<corpus>:<languages>+training
    ("corpus:help:es,ca,en+train", "only '+training', once and at the end, may follow the languages"),
    ("corpus:help:es+training+training", "only '+training', once and at the end"),
    ("corpus:help:es+ca", "only '+training', once and at the end"),
    ("training+corpus:help:es", "nor a corpus form followed by '+training'"),
    ("corpus:help:es,it+training", "unknown language(s) it in corpus 'help'"),
    ("corpus:help:+training", "unknown language(s) (none given) in corpus 'help'"),
])
def test_a_bad_vocabulary_source_is_one_clear_line(value, expected):
    from harness.spec.matrix import MatrixError, expand_spec

    text = f"fixed: {{model: 'arch:tiny-llama', vocabulary_source: '{value}'}}\naxes: {{vocabulary: [native, 1024]}}"
    with pytest.raises(MatrixError) as err:
        expand_spec("m", yaml.safe_load(text), source="ablations/m.yaml")
    assert "\n" not in str(err.value) and expected in str(err.value), str(err.value)


def test_the_old_syntax_keeps_the_committed_cells_and_a_corpus_name_makes_new_ones():
    from harness.spec.matrix import expand, expand_spec
    from harness.stack.techniques.vocabulary import corpus_source
    from tests.conftest import REPO

    committed = [c for c in expand("quality-smollm2") if c.settings["vocabulary_source"].startswith("corpus:")]
    assert committed
    for cell in committed:  # the same ids as the committed results, counted on the man pages as then
        assert (REPO / "results" / "quality-smollm2" / f"{cell.cell_id}.json").is_file(), cell.name
        assert corpus_source(cell.settings["vocabulary_source"]) == ("manpages", ["en"])

    def ids(source: str) -> list[str]:
        text = f"fixed: {{model: 'arch:tiny-llama', vocabulary_source: '{source}'}}\naxes: {{vocabulary: [1024]}}"
        return [cell.cell_id for cell in expand_spec("m", yaml.safe_load(text))]

    assert ids("corpus:help:es,ca,en") != ids("corpus:es,en") == ids("corpus:es,en")


def test_the_help_tasks_score_the_held_out_gimp_manual_and_the_text_tasks_the_man_pages():
    from harness.tasks.catalog import PROJECT_TASKS

    for lang in HELP_LANGUAGES:
        task = PROJECT_TASKS[f"help_{lang}"]
        assert task.family == "text" and "GIMP User Manual" in task.description
        expected = corpora.documents(lang, "heldout", corpus=HELP)
        assert task.records(None) == [{"id": d.id, "text": d.text} for d in expected]  # type: ignore[arg-type]
    for lang in LANGUAGES:
        task = PROJECT_TASKS[f"text_{lang}"]
        assert task.family == "text" and task.description.endswith("(Debian manual pages)")
        assert task.records(None) == [{"id": d.id, "text": d.text}  # type: ignore[arg-type]
                                      for d in corpora.documents(lang, "heldout")]
    assert "text_ca" not in PROJECT_TASKS
