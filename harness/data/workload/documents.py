"""Seeded synthetic grant reports: long structured documents whose later sections depend on earlier ones.
Why it is so: docs/data.md."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Any

from harness.data.workload import facts as fact_kinds
from harness.data.workload import words as v

SECTION_SEPARATOR = "\n\n"
TOKENS_PER_WORD = 1.15  # a lower bound for GPT-2-style tokenizers (docs/data.md, its size)
_SLOT = re.compile(r"\{([a-z_]+?)\d?\}")
_SMALL_WORDS = frozenset({"a", "an", "and", "at", "for", "in", "of", "on", "the", "to", "with"})


@dataclass(frozen=True)
class Section:
    number: int  # 1-based position in the document; the heading's number for generated reports
    title: str
    text: str  # starts with the heading line, e.g. "3. Budget and Expenditure"


@dataclass(frozen=True)
class Fact:
    key: str
    question: str
    answer: str
    introduced_in: int  # 0-based index into Document.sections
    referred_back: bool = False  # later sections repeat the answer; otherwise it is stated once only


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    sections: tuple[Section, ...]
    facts: tuple[Fact, ...] = ()

    @property
    def text(self) -> str:
        return SECTION_SEPARATOR.join(section.text for section in self.sections)


def _title_case(text: str) -> str:
    words = text.split()
    return " ".join(w if (i and w in _SMALL_WORDS) or not w[0].islower() else w[0].upper() + w[1:]
                    for i, w in enumerate(words))


class _Writer:
    """Fills templates for one document: the generic word lists plus that document's domain."""

    def __init__(self, rng: random.Random, domain: dict[str, Any], instrument: str) -> None:
        self.rng = rng
        self.pools: dict[str, tuple[str, ...]] = {**v.GENERIC, "topic": domain["topics"]}
        self.fixed = {"instrument": instrument, "samples": domain["samples"], "units": domain["units"]}

    def fill(self, template: str, value: str = "") -> str:
        chosen: list[str] = []  # "{milestone} and {milestone2}" must name two different milestones

        def pick(match: re.Match[str]) -> str:
            name = match.group(1)
            if name == "value":
                return value
            if name in self.fixed:
                return self.fixed[name]
            chosen.append(self.rng.choice([word for word in self.pools[name] if word not in chosen]))
            return chosen[-1]

        text = _SLOT.sub(pick, template)
        return text[0].upper() + text[1:]

    def filler(self, kind: str) -> str:
        # mostly the section's own kind, so sections of different kinds read differently
        pool = v.SENTENCES[kind] if self.rng.random() < 0.65 else v.SENTENCES["generic"]
        return self.fill(self.rng.choice(pool))


def _section_lengths(rng: random.Random, target_words: int) -> list[int]:
    """Log-uniform lengths from a few hundred to a few thousand words, scaled down for small documents.
    The log scale is a grid made by repeated multiplication, not math.exp: IEEE products are the same
    everywhere, while exp comes from the platform's C library."""
    low = min(300, max(60, target_words // 8))
    high = min(4000, max(2 * low, target_words // 3))
    grid = [float(low)]
    while grid[-1] * 1.1 < high:
        grid.append(grid[-1] * 1.1)
    grid.append(float(high))
    lengths: list[int] = []
    while sum(lengths) < target_words:
        step = rng.randrange(len(grid) - 1)
        length = min(rng.randint(int(grid[step]), int(grid[step + 1])), target_words - sum(lengths))
        if length < low // 2 and lengths:
            lengths[-1] += length  # a stub at the end joins the previous section
        else:
            lengths.append(length)
    return lengths


def _kinds(rng: random.Random, count: int) -> list[str]:
    kinds = list(v.OPENING_KINDS[:count])
    while len(kinds) < count:
        kind = rng.choice(v.RECURRING_KINDS)
        if kind != kinds[-1]:
            kinds.append(kind)
    return kinds


def _paragraphs(rng: random.Random, sentences: list[str]) -> list[str]:
    paragraphs, start = [], 0
    while start < len(sentences):
        size = rng.randint(3, 7)
        paragraphs.append(" ".join(sentences[start:start + size]))
        start += size
    return paragraphs


def _section(writer: _Writer, index: int, length: int, kind: str, special: list[str]) -> Section:
    """Section `index` of about `length` words: filler of its kind, with the fact sentences (`special`)
    inserted at random places, not only at its start."""
    rng = writer.rng
    title = _title_case(writer.fill(rng.choice(v.TITLES[kind])))
    heading = f"{index + 1}. {title}"
    budget = length - len(heading.split()) - sum(len(s.split()) for s in special)
    sentences: list[str] = []
    while budget > 0:
        sentences.append(writer.filler(kind))
        budget -= len(sentences[-1].split())
    for sentence in special:
        sentences.insert(rng.randint(0, len(sentences)), sentence)
    return Section(index + 1, title, SECTION_SEPARATOR.join([heading, *_paragraphs(rng, sentences)]))


def _build(seed: int, target_words: int, doc_id: str, used: set[str]) -> Document:
    if target_words < 1:
        raise ValueError(f"target_words must be positive, got {target_words}")
    rng = random.Random(seed)
    domain = rng.choice(v.DOMAINS)
    writer = _Writer(rng, domain, rng.choice(domain["instruments"]))
    values = fact_kinds.draw_values(rng, used)
    lengths = _section_lengths(rng, target_words)
    kinds = _kinds(rng, len(lengths))
    # facts live in the first quarter of the sections, never in the last one when there are several
    early = max(1, min(len(lengths) - 1, math.ceil(len(lengths) / 4)))
    introduced = {kind.key: rng.randrange(early) for kind in fact_kinds.KINDS}
    # about half the facts recur later (what makes later sections depend on earlier ones); the others are
    # stated once, so recalling them needs the introducing section itself to survive truncation
    referred = {kind.key for kind in rng.sample(fact_kinds.KINDS, len(fact_kinds.KINDS) // 2 + 1)}
    sections = []
    for index, (length, kind) in enumerate(zip(lengths, kinds, strict=True)):
        special = [writer.fill(rng.choice(k.intros), values[k.key])
                   for k in fact_kinds.KINDS if introduced[k.key] == index]
        known = [k for k in fact_kinds.KINDS if introduced[k.key] < index and k.key in referred]
        special += [writer.fill(rng.choice(k.references), values[k.key])
                    for k in rng.sample(known, min(len(known), 1 + length // 1000))]
        sections.append(_section(writer, index, length, kind, special))
    facts = tuple(Fact(k.key, writer.fill(k.question), values[k.key], introduced[k.key], k.key in referred)
                  for k in fact_kinds.KINDS)
    topic = _title_case(rng.choice(domain["topics"]))
    title = f"{rng.choice(('Final Report', 'Annual Progress Report', 'Interim Report'))}: {topic}"
    document = Document(doc_id, title, tuple(sections), facts)
    _check(document)
    return document


def _check(document: Document) -> None:
    """A fact's answer must first appear in the section that introduces it (cheap, so always checked)."""
    texts = [section.text for section in document.sections]
    for fact in document.facts:
        first = next((i for i, text in enumerate(texts) if fact.answer in text), None)
        if first != fact.introduced_in:
            raise RuntimeError(f"generator bug: {document.doc_id}: {fact.key}={fact.answer!r} first appears in section "
                                 f"{first}, not {fact.introduced_in}")


def words_for_tokens(tokens: int) -> int:
    """Words to ask for so that a report has at least `tokens` tokens with a GPT-2-style tokenizer (a
    conservative 1.15 tokens per word; measured 1.18-1.19)."""
    return math.ceil(tokens / TOKENS_PER_WORD)


def generate_document(seed: int, target_words: int) -> Document:
    """One synthetic grant report of about `target_words` words (within a sentence or so; more below a few
    hundred words, since every fact is always stated)."""
    return _build(seed, target_words, f"grant-report-{seed}", set())


def generate_corpus(seed: int, count: int, min_words: int, max_words: int) -> list[Document]:
    """`count` reports with lengths uniform in [min_words, max_words] and fact values not shared between
    documents (redrawn on a clash), so that recalling one report's facts cannot come from another."""
    if not 1 <= min_words <= max_words:
        raise ValueError(f"need 1 <= min_words <= max_words, got {min_words} and {max_words}")
    rng = random.Random(seed)
    used: set[str] = set()
    documents = []
    for index in range(count):
        words = rng.randint(min_words, max_words)
        documents.append(_build(rng.getrandbits(63), words, f"corpus-{seed}-{index:04d}", used))
    return documents
