"""Long-context retrieval data generated locally, in the manner of RULER. Why it is so: docs/data.md."""

from __future__ import annotations

import ast
import functools
import importlib.util
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

TokenCounter = Callable[[str], int]


class Record(TypedDict):
    """One evaluation example, as written to JSONL."""

    id: str
    task: str
    input: str  # the whole prompt, ending where the model should start answering
    answers: list[str]  # every gold string the model must produce
    context_tokens: int  # count_tokens(input)
    depth: float | None  # relative position of the queried needle in the haystack, 0 (start) .. 1 (end)


# RULER's "noise" haystack: one short paragraph repeated. It is cycled sentence by sentence (not paragraph by
# paragraph) so that the filler can be sized in steps of a few tokens and needles sit between sentences.
NOISE_SENTENCES: tuple[str, ...] = (
    "The grass is green.",
    "The sky is blue.",
    "The sun is yellow.",
    "Here we go.",
    "There and back again.",
)

# Fixed list of pure-Python standard-library modules whose docstrings make the prose ("docs") haystack. Modules
# whose documentation lives in C (decimal, datetime, itertools) or differs by platform (os, subprocess) are left
# out: their Python source holds little prose or depends on the platform.
DOC_MODULES: tuple[str, ...] = (
    "argparse",
    "ast",
    "bisect",
    "calendar",
    "collections",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "difflib",
    "email.message",
    "enum",
    "fnmatch",
    "fractions",
    "functools",
    "gettext",
    "glob",
    "gzip",
    "heapq",
    "html.parser",
    "http.client",
    "inspect",
    "ipaddress",
    "json",
    "logging",
    "pathlib",
    "pprint",
    "queue",
    "random",
    "sched",
    "shlex",
    "shutil",
    "statistics",
    "string",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "tokenize",
    "typing",
    "unittest.case",
    "urllib.parse",
    "uuid",
    "warnings",
    "zipfile",
)

# Words for RULER-style "adjective-noun" needle keys. None of them occurs in the noise sentences, no adjective
# ends with another and no noun starts with another, so no key can be a substring of another key.
_ADJECTIVES_TEXT = (
    "amber ancient brave brisk calm clever crimson curious dusty eager fancy fierce fragile gentle gloomy "
    "golden humble icy jolly keen lively lucky mellow misty modest narrow noble odd patient proud quiet "
    "rapid rusty scarlet shiny silent silver sleepy smooth sturdy tender tidy violet vivid wary witty "
    "wooden zealous"
)
_ADJECTIVES: tuple[str, ...] = tuple(_ADJECTIVES_TEXT.split())
_NOUNS_TEXT = (
    "anchor apricot badger banjo beacon bishop bramble canyon castle cellar compass cricket dagger "
    "dolphin falcon feather ferry fossil galaxy garnet glacier harbor helmet hermit island jigsaw kettle "
    "lantern lobster magnet meadow mirror monsoon nectar nutmeg orchard otter paddle pebble pepper pigeon "
    "quarry quill raven saddle satchel sparrow spindle teapot thimble tunnel turnip umbrella valley "
    "velvet walrus whistle willow yogurt zeppelin"
)
_NOUNS: tuple[str, ...] = tuple(_NOUNS_TEXT.split())

NIAH_VARIANTS: tuple[str, ...] = ("single", "multikey", "multivalue")
HAYSTACKS: tuple[str, ...] = ("noise", "docs")

_NIAH_PREAMBLE = (
    "Some special magic numbers are hidden within the following text. Make sure to memorize it. "
    "I will quiz you about the numbers afterwards.\n"
)
_KV_PREAMBLE = "Extract the value corresponding to the specified key in the JSON object below.\n\nJSON data:\n"
_VT_PREAMBLE = "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n"

# Bounds on the search for the filler amount: a handful of tokenizations per example in practice.
_MAX_FIT_STEPS = 40
_INTERPOLATION_STEPS = 4  # after this many bracketing steps, bisect: guarantees termination on odd counters
_RATE_SAMPLE_UNITS = 200


# ---------------------------------------------------------------------------------------------------------------
# Argument checks


def _check_common(context: int, n: int, answer_tokens: int) -> int:
    """Validate the shared arguments and return the token limit for the input."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise ValueError(f"context must be a positive integer (tokens), got {context!r}")
    if isinstance(answer_tokens, bool) or not isinstance(answer_tokens, int) or answer_tokens < 0:
        raise ValueError(f"answer_tokens must be a non-negative integer, got {answer_tokens!r}")
    limit = context - answer_tokens
    if limit < 1:
        raise ValueError(f"context={context} leaves no room for the input after answer_tokens={answer_tokens}")
    return limit


# ---------------------------------------------------------------------------------------------------------------
# Sizing the filler to the token budget


class _ContextTooSmall(ValueError):
    pass


@dataclass
class _Fitter:
    """Find, per example, the largest filler amount whose prompt fits in `limit` tokens.

    Token counts are not additive (merges across boundaries), so the whole prompt is tokenized at each probe. To
    keep probes few, the tokens per filler unit are estimated once and refined from each example's result; the
    first probe of an example usually lands within the tolerance, and otherwise a bracketing search (linear
    interpolation, then bisection) finishes it.
    """

    count_tokens: TokenCounter
    limit: int
    rate: float  # tokens per filler unit
    task: str
    base: int | None = None  # tokens of a prompt with no filler (from the first example)
    calls: int = 0

    def _count(self, text: str) -> int:
        self.calls += 1
        tokens = self.count_tokens(text)
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise TypeError(f"count_tokens must return a non-negative int, got {tokens!r}")
        return tokens

    def _too_small(self, tokens: int) -> _ContextTooSmall:
        return _ContextTooSmall(
            f"{self.task}: the input may use {self.limit} tokens (context minus answer_tokens), but the needles and "
            f"the question alone need {tokens} tokens; raise the context or lower answer_tokens/needles/chains/hops"
        )

    def fit(self, build: Callable[[int], str]) -> tuple[int, str, int]:
        """Return (filler units, prompt, its token count) with the count <= limit and as close to it as practical."""
        # Stop when within ~1.5% of the limit: closer costs more tokenizations for no real gain.
        tol = max(1, self.limit // 64)
        aim = self.limit - tol / 2  # aiming just below the limit avoids overshooting half of the time
        lo: tuple[int, str, int] | None = None  # largest amount known to fit
        hi: tuple[int, int] | None = None  # smallest amount known not to fit
        if self.base is None:
            text = build(0)
            tokens = self._count(text)
            if tokens > self.limit:
                raise self._too_small(tokens)
            self.base = tokens
            lo = (0, text, tokens)
        guess = round((aim - self.base) / self.rate)
        bracket_steps = 0
        for _ in range(_MAX_FIT_STEPS):
            if lo is not None and (lo[2] >= self.limit - tol or (hi is not None and hi[0] - lo[0] <= 1)):
                break
            if hi is not None and hi[0] == 0:
                break
            low_bound = lo[0] + 1 if lo is not None else 0
            high_bound = hi[0] - 1 if hi is not None else None
            units = max(guess, low_bound)
            if high_bound is not None:
                units = min(units, high_bound)
            text = build(units)
            tokens = self._count(text)
            if tokens <= self.limit:
                lo = (units, text, tokens)
            else:
                hi = (units, tokens)
            if lo is not None and hi is not None:
                bracket_steps += 1
                if bracket_steps <= _INTERPOLATION_STEPS and hi[1] > lo[2]:
                    slope = (hi[0] - lo[0]) / (hi[1] - lo[2])
                    guess = lo[0] + round((aim - lo[2]) * slope)
                else:
                    guess = (lo[0] + hi[0]) // 2
            else:
                # One side known: extrapolate with the tokens per unit seen in this very prompt when possible.
                units_seen, tokens_seen = (lo[0], lo[2]) if lo is not None else (hi[0], hi[1])  # type: ignore[index]
                rate = (tokens_seen - self.base) / units_seen if units_seen > 0 else self.rate
                rate = max(rate, 1e-3)
                guess = units_seen + round((aim - tokens_seen) / rate)
        if lo is None:
            # Every probe overflowed: the bare prompt of this example must fit, or the context is too small.
            text = build(0)
            tokens = self._count(text)
            if tokens > self.limit:
                raise self._too_small(tokens)
            lo = (0, text, tokens)
        if lo[0] > 0 and lo[2] > self.base:
            self.rate = (lo[2] - self.base) / lo[0]
        return lo


def _initial_rate(count_tokens: TokenCounter, unit: Callable[[int], str], sep: str) -> float:
    """Tokens per filler unit, from one tokenization of a sample of units."""
    sample = sep.join(unit(j) for j in range(_RATE_SAMPLE_UNITS))
    return max(count_tokens(sample) / _RATE_SAMPLE_UNITS, 1e-3)


def _fill(count: int, unit: Callable[[int], str], placements: Sequence[tuple[float, str]], sep: str) -> str:
    """Join `count` filler units with the placed strings inserted between units at their relative positions.

    A string at fraction f goes after round(f * count) filler units. Placements that land on the same slot keep
    their given order (variable-tracking chains rely on it).
    """
    slots = [round(fraction * count) for fraction, _ in placements]
    order = sorted(range(len(placements)), key=lambda p: (slots[p], p))
    pieces: list[str] = []
    done = 0
    for p in order:
        pieces.extend(unit(j) for j in range(done, slots[p]))
        done = slots[p]
        pieces.append(placements[p][1])
    pieces.extend(unit(j) for j in range(done, count))
    return sep.join(pieces)


def _depths(n: int, rng: random.Random) -> list[float]:
    """Evenly spread depths over [0, 1], shuffled so that any prefix of the examples (lm-eval --limit) still
    covers the whole range rather than only shallow needles."""
    depths = [0.5] if n == 1 else [i / (n - 1) for i in range(n)]
    rng.shuffle(depths)
    return depths


def _realized_depth(depth: float, count: int) -> float:
    """Where the needle actually is: it goes between filler units, at the slot `_fill` rounds it to."""
    return round(round(depth * count) / count, 4) if count else depth


def _rng(*parts: object) -> random.Random:
    # String seeds go through SHA-512 in random.seed, so they are stable across runs, machines and PYTHONHASHSEED.
    return random.Random("ruler/" + "/".join(str(part) for part in parts))


def _check_once(task: str, text: str, needles: Sequence[str], answers: Sequence[str], answers_once: bool) -> None:
    """Internal invariant: each needle occurs exactly once in the prompt, and each gold string occurs in it (once,
    where it is only in its needle; variable names also appear where the next hop refers to them)."""
    for needle in needles:
        if text.count(needle) != 1:
            raise RuntimeError(f"{task}: needle {needle!r} occurs {text.count(needle)} times in the prompt")
    for answer in answers:
        found = text.count(answer)
        if found < 1 or (answers_once and found != 1):
            raise RuntimeError(f"{task}: answer {answer!r} occurs {found} times in the prompt")


# ---------------------------------------------------------------------------------------------------------------
# Haystacks


def _module_docstrings(module_name: str) -> list[str]:
    """Docstrings of a module and of its public classes, methods and functions, in source order.

    They are read from the module's source with `ast` (cleaned as `inspect.getdoc` does) rather than from the
    live objects: libraries imported alongside (transformers adds methods to `logging.Logger`) change what
    `inspect.getdoc` over the objects finds, so the haystack would depend on what else the process imported.
    """
    spec = importlib.util.find_spec(module_name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise RuntimeError(f"the docs haystack needs the source of the standard-library module {module_name}")
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    docs: list[str] = []

    def visit(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        doc = ast.get_docstring(node, clean=True)
        if doc:
            docs.append(doc)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return  # helpers nested in functions are not API
        for child in node.body:
            is_def = isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            if is_def and not child.name.startswith("_"):
                visit(child)

    visit(tree)
    return docs


@functools.lru_cache(maxsize=1)
def docs_sentences() -> tuple[str, ...]:
    """Prose filler: sentences of the docstrings of `DOC_MODULES`, in a fixed order.

    Module, public class, method and function docstrings are taken in module then source order, deduplicated.
    Doctests, indented blocks and sentences with runs of 5+ digits are dropped: the first two are code, not
    prose, and the last could collide with needle values. Long sentences are cut at ~40 words so that the filler
    can be sized finely and needles fall between pieces of text.
    """
    docs: list[str] = []
    seen: set[str] = set()  # membership only; the order comes from `docs`
    for name in DOC_MODULES:
        for doc in _module_docstrings(name):
            if doc not in seen:
                seen.add(doc)
                docs.append(doc)

    sentences: list[str] = []
    for doc in docs:
        for paragraph in re.split(r"\n\s*\n", doc):
            lines = paragraph.splitlines()
            # Doctests and indented blocks (reST literal blocks after "::") are code, not prose.
            if ">>>" in paragraph or all(line[:1].isspace() for line in lines if line.strip()):
                continue
            flat = " ".join(paragraph.split())
            for sentence in re.split(r"(?<=[.!?])\s+", flat):
                if len(sentence) < 2 or re.search(r"\d{5}", sentence):
                    continue
                words = sentence.split()
                sentences.extend(" ".join(words[i : i + 40]) for i in range(0, len(words), 40))
    if len(sentences) < 100:
        raise RuntimeError("the docs haystack found almost no standard-library docstrings")
    return tuple(sentences)


def _noise_unit(j: int) -> str:
    return NOISE_SENTENCES[j % len(NOISE_SENTENCES)]


# ---------------------------------------------------------------------------------------------------------------
# Random needle material


def _pick_keys(rng: random.Random, count: int) -> list[str]:
    keys: list[str] = []
    while len(keys) < count:
        key = f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}"
        # Rejects repeats, and any key contained in another: the word lists avoid that, this keeps it true.
        if all(key not in other and other not in key for other in keys):
            keys.append(key)
    return keys


def _distinct_ints(rng: random.Random, count: int, low: int, high: int) -> list[int]:
    values: list[int] = []
    while len(values) < count:
        value = rng.randint(low, high)
        if value not in values:
            values.append(value)
    return values


def _uuid_like(rng: random.Random) -> str:
    # Seeded 128 random bits in UUID layout; uuid4() would use the OS entropy pool and break determinism.
    digits = f"{rng.getrandbits(128):032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def _var_name(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_uppercase) for _ in range(5))


# ---------------------------------------------------------------------------------------------------------------
# Generators


def niah(
    count_tokens: TokenCounter,
    context: int,
    n: int,
    seed: int,
    answer_tokens: int = 32,
    variant: str = "single",
    haystack: str = "noise",
    needles: int | None = None,
) -> list[Record]:
    """Needle in a haystack.

    A needle "One of the special magic numbers for {key} is: {7-digit number}." is hidden in filler text and the
    question at the end asks for the number of {key}. The queried needle's depth is spread evenly over [0, 1]
    across the n examples.

    variant: "single" (one needle); "multikey" (`needles` needles with different keys, one is asked for, the
        others are distractors at random depths); "multivalue" (`needles` numbers for the same key, all asked for;
        the first one sits at the example's depth, the others at random depths).
    haystack: "noise" (RULER's repeated sentences) or "docs" (standard-library docstrings).
    needles: number of needle sentences; 1 for "single" (the default there), default 4 for the other variants.
    """
    limit = _check_common(context, n, answer_tokens)
    if variant not in NIAH_VARIANTS:
        raise ValueError(f"unknown niah variant {variant!r}; expected one of {', '.join(NIAH_VARIANTS)}")
    if haystack not in HAYSTACKS:
        raise ValueError(f"unknown haystack {haystack!r}; expected one of {', '.join(HAYSTACKS)}")
    if needles is None:
        needles = 1 if variant == "single" else 4
    if variant == "single" and needles != 1:
        raise ValueError(f"niah variant 'single' has exactly one needle, got needles={needles}")
    if variant != "single" and (isinstance(needles, bool) or not isinstance(needles, int) or needles < 2):
        raise ValueError(f"niah variant {variant!r} needs needles >= 2, got {needles!r}")

    task = f"niah_{variant}" + ("_docs" if haystack == "docs" else "")
    corpus = docs_sentences() if haystack == "docs" else NOISE_SENTENCES
    fitter = _Fitter(count_tokens, limit, _initial_rate(count_tokens, lambda j: corpus[j % len(corpus)], " "), task)
    depths = _depths(n, _rng(task, seed, "depths"))
    records: list[Record] = []
    for i, depth in enumerate(depths):
        rng = _rng(task, seed, i)
        keys = _pick_keys(rng, needles if variant == "multikey" else 1)
        values = [str(v) for v in _distinct_ints(rng, needles, 1_000_000, 9_999_999)]
        if variant == "multivalue":
            pairs = [(keys[0], value) for value in values]
            question = (
                f"\nWhat are all the special magic numbers for {keys[0]} mentioned in the provided text? "
                f"The special magic numbers for {keys[0]} mentioned in the provided text are"
            )
            answers = values
        else:
            pairs = list(zip(keys, values, strict=True))
            question = (
                f"\nWhat is the special magic number for {keys[0]} mentioned in the provided text? "
                f"The special magic number for {keys[0]} mentioned in the provided text is"
            )
            answers = values[:1]
        sentences = [f"One of the special magic numbers for {key} is: {value}." for key, value in pairs]
        # The queried (or first) needle goes at the example's depth; the others anywhere.
        placements = [(depth, sentences[0])] + [(rng.random(), s) for s in sentences[1:]]
        start = rng.randrange(len(corpus))  # where in the docs this example's filler starts; noise: irrelevant

        def unit(j: int, start: int = start) -> str:
            return corpus[(start + j) % len(corpus)]

        def build(count: int, placements: list[tuple[float, str]] = placements, question: str = question) -> str:
            return _NIAH_PREAMBLE + _fill(count, unit, placements, " ") + question

        count, text, tokens = fitter.fit(build)
        _check_once(task, text, sentences, answers, answers_once=True)
        records.append(_record(task, context, seed, i, text, answers, tokens, _realized_depth(depth, count)))
    return records


def kv_retrieval(count_tokens: TokenCounter, context: int, n: int, seed: int, answer_tokens: int = 64) -> list[Record]:
    """Key-value retrieval: a JSON object of random UUID-like keys and values; the question asks for the value of
    one key. Every other pair is a distractor; the queried pair's depth is spread evenly over [0, 1]."""
    limit = _check_common(context, n, answer_tokens)
    task = "kv_retrieval"

    # Throwaway pairs, only to estimate the tokens per JSON line.
    sample_rng = _rng(task, seed, "rate")
    sample = [f'"{_uuid_like(sample_rng)}": "{_uuid_like(sample_rng)}"' for _ in range(_RATE_SAMPLE_UNITS)]
    fitter = _Fitter(count_tokens, limit, _initial_rate(count_tokens, sample.__getitem__, ",\n "), task)
    depths = _depths(n, _rng(task, seed, "depths"))
    records: list[Record] = []
    for i, depth in enumerate(depths):
        rng = _rng(task, seed, i)
        key, value = _uuid_like(rng), _uuid_like(rng)
        target = f'"{key}": "{value}"'
        # Distractors come from their own generator, so the first j pairs are the same however many are drawn.
        pool_rng = _rng(task, seed, i, "pool")
        pool: list[str] = []
        used = {key, value}  # membership only

        def unit(j: int, pool: list[str] = pool, pool_rng: random.Random = pool_rng, used: set[str] = used) -> str:
            while len(pool) <= j:
                k, v = _uuid_like(pool_rng), _uuid_like(pool_rng)
                if k in used or v in used or k == v:
                    continue
                used.update((k, v))
                pool.append(f'"{k}": "{v}"')
            return pool[j]

        placements = [(depth, target)]
        question = f'\n\nKey: "{key}"\nThe value associated with the specified key is:'

        def build(
            count: int, unit: Callable[[int], str] = unit, placements: list = placements, question: str = question
        ) -> str:
            return _KV_PREAMBLE + "{\n " + _fill(count, unit, placements, ",\n ") + "\n}" + question

        count, text, tokens = fitter.fit(build)
        _check_once(task, text, [target], [value], answers_once=True)
        records.append(_record(task, context, seed, i, text, [value], tokens, _realized_depth(depth, count)))
    return records


def variable_tracking(
    count_tokens: TokenCounter,
    context: int,
    n: int,
    seed: int,
    chains: int = 1,
    hops: int = 4,
    answer_tokens: int = 32,
) -> list[Record]:
    """Multi-hop tracing: "VAR ABCDE = 12345." then "VAR FGHIJ = VAR ABCDE." and so on, `hops` assignments per
    chain, interleaved with noise sentences. The question asks for every variable assigned the first chain's
    value; the other chains (own values) are distractors. Answers: the hops + 1 names of the first chain.

    The statements sit at random positions (in chain order), spanning the context, so `depth` is None.
    """
    limit = _check_common(context, n, answer_tokens)
    for label, value in (("chains", chains), ("hops", hops)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"variable_tracking needs {label} >= 1, got {value!r}")
    task = "variable_tracking"
    fitter = _Fitter(count_tokens, limit, _initial_rate(count_tokens, _noise_unit, " "), task)
    records: list[Record] = []
    for i in range(n):
        rng = _rng(task, seed, i)
        names: list[str] = []
        while len(names) < chains * (hops + 1):
            name = _var_name(rng)
            if name not in names:
                names.append(name)
        values = [str(v) for v in _distinct_ints(rng, chains, 10_000, 99_999)]
        placements: list[tuple[float, str]] = []
        statements: list[str] = []
        for c in range(chains):
            chain = names[c * (hops + 1) : (c + 1) * (hops + 1)]
            lines = [f"VAR {chain[0]} = {values[c]}."] + [
                f"VAR {chain[h]} = VAR {chain[h - 1]}." for h in range(1, hops + 1)
            ]
            # Sorted positions keep each chain in assignment order; chains interleave freely.
            placements.extend(zip(sorted(rng.random() for _ in lines), lines, strict=True))
            statements.extend(lines)
        answers = names[: hops + 1]
        question = (
            f"\nQuestion: Find all variables that are assigned the value {values[0]} in the text above. "
            f"Answer: According to the chain(s) of variable assignment in the text above, {hops + 1} variables are "
            f"assigned the value {values[0]}, they are:"
        )

        def build(count: int, placements: list[tuple[float, str]] = placements, question: str = question) -> str:
            return _VT_PREAMBLE + _fill(count, _noise_unit, placements, " ") + question

        _, text, tokens = fitter.fit(build)
        _check_once(task, text, statements, answers, answers_once=False)
        records.append(_record(task, context, seed, i, text, answers, tokens, None))
    return records


def _record(
    task: str, context: int, seed: int, index: int, text: str, answers: list[str], tokens: int, depth: float | None
) -> Record:
    return {
        "id": f"{task}-c{context}-s{seed}-{index:05d}",
        "task": task,
        "input": text,
        "answers": list(answers),
        "context_tokens": tokens,
        "depth": depth,
    }


# ---------------------------------------------------------------------------------------------------------------
# Registry and scoring

GENERATORS: dict[str, Callable[..., list[Record]]] = {
    "niah_single": functools.partial(niah, variant="single"),
    "niah_multikey": functools.partial(niah, variant="multikey"),
    "niah_multivalue": functools.partial(niah, variant="multivalue"),
    "kv_retrieval": kv_retrieval,
    "variable_tracking": variable_tracking,
}


def generate(name: str, count_tokens: TokenCounter, context: int, n: int, seed: int, **options: Any) -> list[Record]:
    """Generate n records of the named task; `options` go to the generator (e.g. haystack="docs", answer_tokens)."""
    if name not in GENERATORS:
        raise ValueError(f"unknown RULER task {name!r}; expected one of {', '.join(GENERATORS)}")
    return GENERATORS[name](count_tokens, context, n, seed, **options)


def score(prediction: str, answers: Sequence[str]) -> dict[str, float]:
    """RULER's string match, case-sensitive, after stripping whitespace.

    exact_match: 1.0 when every gold string occurs in the prediction ("string match all"), else 0.0.
    recall: the share of gold strings that occur in the prediction.
    """
    if isinstance(answers, str) or not answers:
        raise ValueError("answers must be a non-empty list of strings")
    text = prediction.strip()
    hits = sum(1 for answer in answers if answer.strip() in text)
    return {"exact_match": float(hits == len(answers)), "recall": hits / len(answers)}


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, float]:
    """lm-eval `process_results` hook for these records: the first generation scored against doc["answers"]."""
    return score(results[0], doc["answers"])
