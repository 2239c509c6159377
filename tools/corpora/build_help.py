"""Regenerate the parallel GIMP-manual corpus (en, es, ca, fr, de) from Debian's gimp-help packages.

Run as `python -m tools.corpora.build_help` (from the repository root) on Debian 12 (bookworm) with these
packages installed (w3m only satisfies gimp-help's "gimp-helpbrowser | www-browser" dependency without
pulling in GIMP):

    apt-get install -y --no-install-recommends w3m \\
        gimp-help-en gimp-help-es gimp-help-ca gimp-help-fr gimp-help-de

`--check` rebuilds into a temporary folder and fails if any committed byte would change;
`--propose-pages` reruns the page selection (`propose_pages`) and prints the lists. Why this manual, how its
pages line up and which are kept: docs/corpora.md."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

from harness.data.corpora import CORPORA, SPLITS, file_name, manifest_name
from tools.corpora import common
from tools.corpora.common import (
    COMMON_LICENSES,
    DOC_ROOT,
    BuildError,
    build_date,
    debian_release,
    dep5,
    is_prose,
    normalise,
    owners,
    package_versions,
    page_order,
    write,
)

CORPUS = "help"
LANGUAGES = CORPORA[CORPUS]
HELP_ROOT = Path("/usr/share/gimp/2.0/help")
COMMAND = "python -m tools.corpora.build_help"
PACKAGES = {lang: f"gimp-help-{lang}" for lang in LANGUAGES}
COMMON_PACKAGE = "gimp-help-common"  # the copyright file and AUTHORS (each language's doc folder links to it)
EXPECTED_VERSIONS = {**{name: "2.10.34-2" for name in PACKAGES.values()}, COMMON_PACKAGE: "2.10.34-2"}
UPSTREAM = "GIMP User Manual (gimp-help) 2.10.34, by the GIMP Documentation Team; https://docs.gimp.org/"
UPSTREAM_SOURCE = "https://download.gimp.org/pub/gimp/help/"
LICENSE = "GFDL-1.2-or-later"
DEBIAN_LICENSE = "GFDL-NIV-1.2+"  # the name debian/copyright gives it: no Invariant Sections
LICENSE_TEXT = COMMON_LICENSES / "GFDL-1.2"
NOTICE_YEAR = 2026  # the year of this extract, for the GFDL's title page and history (fixed, so builds repeat)

# Pages that are not prose about GIMP (the title page and table of contents, the index, the
# bibliography, the tables of keyboard shortcuts, the GNU FDL's own text, which help.LICENSES.txt
# has from Debian's copy) or that do not line up (the glossary).
EXCLUDED_PAGES = {
    "index": "title page and table of contents",
    "gimp-help-index": "the index",
    "bibliography": "references",
    "glossary": "entries sorted by the translated term, so its paragraphs do not line up across languages",
    "key-reference": "keyboard shortcut tables",
    "legal": "the GNU Free Documentation License's own text",
}
EXCLUDED_PARTS = ("key-reference", "legal")  # and every page below these

# DocBook's markup for what the user clicks, types or reads on screen (its class in the HTML), and
# HTML's own code elements: text inside it is UI or code, not the paragraph's prose.
UI_CLASSES = frozenset({
    "guimenu", "guisubmenu", "guimenuitem", "guilabel", "guibutton", "guiicon", "keycap", "keycombo",
    "shortcut", "mousebutton", "code", "literal", "filename", "command", "userinput", "computeroutput",
    "parameter", "function", "varname", "option", "envar", "systemitem", "replaceable", "constant",
    "classname", "type", "prompt", "property", "programlisting", "screen", "markup", "token",
})
UI_TAGS = frozenset({"code", "kbd", "tt", "pre", "samp", "var"})
# Containers whose paragraphs are navigation or front matter, and paragraph classes that are titles.
SKIP_CONTAINERS = frozenset({"navheader", "navfooter", "toc", "titlepage", "legalnotice", "list-of-figures"})
SKIP_PARAGRAPHS = frozenset({"title", "legalnotice-title"})
FOOTNOTE_MARKS = frozenset({"footnote", "para"})  # classes of DocBook's <sup> footnote marks
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})
WEB_LINKS = ("http:", "https:", "mailto:", "ftp:")  # outside the manual; they differ between languages
GENERATED_ANCHOR = re.compile(r"#(ftn\.)?idm\d+$")  # DocBook's generated ids: differ between languages

MAX_UI_SHARE = 0.25
LENGTH_RATIO = (0.5, 2.0)  # translation length / English length, in characters
MAX_SHARED_WORDS = 0.5  # at most this share of a translation's own words may be words of the English paragraph
MIN_PAGE_BYTES = 300
MAX_PAGE_BYTES = 6_000  # English text of one page: its first paragraphs, so no single page weighs on a split
TARGET_BYTES = 115_000  # English text per split; the other languages come out 5-20% longer

# Chosen by `propose_pages` (rule in its docstring) on the packages recorded in help.MANIFEST.json.
TRAIN_PAGES: tuple[str, ...] = (
    "customize-splashscreen", "filters", "gimp-concepts-image-guides", "gimp-concepts-main-windows",
    "gimp-display-filter-dialog", "gimp-edit-clear", "gimp-edit-fill-bg", "gimp-file-close",
    "gimp-file-new", "gimp-filter-cubism", "gimp-filter-deinterlace", "gimp-filter-engrave",
    "gimp-filter-lens-flare", "gimp-filter-noise-hsv", "gimp-filter-noise-hurl",
    "gimp-filter-noise-slur", "gimp-filter-semi-flatten", "gimp-filter-whirl-pinch", "gimp-image-crop",
    "gimp-image-print-size", "gimp-images-in", "gimp-imaging-photos", "gimp-indexed-palette-dialog",
    "gimp-introduction-history-2-4", "gimp-layer-previous", "gimp-layer-rotate-90",
    "gimp-module-dialog", "gimp-painting", "gimp-path-dialog", "gimp-path-stroke",
    "gimp-selection-to-path", "gimp-template-dialog", "gimp-tool-clone", "gimp-tool-eraser",
    "gimp-tool-handle-transform", "gimp-tool-paintbrush", "gimp-tool-perspective-clone",
    "gimp-tool-rect-select", "gimp-tool-scale", "gimp-tool-warp", "gimp-tools-brush",
    "gimp-tools-transform", "gimp-using-drag-and-drop", "gimp-using-file-manager",
    "gimp-using-paths-and-svg", "gimp-using-paths-properties", "gimp-using-quickmask",
    "gimp-using-script-fu-tutorial-identifier", "gimp-using-selections", "gimp-using-simpleobjects",
    "gimp-view-navigation", "gimp-view-show-grid", "gimp-view-show-layer-boundary", "plug-in-cartoon",
    "plug-in-emboss", "plug-in-flame", "plug-in-jigsaw", "plug-in-lighting", "plug-in-map-object",
    "plug-in-oilify", "plug-in-plug-in-details", "script-fu-addborder", "script-fu-carve-it",
    "script-fu-clothify", "script-fu-distress-selection", "script-fu-tile-blur",
)
HELDOUT_PAGES: tuple[str, ...] = (
    "filters-blur", "gimp-concepts-brushes", "gimp-concepts-docks", "gimp-concepts-gradients",
    "gimp-creating-brush-quickly", "gimp-edit-fill-pattern", "gimp-edit-menu", "gimp-edit-redo",
    "gimp-edit-undo", "gimp-file-open", "gimp-file-revert", "gimp-filter-bump-map",
    "gimp-filter-diffraction-patterns", "gimp-filter-edge-sobel", "gimp-filter-polar-coordinates",
    "gimp-filter-reshow", "gimp-filter-stretch-contrast", "gimp-filter-wind", "gimp-gradient-dialog",
    "gimp-image-combining", "gimp-image-dialog", "gimp-images-out", "gimp-introduction-history",
    "gimp-introduction-history-early-days", "gimp-layer-crop", "gimp-layer-equalize",
    "gimp-layer-mask-disable", "gimp-layer-mask-selection-subtract", "gimp-layer-raise-to-top",
    "gimp-layer-text-commands", "gimp-layer-white-balance", "gimp-palette-dialog",
    "gimp-path-selection-replace", "gimp-sample-point-dialog", "gimp-selection-feather",
    "gimp-selection-invert", "gimp-tool-bucket-fill", "gimp-tool-cage", "gimp-tool-color-picker",
    "gimp-tool-dodge-burn", "gimp-tool-ellipse-select", "gimp-tool-free-select", "gimp-tool-gegl",
    "gimp-tool-ink", "gimp-tool-iscissors", "gimp-tool-move", "gimp-tool-pencil",
    "gimp-tool-perspective", "gimp-tool-shear", "gimp-tool-smudge", "gimp-tool-unified-transform",
    "gimp-tools", "gimp-tutorial-quickie-scale", "gimp-using-fileformats-opening", "gimp-using-grid",
    "gimp-using-image-browser", "gimp-using-script-fu-tutorial", "gimp-view-fullscreen",
    "gimp-view-new", "gimp-view-snap-to-canvas", "gimp-view-zoom", "plug-in-curve-bend",
    "plug-in-dbbrowser", "plug-in-depth-merge", "plug-in-gradmap", "plug-in-grid", "plug-in-sparkle",
    "python-fu-slice", "script-fu-guide-new", "script-fu-line-nova", "script-fu-old-photo",
    "script-fu-selection-rounded-rectangle", "script-fu-xach-effect",
)


@dataclass(frozen=True)
class Paragraph:
    text: str  # the whole paragraph, normalised
    own: str  # its text outside links and UI/code markup, normalised
    template: str  # its text with each UI/code run replaced by "…", normalised
    ui_share: float  # share of its characters inside UI/code markup
    links: tuple[str, ...]  # the manual's pages it links to (sorted, generated anchors and web links left out)


@dataclass(frozen=True)
class Page:
    """One page of the manual in the five languages, paragraphs aligned across languages."""

    id: str
    genre: str
    paragraphs: dict[str, list[Paragraph]]  # lang -> kept paragraphs, same count in every language
    sources: dict[str, Path]


class BuildErrorPage(BuildError):
    """This page cannot be used (its structure differs between languages)."""


# --------------------------------------------------------------------------- HTML -> paragraphs

class _Paragraphs(HTMLParser):
    """The <p> elements of a page, outside navigation, tables of contents and title pages.

    Text is collected with its kind: "ui" inside UI/code markup, "link" inside a link, "text" else.
    Footnote marks (<sup class="footnote">[1]</sup>, and <sup class="para"> before the footnote's
    own text) are left out.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []
        self.current: list[tuple[str, str]] | None = None
        self.depth = 0
        self.links: list[str] = []
        self.out: list[tuple[list[tuple[str, str]], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        if tag in VOID_TAGS:
            if tag == "br":
                self.handle_data(" ")
            return
        if tag == "p" and self.current is not None:  # an unclosed <p>: HTML closes it here
            self.close_paragraph()
        self.stack.append((tag, classes))
        if tag == "p" and not classes & SKIP_PARAGRAPHS and not any(c & SKIP_CONTAINERS for _, c in self.stack):
            self.current, self.depth, self.links = [], len(self.stack), []
        elif self.current is not None and tag == "a":
            href = attributes.get("href") or ""
            if href and not href.startswith(WEB_LINKS) and not GENERATED_ANCHOR.search(href):
                self.links.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_TAGS or not any(name == tag for name, _ in self.stack):
            return
        while self.stack:
            name, _ = self.stack.pop()
            if self.current is not None and len(self.stack) < self.depth:
                self.close_paragraph()
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.current is None:
            return
        inner = self.stack[self.depth:]
        if any(tag == "sup" and classes & FOOTNOTE_MARKS for tag, classes in inner):
            return
        if any(tag in UI_TAGS or classes & UI_CLASSES for tag, classes in inner):
            kind = "ui"
        elif any(tag == "a" for tag, _ in inner):
            kind = "link"
        else:
            kind = "text"
        self.current.append((data, kind))

    def close_paragraph(self) -> None:
        if self.current is not None:
            self.out.append((self.current, self.links))
        self.current = None


def page_paragraphs(html: str) -> list[Paragraph]:
    """The page's non-empty paragraphs, in order."""
    parser = _Paragraphs()
    parser.feed(html)
    parser.close()
    parser.close_paragraph()
    out = []
    for chunks, links in parser.out:
        text = normalise("".join(data for data, _ in chunks))
        if not text:
            continue
        ui = normalise(" ".join(data for data, kind in chunks if kind == "ui"))
        own = normalise(" ".join(data if kind == "text" else " " for data, kind in chunks))
        template = normalise(re.sub(r"(?:\x00\s*)+", " … ", "".join(
            "\x00" if kind == "ui" and data.strip() else data for data, kind in chunks)))
        out.append(Paragraph(text=text, own=own, template=template, ui_share=len(ui) / len(text),
                             links=tuple(sorted({link.split("#")[0] or link for link in links}))))
    return out


_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def is_translated(translation: Paragraph, english: Paragraph) -> bool:
    """The translation is not the English paragraph left as it was, wholly or in part.

    Its own words (outside links and UI markup, which DocBook fills with the linked section's
    translated title and the translated UI) are compared with all the English paragraph's words: a
    paragraph that xml2po left in English keeps its English own words (only the generated link
    texts change), so most of them are English words. Names and terms shared by both (GIMP, RGB,
    pixel) are a small share of a real translation's words.
    """
    if translation.text == english.text or translation.own == english.own:
        return False
    own = words(translation.own)
    if not own:
        return False
    english_words = set(words(english.text))
    return sum(word in english_words for word in own) <= MAX_SHARED_WORDS * len(own)


def aligned(translation: Paragraph, english: Paragraph) -> bool:
    """The same paragraph: links to the same pages, and a length within LENGTH_RATIO of the English one."""
    low, high = LENGTH_RATIO
    return translation.links == english.links and low <= len(translation.text) / len(english.text) <= high


def keep_paragraph(english: Paragraph, translations: list[Paragraph]) -> bool:
    return (all(is_prose(p.text) and p.ui_share <= MAX_UI_SHARE for p in (english, *translations))
            and all(aligned(p, english) and is_translated(p, english) for p in translations))


# --------------------------------------------------------------------------- pages

def source_path(lang: str, page: str) -> Path:
    return HELP_ROOT / lang / f"{page}.html"


def read_source(path: Path) -> str:
    if path.is_symlink() or not path.is_file():
        raise BuildErrorPage(f"{path} is not a page of its own")
    return path.read_bytes().decode("utf-8")


def up_links() -> dict[str, str]:
    """page -> the page above it in the English manual's hierarchy (DocBook's <link rel="up">); a part
    of the manual (Part I, II, III: a <div class="part">) is marked by the value PART."""
    out = {}
    for path in sorted((HELP_ROOT / "en").glob("*.html")):
        html = path.read_text(encoding="utf-8")
        match = re.search(r'<link rel="up" href="([^"#]+)\.html"', html)
        if match:
            out[path.stem] = match.group(1)
        if '<div class="part">' in html:
            out[f"{path.stem}{PART}"] = PART
    return out


PART = "\x00part"


def ancestry(page: str, up: dict[str, str]) -> list[str]:
    """The page, its parent and so on up to (not including) the title page "index"."""
    chain = [page]
    while up.get(chain[-1], "index") != "index":
        chain.append(up[chain[-1]])
        if len(chain) > 20:
            raise BuildError(f"{page}: the up links of the manual form a loop")
    return chain


def genre(page: str, up: dict[str, str]) -> str:
    """The chapter a page is in, for a split that keeps the same mix of chapters in both splits: in a
    part of the manual, its chapter (tools, dialogs, menus and filters in the function reference, the
    tutorials' chapters), else its appendix (or the page itself, for one at the top)."""
    chain = ancestry(page, up)
    return chain[-2] if len(chain) >= 2 and f"{chain[-1]}{PART}" in up else chain[-1]


def excluded(page: str, up: dict[str, str]) -> str | None:
    if page in EXCLUDED_PAGES:
        return EXCLUDED_PAGES[page]
    top = ancestry(page, up)[-1]
    return EXCLUDED_PAGES[top] if top in EXCLUDED_PARTS else None


def extract_page(page: str, up: dict[str, str]) -> Page:
    """The page's aligned, kept paragraphs in every language (`keep_paragraph`)."""
    sources = {lang: source_path(lang, page) for lang in LANGUAGES}
    parsed = {lang: page_paragraphs(read_source(path)) for lang, path in sources.items()}
    counts = {lang: len(p) for lang, p in parsed.items()}
    if len(set(counts.values())) != 1:
        raise BuildErrorPage(f"{page}: paragraphs do not line up across languages: {counts}")
    keep = [i for i, english in enumerate(parsed["en"])
            if keep_paragraph(english, [parsed[lang][i] for lang in LANGUAGES[1:]])]
    return Page(id=page, genre=genre(page, up), sources=sources,
                paragraphs={lang: [parsed[lang][i] for i in keep] for lang in LANGUAGES})


def new_paragraphs(page: dict[str, list[Paragraph]], seen: set[tuple[str, str]]) -> list[int]:
    """Indexes of the paragraphs to keep: those whose text, and whose template (UI blanked out), are in
    no language in seen (nor earlier in the page), as many of the first ones as fit in MAX_PAGE_BYTES
    of English text (at least one). Adds the kept ones' (language, text) and (language, template) to
    seen. Every language counts, as two English paragraphs can have one translation ("Click the
    tool's icon in the Toolbox,")."""
    def keys(i: int) -> set[tuple[str, str]]:
        return {(lang, text) for lang, paragraphs in page.items()
                for text in (paragraphs[i].text, paragraphs[i].template)}

    keep: list[int] = []
    size = 0
    page_seen: set[tuple[str, str]] = set()
    for i, paragraph in enumerate(page["en"]):
        if keys(i) & (seen | page_seen):
            continue
        page_seen |= keys(i)
        size += len(paragraph.text.encode("utf-8")) + (2 if keep else 0)
        if keep and size > MAX_PAGE_BYTES:
            break
        keep.append(i)
    for i in keep:
        seen |= keys(i)
    return keep


def candidate_pages() -> list[str]:
    """Pages of the English manual that exist, as files of their own, in every language."""
    return sorted(path.stem for path in (HELP_ROOT / "en").glob("*.html")
                  if all(source_path(lang, path.stem).is_file() and not source_path(lang, path.stem).is_symlink()
                         for lang in LANGUAGES))


def english_bytes(page: Page, keep: list[int]) -> int:
    return len("\n\n".join(page.paragraphs["en"][i].text for i in keep).encode("utf-8"))


def propose_pages() -> tuple[list[str], list[str], dict[str, str]]:
    """Select and split the pages: the rule that produced TRAIN_PAGES and HELDOUT_PAGES.

    Pages are taken in sha256(id) order (`common.page_order`). A page is used when it is not
    excluded, its paragraphs line up in the five languages, and it keeps at least MIN_PAGE_BYTES of
    English text that no earlier used page already had (`new_paragraphs`); pages are used until
    they hold 2 x TARGET_BYTES of English text. Each goes to the split with less English text so far
    from its chapter (`genre`), or, where both have as much, with less English text in all, so the
    two splits get about the same size and the same mix of chapters, with no choice made by hand.
    """
    up = up_links()
    seen: set[tuple[str, str]] = set()
    totals: dict[tuple[str, str], int] = {}
    sizes = {split: 0 for split in SPLITS}
    chosen: dict[str, list[str]] = {split: [] for split in SPLITS}
    rejected: dict[str, str] = {}
    for page in sorted(candidate_pages(), key=page_order):
        if sum(sizes.values()) >= len(SPLITS) * TARGET_BYTES:
            rejected[page] = "enough text"
            continue
        why = excluded(page, up)
        if why:
            rejected[page] = why
            continue
        try:
            extracted = extract_page(page, up)
        except BuildErrorPage as error:
            rejected[page] = str(error)
            continue
        keep = new_paragraphs(extracted.paragraphs, set(seen))
        size = english_bytes(extracted, keep)
        if size < MIN_PAGE_BYTES:
            rejected[page] = f"{size} bytes of new English prose"
            continue
        split = min(SPLITS, key=lambda s: (totals.get((extracted.genre, s), 0), sizes[s], SPLITS.index(s)))
        new_paragraphs(extracted.paragraphs, seen)
        chosen[split].append(page)
        totals[extracted.genre, split] = totals.get((extracted.genre, split), 0) + size
        sizes[split] += size
    return sorted(chosen["train"]), sorted(chosen["heldout"]), rejected


# --------------------------------------------------------------------------- building

def build(out_dir: Path, previous_manifest: dict | None) -> dict:
    """Extract every page of the fixed lists and write all output files into out_dir."""
    release = debian_release()
    splits = {"train": TRAIN_PAGES, "heldout": HELDOUT_PAGES}
    if not TRAIN_PAGES or not HELDOUT_PAGES or set(TRAIN_PAGES) & set(HELDOUT_PAGES):
        raise BuildError("TRAIN_PAGES and HELDOUT_PAGES must be non-empty and disjoint")
    up = up_links()
    all_pages = [page for split in SPLITS for page in splits[split]]
    for page in all_pages:
        if excluded(page, up):
            raise BuildError(f"{page} is in the lists but excluded: {excluded(page, up)}")
    owner = owners([source_path(lang, page) for page in all_pages for lang in LANGUAGES])
    for page in all_pages:
        for lang in LANGUAGES:
            if owner.get(source_path(lang, page)) != PACKAGES[lang]:
                raise BuildError(f"{source_path(lang, page)} is not from {PACKAGES[lang]}")
    names = sorted([*PACKAGES.values(), COMMON_PACKAGE])
    versions = package_versions(names)
    for name, info in versions.items():
        if info["version"] != EXPECTED_VERSIONS[name]:
            raise BuildError(f"{name} is at {info['version']}, the extract was built from "
                             f"{EXPECTED_VERSIONS[name]} (see EXPECTED_VERSIONS)")
    copyright_file = DOC_ROOT / COMMON_PACKAGE / "copyright"
    _, stanzas, _ = dep5(copyright_file)
    if [s["Files"] for s in stanzas] != ["*"] or stanzas[0]["License"].split("\n")[0].strip() != DEBIAN_LICENSE:
        raise BuildError(f"{copyright_file} no longer says {DEBIAN_LICENSE} for Files: * alone")
    for name in PACKAGES.values():
        if (DOC_ROOT / name / "copyright").read_bytes() != copyright_file.read_bytes():
            raise BuildError(f"{name}'s copyright file is not {COMMON_PACKAGE}'s")

    seen: set[tuple[str, str]] = set()
    documents: dict[tuple[str, str], list[dict]] = {(lang, split): [] for lang in LANGUAGES for split in SPLITS}
    pages_meta: dict[str, dict] = {}
    dropped_duplicates = 0
    split_of = {page: split for split in SPLITS for page in splits[split]}
    for page in sorted(all_pages, key=page_order):
        split = split_of[page]
        extracted = extract_page(page, up)
        keep = new_paragraphs(extracted.paragraphs, seen)
        dropped_duplicates += len(extracted.paragraphs["en"]) - len(keep)
        if english_bytes(extracted, keep) < MIN_PAGE_BYTES:
            raise BuildError(f"{page}: less than {MIN_PAGE_BYTES} bytes of English text left")
        for lang in LANGUAGES:
            text = "\n\n".join(extracted.paragraphs[lang][i].text for i in keep)
            documents[lang, split].append({"id": page, "lang": lang, "text": text})
        pages_meta[page] = {
            "split": split, "chapter": extracted.genre, "paragraphs": len(keep),
            "sources_sha256": {lang: hashlib.sha256(extracted.sources[lang].read_bytes()).hexdigest()
                               for lang in LANGUAGES},
        }

    files: dict[str, dict] = {}
    for (lang, split), docs in documents.items():
        docs.sort(key=lambda doc: doc["id"])
        name = file_name(lang, split, corpus=CORPUS)
        data = "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs).encode("utf-8")
        files[name] = write(out_dir / name, data) | {
            "documents": len(docs), "paragraphs": sum(d["text"].count("\n\n") + 1 for d in docs),
            "text_bytes": sum(len(d["text"].encode("utf-8")) for d in docs)}
    notices = notices_text()
    files[f"{CORPUS}.NOTICES.txt"] = write(out_dir / f"{CORPUS}.NOTICES.txt", notices.encode("utf-8"))
    licenses = f"===== {LICENSE}\n\n{LICENSE_TEXT.read_text(encoding='utf-8').strip()}\n"
    files[f"{CORPUS}.LICENSES.txt"] = write(out_dir / f"{CORPUS}.LICENSES.txt", licenses.encode("utf-8"))

    header, _, _ = dep5(copyright_file)
    manifest = {
        "corpus": CORPUS,
        "description": ("Parallel prose extracted from the GIMP User Manual as Debian ships it (gimp-help): "
                        "the same pages and the same paragraphs in English, Spanish, Catalan, French and "
                        "German. 'train' is for counting token frequencies (vocabulary slicing), 'heldout' "
                        "only for evaluation; a page is in one split in every language."),
        "languages": list(LANGUAGES),
        "splits": list(SPLITS),
        "files": files,
        "debian_release": release,
        "packages": {name: versions[name] | {
            "upstream": UPSTREAM, "upstream_name": header.get("Upstream-Name", ""),
            "upstream_source": header.get("Source", ""), "license": LICENSE,
            "copyright_file": str(DOC_ROOT / name / "copyright")} for name in names},
        "tools": {"python_html_parser": f"Python {sys.version_info.major}.{sys.version_info.minor} html.parser",
                  "unicode_database": unicodedata.unidata_version},
        "command": COMMAND,
        "selection": {
            "excluded_pages": EXCLUDED_PAGES,
            "excluded_parts": list(EXCLUDED_PARTS),
            "paragraph": "a <p> element outside navigation, tables of contents, title pages and titles",
            "paragraph_filter": (
                f"in all five languages: prose (at least 6 words, letters at least 80% of non-space characters, "
                f"at most 25% code-like words), at most {MAX_UI_SHARE:.0%} of the characters inside UI or "
                f"code markup ({', '.join(sorted(UI_CLASSES))}), links to the same pages of the manual as "
                f"the English paragraph, length {LENGTH_RATIO[0]}-{LENGTH_RATIO[1]} times the English one; "
                f"translated (own words outside links and UI markup not the English ones, at most "
                f"{MAX_SHARED_WORDS:.0%} of them words of the English paragraph); its text, and its text with UI "
                "markup blanked out, in no language already kept for an earlier page"),
            "paragraphs_dropped_as_repeats_or_past_the_page_cap": dropped_duplicates,
            "max_page_bytes": MAX_PAGE_BYTES,
            "split_rule": ("by page: pages taken in sha256(id) order, each to the split with less English text "
                           f"so far from its chapter (ties: less text in all), until both hold 2 x "
                           f"{TARGET_BYTES} bytes of English text; see tools.corpora.build_help.propose_pages"),
        },
        "license": license_note(),
        "pages": pages_meta,
    }
    manifest["built"] = build_date(manifest, previous_manifest)
    text = json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    (out_dir / manifest_name(CORPUS)).write_text(text, encoding="utf-8")
    return manifest


def title_page(lang: str) -> dict[str, str]:
    """The manual's title, copyright lines and licence notice, from the language's title page."""
    html = read_source(source_path(lang, "index"))
    title = re.search(r"<title>(.*?)</title>", html, re.S)
    copyrights = re.findall(r'<p class="copyright">(.*?)</p>', html, re.S)
    notice = re.search(r'<div class="legalnotice">.*?<p>(.*?)</p>', html, re.S)
    if title is None or not copyrights or notice is None:
        raise BuildError(f"{source_path(lang, 'index')}: no title, copyright line or legal notice")
    return {"title": plain(title.group(1)), "copyright": "\n".join(map(plain, copyrights)),
            "notice": plain(notice.group(1))}


def plain(fragment: str) -> str:
    """A fragment of the title page as text: tags dropped, entities and white space as in a paragraph."""
    return normalise(unescape(re.sub(r"<[^>]+>", "", fragment)))


def notices_text() -> str:
    """help.NOTICES.txt: what the GFDL (section 4) asks a modified version to carry."""
    english = title_page("en")
    authors = (DOC_ROOT / COMMON_PACKAGE / "AUTHORS").read_text(encoding="utf-8").strip()
    parts = [
        "Title: Parallel prose of the GIMP User Manual (en, es, ca, fr, de): an extract made for vramlab\n"
        f"Publisher of this extract: the vramlab project, {NOTICE_YEAR}.\n"
        f"Made from: \"{english['title']}\" (GIMP User Manual, gimp-help 2.10.34, Debian packages "
        f"{', '.join(PACKAGES.values())} 2.10.34-2), by the GIMP Documentation Team, https://docs.gimp.org/;\n"
        f"source: {UPSTREAM_SOURCE}. The files help.<lang>.<split>.jsonl in this folder are that extract.",
        "== Copyright and licence notice of the Document (its title page, in each language)",
        *(f"-- {lang}: {page['title']}\n{page['copyright']}\n{page['notice']}"
          for lang, page in ((lang, title_page(lang)) for lang in LANGUAGES)),
        "== Licence of this extract\n"
        "Copyright: the holders named above (the GIMP Documentation Team and the translators; see Authors).\n"
        "Permission is granted to copy, distribute and/or modify this document under the terms of the GNU Free\n"
        "Documentation License, Version 1.2 or any later version published by the Free Software Foundation;\n"
        "with no Invariant Sections, no Front-Cover Texts, and no Back-Cover Texts. A copy of the license is\n"
        "in help.LICENSES.txt.",
        "== History\n"
        "2002-2023: GNU Image Manipulation Program User Manual, by the GIMP Documentation Team (the Document;\n"
        "release 2.10.34, as Debian 12 ships it).\n"
        f"{NOTICE_YEAR}: this extract, by the vramlab project, made with vramlab's tools/corpora/build_help.py: "
        "from the\n"
        "Document's HTML pages in five languages, the paragraphs that are prose and translated in all five\n"
        "were kept as plain text, aligned by page and paragraph, and split into a training and a held-out\n"
        "part; figures, tables, titles, menu paths, code and the rest of the text were left out. The kept\n"
        "text was not reworded (white space was normalised and footnote marks dropped). help.MANIFEST.json\n"
        "lists the pages used and the rules.",
        f"== Authors (the Document's AUTHORS file, verbatim, from {DOC_ROOT / COMMON_PACKAGE / 'AUTHORS'})\n\n"
        f"{authors}",
    ]
    return "\n\n".join(parts) + "\n"


def license_note() -> str:
    return (
        f"{LICENSE} (GNU Free Documentation License 1.2 or later, with no Invariant Sections, no Front-Cover "
        "Texts and no Back-Cover Texts; DFSG-free, Debian main), the licence of the whole GIMP User Manual "
        f"in Debian's copyright file ({DEBIAN_LICENSE}, Files: *), translations included. The extract is a "
        "modified version in the GFDL's sense: keep help.NOTICES.txt (title, copyright and licence notices, "
        "authors, history) and help.LICENSES.txt (the licence text) with the files. Source: the Debian "
        "packages at the versions in 'packages' with vramlab's tools/corpora/build_help.py. The vramlab code "
        "licence (Apache-2.0) does not cover these texts."
    )


def main(argv: list[str] | None = None) -> int:
    return common.main(argv, __doc__.split("\n\n")[0], manifest_name(CORPUS), build, propose_pages,
                       lambda info: f", {info['documents']} documents, {info['paragraphs']} paragraphs"
                       if "documents" in info else "")


if __name__ == "__main__":
    sys.exit(main())
