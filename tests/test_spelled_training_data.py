"""Training data in a sliced vocabulary's own tokens: spelled before it is fitted to the context, targets never cut
(one too long once spelled is passed over and counted), packed corpora packed again, and the marks that count
what fell outside the kept set."""

from __future__ import annotations

import re

import pytest

from harness.data import training as data_module
from harness.data.workload import DoesNotFit, chat_example, generate_corpus, training_examples
from harness.data.workload.spelling import KEPT, LATER, SPELLED, counted, spread
from tests.test_workload import CONVERSATION, WordTokenizer, smollm2  # noqa: F401 (a fixture)

SPELLED_FROM = 7  # words longer than this are outside the kept set, spelled one model token a character
BYTE_BASE = 1_000_000  # model ids of the spelled characters: BYTE_BASE + code point


def spell_long_words(words: WordTokenizer):
    """A sliced vocabulary's spelling, by a rule a test can follow: a word of more than SPELLED_FROM characters is
    outside the kept set and becomes one token a character; every other token keeps its id."""

    def spell(ids):
        out, marks = [], bytearray()
        for token in ids:
            word = words.words[token]
            if len(word) > SPELLED_FROM:
                out.extend(BYTE_BASE + ord(c) for c in word)
                marks.extend([SPELLED] + [LATER] * (len(word) - 1))
            else:
                out.append(token)
                marks.append(KEPT)
        return out, bytes(marks)

    return spell


def test_marks_count_tokens_where_their_first_model_token_is_and_spread_a_value_over_the_bytes():
    marks = bytes([KEPT, SPELLED, LATER, LATER, KEPT, SPELLED])
    assert counted(marks) == (4, 2)
    assert counted(marks[2:]) == (2, 1)  # a spelled token cut in the middle counts where its start is kept
    assert spread([0, 1, 1, 0], marks) == [0, 1, 1, 1, 1, 0]


def test_spelled_examples_fit_the_context_keep_every_target_whole_and_pass_over_the_ones_too_long():
    words = WordTokenizer()
    spell = spell_long_words(words)
    documents = generate_corpus(3, 2, 1500, 2500)
    context = 1600
    spelled_sections = {(d.doc_id, k): spell(words.encode(s.text))[0]
                        for d in documents for k, s in enumerate(d.sections)}
    pairs = [(d.doc_id, k) for d in documents for k in range(1, len(d.sections))]
    too_long = {p for p in pairs if len(spelled_sections[p]) > context}
    assert 0 < len(too_long) < len(pairs)  # the case holds both kinds
    train = training_examples(documents, words.encode, context, "exp_decay", 0.5, count=2 * len(pairs), seed=0,
                              spell=spell)
    assert train.stats.targets_skipped == len(too_long) and train.stats.targets_cut == 0
    used = set()
    for example in train.examples:
        doc_id, number = re.match(r"(\S+), section (\d+) of", example.source).groups()
        key = (doc_id, int(number) - 1)
        used.add(key)
        ones = example.completion_mask.index(1)
        assert len(example.input_ids) <= context
        assert example.input_ids[ones:] == spelled_sections[key]  # the whole target, in the model's tokens
        assert len(example.marks) == len(example.input_ids)
    assert used == set(pairs) - too_long
    # the policy shared out the context in the model's tokens: the prefixes fill what the targets leave
    assert any(len(e.input_ids) == context for e in train.examples)
    unspelled = training_examples(documents, words.encode, context, "exp_decay", 0.5, count=2 * len(pairs), seed=0)
    assert unspelled.stats.targets_skipped == 0 and unspelled.stats.text_tokens is None


def test_spelled_marks_count_exactly_the_tokens_outside_when_nothing_is_cut():
    words = WordTokenizer()
    spell = spell_long_words(words)
    documents = generate_corpus(5, 2, 300, 500)
    pairs = sum(len(d.sections) - 1 for d in documents)
    native = training_examples(documents, words.encode, 100_000, "none", 0.5, count=pairs, seed=1)
    spelled = training_examples(documents, words.encode, 100_000, "none", 0.5, count=pairs, seed=1, spell=spell)
    assert [e.source for e in native.examples] == [e.source for e in spelled.examples]
    text = sum(len(e.input_ids) for e in native.examples)
    outside = sum(len(words.words[t]) > SPELLED_FROM for e in native.examples for t in e.input_ids)
    assert 0 < outside < text
    assert (spelled.stats.text_tokens, spelled.stats.outside_tokens) == (text, outside)
    for a, b in zip(native.examples, spelled.examples, strict=True):
        assert spell(a.input_ids)[0] == b.input_ids  # nothing cut: the spelled sequence is the native one spelled


def test_no_target_that_fits_raises_does_not_fit():
    words = WordTokenizer()
    documents = generate_corpus(3, 1, 1500, 2500)
    with pytest.raises(DoesNotFit, match="no target section fits the context whole once spelled"):
        training_examples(documents, words.encode, 20, "tail", 0.5, count=3, seed=0, spell=spell_long_words(words))


def test_a_spelled_packed_corpus_is_packed_again_in_the_model_tokens():
    settings = {"context": 64, "seed": 3, "warmup_steps": 1, "steps": 2, "grad_accum": 2, "batch_size": 1}
    native = data_module.build("zipf", None, 50, settings["context"], 6, settings["seed"])
    drawn = [t for s in native.sequences for t in s]
    outside = max(set(drawn), key=drawn.count)  # the most frequent token, spelled as three model tokens

    def spell(ids):
        out, marks = [], bytearray()
        for token in ids:
            out.extend([token] * (3 if token == outside else 1))
            marks.extend([SPELLED, LATER, LATER] if token == outside else [KEPT])
        return out, bytes(marks)

    again = data_module.build("zipf", None, 50, settings["context"], 6, settings["seed"], spell)
    stream, marks = spell(drawn)
    assert again.sequences == [stream[i * 64:(i + 1) * 64] for i in range(6)]  # every one full, in order
    assert (again.detail["text_tokens"], again.detail["outside_tokens"]) == counted(marks[:6 * 64])
    assert again.detail["outside_tokens"] > 0
    assert data_module.spelled(native, settings, None, 50, lambda ids: (list(ids), bytes([KEPT]) * len(ids))
                               ).sequences == native.sequences  # kept in full: the rows as drawn


@pytest.mark.slow
def test_a_spelled_conversation_is_fitted_after_spelling_and_never_cut(smollm2):  # noqa: F811
    vocab = smollm2.get_vocab()
    byte_ids = [vocab[c] for c in "abc"]

    def spell(ids):  # every token of id above 200 sliced away, spelled with three kept byte tokens
        out, marks = [], bytearray()
        for token in ids:
            if token > 200:
                out.extend(byte_ids)
                marks.extend([SPELLED, LATER, LATER])
            else:
                out.append(token)
                marks.append(KEPT)
        return out, bytes(marks)

    native = chat_example(smollm2, CONVERSATION, 4096)
    spelled = chat_example(smollm2, CONVERSATION, 4096, spell)
    assert spelled.input_ids == spell(native.input_ids)[0]
    assert spelled.completion_mask == spread(native.completion_mask, spelled.marks)
    # one token short of the spelled length: the first turns go (natively all of it would still fit)
    short = chat_example(smollm2, CONVERSATION, len(spelled.input_ids) - 1, spell)
    assert len(native.input_ids) < len(spelled.input_ids) - 1 and "dropped the first 2" in short.notes[0]
    last = chat_example(smollm2, [CONVERSATION[0], *CONVERSATION[3:]], 4096, spell)
    assert short.input_ids == last.input_ids
    with pytest.raises(DoesNotFit, match="once spelled"):  # what is left is too long: not cut, passed over
        chat_example(smollm2, CONVERSATION, len(last.input_ids) - 1, spell)
