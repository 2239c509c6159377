"""Vocabulary slicing: keep a set of tokens, slice embedding and LM head to them, and make the training data again in
the kept tokens, spelled before it is fitted to the context. Why it is so: docs/stack.md."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.core.setting import Setting
from harness.data.corpora import CORPORA, DEFAULT_CORPUS, texts
from harness.data.training import spelled, training_text
from harness.stack.contract import Plan, Technique
from harness.stack.token_map import TokenMap, byte_token_ids

COUNTED = "counted"  # the level that keeps the counted and protected tokens and nothing else
WITH_TRAINING = "+training"  # after a corpus source: count the cell's own training data too


@dataclass(frozen=True)
class KeptSet:
    ids: list[int]  # sorted tokenizer ids
    counted: int  # distinct tokens in the counting text
    filled: int  # ids kept only to reach the size asked: neither protected nor counted
    left_out: int  # counted tokens not kept, the size asked being smaller than the protected and counted ones
    fill_rule: str  # how the filled ids were chosen


def choose_kept(sequences: Iterable[Iterable[int]], vocab_size: int, target: int | str,
                protected: set[int]) -> KeptSet:
    """The protected tokens, then: at `counted`, every counted token and nothing more; at a size, the most frequent
    counted tokens, then the lowest ids not yet kept until the size is reached."""
    protected = {i for i in protected if 0 <= i < vocab_size}
    counts = Counter(t for seq in sequences for t in seq if 0 <= t < vocab_size)
    if target == COUNTED:
        return KeptSet(sorted(protected | set(counts)), len(counts), 0, 0, "none")
    target = int(target)
    if len(protected) > target:
        raise ValueError(f"vocabulary {target} is smaller than the {len(protected)} special and byte tokens")
    kept = set(protected)
    for token, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(kept) >= target:
            break
        kept.add(token)
    chosen = len(kept)
    for token in range(vocab_size):
        if len(kept) >= target:
            break
        kept.add(token)
    return KeptSet(sorted(kept), len(counts), len(kept) - chosen, len(counts.keys() - kept), "lowest ids")


def _vocabulary_level(value: Any) -> str | None:
    if value in ("native", COUNTED) or (isinstance(value, int) and not isinstance(value, bool) and value > 256):
        return None
    return f"{value!r} is neither 'native' nor a vocabulary size above 256 nor '{COUNTED}'"


def corpus_source(value: str) -> tuple[str, list[str]]:
    """'corpus:en,de' -> ("manpages", ["en", "de"]); 'corpus:help:es,ca,en' -> ("help", ["es", "ca", "en"]); a
    trailing '+training' is not part of the languages.

    No corpus name means the man-page corpus, so the older `corpus:<languages>` keeps its meaning.
    """
    rest = value[len("corpus:"):].removesuffix(WITH_TRAINING)
    corpus, _, langs = rest.rpartition(":")
    return corpus or DEFAULT_CORPUS, langs.split(",") if langs else []


def counts_training(source: str) -> bool:
    """Whether the source counts the cell's own training data."""
    return source == "training" or source.endswith(WITH_TRAINING)


_SOURCE_FORMS = ("neither 'training' nor 'corpus:<languages>' (the manual pages, e.g. 'corpus:en,de') "
                 "nor 'corpus:<corpus>:<languages>' (e.g. 'corpus:help:es,ca,en'), nor a corpus form followed by "
                 "'+training' (the corpus and the training data, e.g. 'corpus:help:es,ca,en+training')")


def _source_level(value: Any) -> str | None:
    if value == "training":
        return None
    if not (isinstance(value, str) and value.startswith("corpus:")):
        return f"{value!r} is {_SOURCE_FORMS}"
    rest = value[len("corpus:"):]
    if rest.count("+") > (1 if rest.endswith(WITH_TRAINING) else 0):
        return (f"{value!r}: only '+training', once and at the end, may follow the languages "
                "(e.g. 'corpus:help:es,ca,en+training')")
    rest = rest.removesuffix(WITH_TRAINING)
    corpus, wanted = corpus_source(value)
    if corpus not in CORPORA:
        known = "; ".join(f"{name} ({', '.join(langs)})" for name, langs in CORPORA.items())
        return f"{value!r}: unknown corpus {corpus!r}; known: {known}"
    languages = CORPORA[corpus]
    unknown = [lang for lang in wanted if lang not in languages]
    if not unknown and wanted:
        return None
    hint = (f" (to name the {wanted[0]} corpus, write 'corpus:{wanted[0]}:<languages>')"
            if wanted and wanted[0] in CORPORA and ":" not in rest else "")
    return (f"{value!r}: unknown language(s) {', '.join(unknown) or '(none given)'} in corpus {corpus!r}; "
            f"known: {', '.join(languages)}{hint}")


def corpus_sequences(tokenizer: Any, languages: list[str], corpus: str = "manpages") -> list[list[int]]:
    return [tokenizer(text, add_special_tokens=False)["input_ids"] for lang in languages
            for text in texts(lang, "train", corpus=corpus)]


def kept_set(tokenizer: Any, settings: dict[str, Any], training: Any, native_size: int) -> tuple[KeptSet, set[int]]:
    """The ids a cell's sliced vocabulary keeps and the protected ones among them (special, added and byte tokens),
    counted over the corpus's training split, the cell's training data (its documents' whole text), or both;
    `vramlab check --fresh` computes them again through this same function (harness/spec/fingerprint_here.py)."""
    source = settings["vocabulary_source"]
    protected = set(tokenizer.all_special_ids) | set(tokenizer.added_tokens_decoder) | \
        set(byte_token_ids(tokenizer).values())
    counted: list[Any] = []
    if source.startswith("corpus:"):
        corpus, languages = corpus_source(source)
        counted += corpus_sequences(tokenizer, languages, corpus)
    if counts_training(source):
        counted += training_text(training, settings, tokenizer)
    kept = choose_kept(counted, native_size, settings["vocabulary"], protected)
    if len(kept.ids) >= native_size:
        raise ValueError(f"the source {source!r} counts every one of the model's {native_size} tokens: "
                         "nothing would be sliced")
    return kept, protected


def sliced_training(tokenizer: Any, settings: dict[str, Any], training: Any, native_size: int) \
        -> tuple[KeptSet, set[int], TokenMap, Any]:
    """The kept set, its protected ids, its token map, and the training data made again in the kept tokens
    (spelled first, then fitted to the context): what a sliced cell trains on, and what the check recomputes."""
    kept, protected = kept_set(tokenizer, settings, training, native_size)
    token_map = TokenMap.build(tokenizer, kept.ids, native_size)
    return kept, protected, token_map, spelled(training, settings, tokenizer, native_size, token_map.spell_marked)


class Vocabulary(Technique):
    axis = "vocabulary"
    settings = (
        Setting("vocabulary", object, "native",
                "'native'; 'counted': keep exactly the tokens counted in the source, and the special, added and byte "
                "tokens; or a size: keep that many, the most frequent counted tokens first, then the lowest ids; "
                "embedding and head are sliced to the kept tokens",
                validate=_vocabulary_level, owner="vocabulary"),
        Setting("vocabulary_source", str, "training",
                "the text whose tokens are counted: 'training' (the cell's training data), 'corpus:<languages>' "
                "(the manual pages, e.g. 'corpus:en': keep the tokens those languages use), "
                "'corpus:<corpus>:<languages>' (e.g. 'corpus:help:es,ca,en', the GIMP manual), or a corpus form "
                "followed by '+training' (the corpus and the training data, so the model trains without spelling)",
                validate=_source_level,
                hashed_at_default=False, owner="vocabulary"),
    )

    def after_load(self, model: Any, plan: Plan) -> Any:
        target = plan.level(self.axis)
        old_size = model.get_input_embeddings().weight.shape[0]
        if target == "native":
            plan.records["vocabulary"] = {"size": old_size}
            return model
        if target != COUNTED and target >= old_size:
            raise ValueError(f"vocabulary {target} is not smaller than the model's {old_size}")

        tok, settings = plan.tokenizer, plan.settings
        source = settings["vocabulary_source"]
        kept, protected, token_map, training = sliced_training(tok, settings, plan.training, old_size)
        plan.training = training
        over = [len(s) - settings["context"] for s in training.sequences if len(s) > settings["context"]]
        text, outside = training.detail["text_tokens"], training.detail["outside_tokens"]

        self._slice(model, kept.ids)
        for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
            old = getattr(model.config, name, None)
            if isinstance(old, int) and 0 <= old < old_size:
                new = token_map.new_id(old)
                setattr(model.config, name, new if new is not None else token_map.new_id(token_map.fallback))
        plan.token_map = token_map
        plan.records["vocabulary"] = {
            "size": len(kept.ids), "native_size": old_size, "protected_tokens": len(protected),
            "counted_tokens": kept.counted, "filled_ids": kept.filled, "fill_rule": kept.fill_rule,
            "counted_left_out": kept.left_out, "source": source,
            "distinct_training_tokens": len({t for s in training.sequences for t in s}),
            "outside_share": outside / text if text else 0.0, "outside_tokens": outside,
            "fallback_token": token_map.fallback,
            "outside_spelled_with": "bytes" if token_map.byte_ids else "the fallback token",
            # a sequence longer than the context would be cut from its end, where its target is
            "targets_cut_after_spelling": training.detail.get("targets_cut", 0) + len(over),
            "tokens_cut_after_spelling": sum(over),
            "targets_skipped": training.detail.get("targets_skipped", 0),
            "training_fingerprint": training.fingerprint,
        }
        return model

    @staticmethod
    def _slice(model: Any, kept_ids: list[int]) -> None:
        """Keep the rows of `kept_ids` in the input embedding and LM head, in place: the modules stay the same
        objects, so hooks a library installed on them keep working (Unsloth may have moved the input embedding
        to host memory, with hooks that bring its output back to the device), and each matrix stays where it is."""
        import torch

        inp = model.get_input_embeddings()
        out = model.get_output_embeddings()
        tied = out is not None and out.weight is inp.weight

        def rows(tensor: Any) -> Any:
            kept = torch.tensor(kept_ids, device=tensor.device)
            return torch.nn.Parameter(tensor.data.index_select(0, kept), requires_grad=tensor.requires_grad)

        inp.weight = rows(inp.weight)
        inp.num_embeddings, inp.padding_idx = len(kept_ids), None
        if out is not None:
            out.weight = inp.weight if tied else rows(out.weight)
            if getattr(out, "bias", None) is not None:
                out.bias = rows(out.bias)
            out.out_features = len(kept_ids)
        model.config.vocab_size = len(kept_ids)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
