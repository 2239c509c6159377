"""Training and evaluation examples from long documents (and chat conversations, harness.data.workload.chat).
Why it is so: docs/data.md."""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from harness.data.workload.chat import Example, TemplateError, chat_example
from harness.data.workload.documents import SECTION_SEPARATOR, Document
from harness.data.workload.spelling import Spell, counted
from harness.data.workload.truncation import DoesNotFit, allocate, kept_pieces

__all__ = ["DEFAULT_TARGETS", "Example", "TemplateError", "TrainingSet", "TrainingStats", "chat_example",
           "recall_items", "section_items", "training_examples"]

Encode = Callable[[str], list[int]]
Decode = Callable[[list[int]], str]
# where evaluation targets sit, as fractions of the way through a document's sections
DEFAULT_TARGETS = (0.25, 0.5, 0.75, 1.0)
# tokens kept free for the question after an untruncated context ("\n\nQuestion: ...\nAnswer:")
QUESTION_ROOM = 48


@dataclass(frozen=True)
class TrainingStats:
    examples: int
    tokens: int
    mean_prefix_tokens: float
    targets_cut: int  # targets longer than the context, cut to their first `context` tokens
    sections_dropped: int  # preceding sections left out entirely, summed over examples
    sections_cut: int  # preceding sections kept in part, summed over examples
    targets_skipped: int = 0  # (document, section) pairs passed over: the target alone, spelled, is too long
    text_tokens: int | None = None  # spelled: the tokenizer's tokens the examples hold
    outside_tokens: int | None = None  # spelled: of those, the ones outside the kept set

    def as_dict(self) -> dict[str, Any]:
        return {name: value for name, value in asdict(self).items() if value is not None}


@dataclass(frozen=True)
class TrainingSet:
    examples: list[Example]
    stats: TrainingStats
    policy: str
    decay: float
    context: int


class _Tokens:
    """Each section of each document tokenized once, however many examples use it; kept as 8-byte arrays,
    since a corpus of 140k-token reports held as lists of Python ints would take ~36 bytes a token. With `spell`,
    in the sliced model's own tokens, each with its mark (harness/data/workload/spelling.py)."""

    def __init__(self, encode: Encode, spell: Spell | None = None) -> None:
        self.encode, self.spell = encode, spell
        self.separator, self.separator_marks = self._read(SECTION_SEPARATOR)
        self._cache: dict[int, list[array[int]]] = {}
        self._marks: dict[int, list[bytes]] = {}

    def _read(self, text: str) -> tuple[array[int], bytes]:
        ids = self.encode(text)
        if self.spell is None:
            return array("q", ids), b""
        spelled, marks = self.spell(ids)
        return array("q", spelled), marks

    def sections(self, index: int, document: Document) -> list[array[int]]:
        if index not in self._cache:
            read = [self._read(s.text) for s in document.sections]
            self._cache[index] = [ids for ids, _ in read]
            self._marks[index] = [marks for _, marks in read]
        return self._cache[index]

    def marks(self, index: int, document: Document) -> list[bytes]:
        self.sections(index, document)
        return self._marks[index]


def _where(document: Document, k: int) -> str:
    return f"{document.doc_id}, section {k + 1} of {len(document.sections)}"


def _kept(pieces: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]], separator: Sequence[int]) -> list[int]:
    """The kept part of each piece (a section and the separator after it): whole, a tail (which already ends with
    the separator), or a head that still ends with the separator."""
    out: list[int] = []
    for piece, (start, end) in zip(pieces, spans, strict=True):
        if start > 0 or end == len(piece):
            out.extend(piece[start:end])
        elif end > 0:
            content = piece[:max(end - len(separator), 0)]
            out.extend(content)
            out.extend(separator[:end - len(content)])
    return out


def _training_example(tokens: _Tokens, index: int, document: Document, k: int, context: int, policy: str,
                      decay: float) -> tuple[Example, int, int, bool]:
    sections = tokens.sections(index, document)
    target = sections[k]
    cut_target = len(target) > context
    target = target[:context]
    prefix = [s + tokens.separator for s in sections[:k]]
    try:
        spans = allocate([len(p) for p in prefix], context - len(target), policy, decay)
    except DoesNotFit as error:
        raise DoesNotFit(error.needed, error.budget, f"{error.detail} ({_where(document, k)})") from None
    ids = _kept(prefix, spans, tokens.separator)
    marks = b""
    if tokens.spell is not None:  # the same cuts applied to the marks of the spelled tokens
        section_marks = tokens.marks(index, document)
        marks = bytes(_kept([m + tokens.separator_marks for m in section_marks[:k]], spans, tokens.separator_marks))
        marks += section_marks[k][:context]
    dropped = sum(1 for start, end in spans if end == start)
    cut = sum(1 for (start, end), piece in zip(spans, prefix, strict=True) if 0 < end - start < len(piece))
    notes = (f"target cut from {len(sections[k])} to {context} tokens",) if cut_target else ()
    example = Example(ids + list(target), [0] * len(ids) + [1] * len(target), _where(document, k), len(ids), notes,
                      marks)
    return example, dropped, cut, cut_target


def training_examples(documents: Sequence[Document], encode: Encode, context: int, policy: str, decay: float,
                      count: int, seed: int, spell: Spell | None = None) -> TrainingSet:
    """`count` examples of at most `context` tokens, targets chosen by a seeded shuffle of every
    (document, section) pair but the first sections, cycling when `count` exceeds them. With policy
    'none', the first example whose preceding text does not fit raises DoesNotFit.

    With `spell` (a sliced vocabulary), every section is spelled in the model's own tokens before the policy cuts
    its preceding text, so the context is filled in the tokens the model reads; a target is then never cut: one
    that alone is longer than the context is passed over for the next pair, and counted (`targets_skipped`)."""
    if context < 1 or count < 0:
        raise ValueError(f"need context >= 1 and count >= 0, got {context} and {count}")
    pairs = [(i, k) for i, document in enumerate(documents) for k in range(1, len(document.sections))]
    if not pairs:
        raise ValueError("no document has a second section, so there is nothing to train on")
    random.Random(seed).shuffle(pairs)
    tokens = _Tokens(encode, spell)
    examples: list[Example] = []
    dropped = cut = targets_cut = 0
    skipped: set[tuple[int, int]] = set()
    turn = 0
    for _ in range(count):
        i, k = pairs[turn % len(pairs)]
        turn += 1
        while spell is not None and len(tokens.sections(i, documents[i])[k]) > context:
            skipped.add((i, k))
            if len(skipped) == len(pairs):
                shortest = min(len(tokens.sections(i, documents[i])[k]) for i, k in pairs)
                raise DoesNotFit(shortest, context, "no target section fits the context whole once spelled")
            i, k = pairs[turn % len(pairs)]
            turn += 1
        example, d, c, t = _training_example(tokens, i, documents[i], k, context, policy, decay)
        examples.append(example)
        dropped, cut, targets_cut = dropped + d, cut + c, targets_cut + t
    text = outside = None
    if spell is not None:
        counts = [counted(e.marks) for e in examples]
        text, outside = sum(c[0] for c in counts), sum(c[1] for c in counts)
    stats = TrainingStats(
        examples=len(examples), tokens=sum(len(e.input_ids) for e in examples),
        mean_prefix_tokens=sum(e.prefix_tokens for e in examples) / len(examples) if examples else 0.0,
        targets_cut=targets_cut, sections_dropped=dropped, sections_cut=cut, targets_skipped=len(skipped),
        text_tokens=text, outside_tokens=outside)
    return TrainingSet(examples, stats, policy, decay, context)


def target_sections(section_count: int, targets: Sequence[float] = DEFAULT_TARGETS) -> list[int]:
    """0-based target sections at the given fractions of the way through (1.0 = the last section), never
    the first one."""
    if section_count < 2:
        return []
    return sorted({min(section_count - 1, max(1, int(f * (section_count - 1) + 0.5))) for f in targets})


def untruncated_targets(sections: Sequence[Sequence[int]], separator: int, limit: int,
                        tail: Callable[[int], int] = lambda k: 0) -> list[int]:
    """0-based sections (never the first) whose whole preceding text, joined by separators of `separator`
    tokens, and `tail(k)` tokens after it fit in `limit` tokens: the targets truncation 'none' can ask about.
    A margin of 1% (at least 16 tokens) covers the tokens that re-tokenizing the joined text can add at seams."""
    margin = max(16, limit // 100)
    found, before = [], 0
    for k in range(1, len(sections)):
        before += len(sections[k - 1]) + separator
        if before > limit:
            break
        if before + tail(k) <= limit - margin:
            found.append(k)
    return found


def _with_target(sections: Sequence[Sequence[int]], separator: int) -> Callable[[int], int]:
    """The tokens a target section adds after its preceding text: the separator and the section."""
    return lambda k: len(sections[k]) + separator


def _fit_context(sections: Sequence[Sequence[int]], encode: Encode, decode: Decode, suffix: str, limit: int,
                 policy: str, decay: float, where: str) -> tuple[str, list[str | None], int]:
    """The decoded kept prefix such that encode(prefix + suffix) has at most `limit` tokens; the budget is
    lowered by the excess until it does (a few rounds at most, as only seams differ)."""
    budget = limit - len(encode(suffix))
    for _ in range(16):
        if budget < 0:
            raise ValueError(f"{where}: {limit} tokens cannot even hold the text after the context")
        try:
            pieces = kept_pieces(sections, decode, budget, policy, decay)
        except DoesNotFit as error:
            raise DoesNotFit(error.needed, error.budget, f"{error.detail} ({where})") from None
        text = SECTION_SEPARATOR.join(p for p in pieces if p is not None)
        total = len(encode(text + suffix))
        if total <= limit:
            return text, pieces, total
        budget -= total - limit
    raise RuntimeError(f"{where}: the prompt did not settle within {limit} tokens")  # tokenizer misbehaves


def recall_items(documents: Sequence[Document], encode: Encode, decode: Decode, context: int, policy: str,
                 decay: float, answer_tokens: int = 32, targets: Sequence[float] = DEFAULT_TARGETS,
                 choose: Callable[[int], Sequence[int]] | None = None) -> list[dict]:
    """Fact-recall prompts: the kept text of the sections before a target section, then the question of a
    fact introduced earlier. `in_context` says whether the answer survived truncation anywhere in the
    context, `intro_kept` whether the introducing section's kept part holds it, so that a report can tell
    "truncated away" from "not recalled"; `mentions_before` and `last_mentioned_in` say how often and how
    recently the untruncated text stated the answer (facts that are referred back to recur). `choose`, given
    the number of candidate items, returns the positions to build (building a long prompt is the cost)."""
    tokens = _Tokens(encode)
    if policy == "none":  # nothing is cut: every section whose whole preceding text fits is a target
        room = context - answer_tokens - QUESTION_ROOM
        chosen_targets = [untruncated_targets(tokens.sections(i, d), len(tokens.separator), room)
                          for i, d in enumerate(documents)]
    else:
        chosen_targets = [target_sections(len(d.sections), targets) for d in documents]
    candidates = [(index, document, k, fact) for index, document in enumerate(documents)
                  for k in chosen_targets[index] for fact in document.facts if fact.introduced_in < k]
    chosen = choose(len(candidates)) if choose is not None else range(len(candidates))
    items = []
    for index, document, k, fact in (candidates[i] for i in chosen):
        sections = tokens.sections(index, document)
        suffix = f"\n\nQuestion: {fact.question}\nAnswer:"
        text, pieces, total = _fit_context(sections[:k], encode, decode, suffix, context - answer_tokens,
                                           policy, decay, _where(document, k))
        intro = pieces[fact.introduced_in]
        mentions = [i for i, section in enumerate(document.sections[:k]) if fact.answer in section.text]
        items.append({
            "doc_id": document.doc_id, "key": fact.key, "question": fact.question, "answer": fact.answer,
            "prompt": text + suffix, "prompt_tokens": total, "target_section": k,
            "introduced_in": fact.introduced_in, "sections_back": k - fact.introduced_in,
            "in_context": fact.answer in text, "intro_kept": intro is not None and fact.answer in intro,
            "mentions_before": len(mentions), "last_mentioned_in": mentions[-1],
            "referred_back": fact.referred_back,
            "policy": policy, "decay": decay,
        })
    return items


def section_items(documents: Sequence[Document], encode: Encode, decode: Decode, context: int, policy: str,
                  decay: float, targets: Sequence[float] = DEFAULT_TARGETS) -> list[dict]:
    """(context, continuation) pairs for the bits per byte of target sections: the kept text of the
    preceding sections (ending in a blank line) and the target section's text, at most `context` tokens
    together. A target that cannot fit is cut to its first context - 1 - (separator) tokens (one token is
    left for the start token lm-eval puts before an empty context) and the item says so."""
    tokens = _Tokens(encode)
    items = []
    for index, document in enumerate(documents):
        sections = tokens.sections(index, document)
        chosen = target_sections(len(sections), targets)
        if policy == "none":  # the targets at those fractions of the sections whose whole preceding text fits
            fitting = untruncated_targets(sections, len(tokens.separator), context - 1,
                                          _with_target(sections, len(tokens.separator)))
            chosen = [fitting[i - 1] for i in target_sections(len(fitting) + 1, targets)]
        for k in chosen:
            target = sections[k]
            room = context - 1 - len(tokens.separator)
            cut = len(target) > room
            continuation = decode(list(target[:room])) if cut else document.sections[k].text
            text, pieces, total = _fit_context(sections[:k], encode, decode, SECTION_SEPARATOR + continuation,
                                               context, policy, decay, _where(document, k))
            items.append({
                "doc_id": document.doc_id, "target_section": k, "title": document.sections[k].title,
                "context": text + SECTION_SEPARATOR if text else "", "continuation": continuation,
                "total_tokens": total, "target_tokens": min(len(target), room), "target_cut": cut,
                "note": f"target cut from {len(target)} to {room} tokens" if cut else "",
                "sections_kept": sum(p is not None for p in pieces),
                "sections_dropped": sum(p is None for p in pieces), "policy": policy, "decay": decay,
            })
    return items
