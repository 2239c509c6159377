"""Vocabulary slicing: keep N tokens, slice embedding and LM head to them. Why it is so: docs/stack.md."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from harness.core.setting import Setting
from harness.data.corpora import CORPORA, DEFAULT_CORPUS, texts
from harness.stack.contract import Plan, Technique
from harness.stack.token_map import TokenMap, byte_token_ids


def choose_kept(sequences: Iterable[Iterable[int]], vocab_size: int, target: int, protected: set[int]) -> list[int]:
    protected = {i for i in protected if 0 <= i < vocab_size}
    if len(protected) > target:
        raise ValueError(f"vocabulary {target} is smaller than the {len(protected)} special and byte tokens")
    kept = set(protected)
    counts = Counter(t for seq in sequences for t in seq)
    for token, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(kept) >= target:
            break
        kept.add(token)
    for token in range(vocab_size):
        if len(kept) >= target:
            break
        kept.add(token)
    return sorted(kept)


def _vocabulary_level(value: Any) -> str | None:
    if value == "native" or (isinstance(value, int) and not isinstance(value, bool) and value > 256):
        return None
    return f"{value!r} is neither 'native' nor a vocabulary size above 256"


def corpus_source(value: str) -> tuple[str, list[str]]:
    """'corpus:en,de' -> ("manpages", ["en", "de"]); 'corpus:help:es,ca,en' -> ("help", ["es", "ca", "en"]).

    No corpus name means the man-page corpus, so the older `corpus:<languages>` keeps its meaning.
    """
    rest = value[len("corpus:"):]
    corpus, _, langs = rest.rpartition(":")
    return corpus or DEFAULT_CORPUS, langs.split(",") if langs else []


def _source_level(value: Any) -> str | None:
    if value == "training":
        return None
    if isinstance(value, str) and value.startswith("corpus:"):
        corpus, wanted = corpus_source(value)
        if corpus not in CORPORA:
            known = "; ".join(f"{name} ({', '.join(langs)})" for name, langs in CORPORA.items())
            return f"{value!r}: unknown corpus {corpus!r}; known: {known}"
        languages = CORPORA[corpus]
        unknown = [lang for lang in wanted if lang not in languages]
        if not unknown and wanted:
            return None
        hint = (f" (to name the {wanted[0]} corpus, write 'corpus:{wanted[0]}:<languages>')"
                if wanted and wanted[0] in CORPORA and ":" not in value[len("corpus:"):] else "")
        return (f"{value!r}: unknown language(s) {', '.join(unknown) or '(none given)'} in corpus {corpus!r}; "
                f"known: {', '.join(languages)}{hint}")
    return (f"{value!r} is neither 'training' nor 'corpus:<languages>' (the manual pages, e.g. 'corpus:en,de') "
            "nor 'corpus:<corpus>:<languages>' (e.g. 'corpus:help:es,ca,en')")


def corpus_sequences(tokenizer: Any, languages: list[str], corpus: str = "manpages") -> list[list[int]]:
    return [tokenizer(text, add_special_tokens=False)["input_ids"] for lang in languages
            for text in texts(lang, "train", corpus=corpus)]


def kept_set(tokenizer: Any, settings: dict[str, Any], training: list[list[int]], native_size: int) \
        -> tuple[list[int], set[int]]:
    """The ids a cell's sliced vocabulary keeps, and the protected ones among them (special, added and byte
    tokens), from its tokenizer, its settings and its training sequences as built; `vramlab check --fresh` computes
    them again through this same function (harness/results/freshness.py)."""
    source = settings["vocabulary_source"]
    if source.startswith("corpus:"):
        corpus, languages = corpus_source(source)
        counted = corpus_sequences(tokenizer, languages, corpus)
    else:
        counted = training
    protected = set(tokenizer.all_special_ids) | set(tokenizer.added_tokens_decoder) | \
        set(byte_token_ids(tokenizer).values())
    return choose_kept(counted, native_size, settings["vocabulary"], protected), protected


class Vocabulary(Technique):
    axis = "vocabulary"
    settings = (
        Setting("vocabulary", object, "native",
                "'native', or a size: keep that many most frequent tokens and slice embedding and head",
                validate=_vocabulary_level, owner="vocabulary"),
        Setting("vocabulary_source", str, "training",
                "where token frequencies come from: 'training' (the cell's data), 'corpus:<languages>' "
                "(the manual pages, e.g. 'corpus:en': keep the tokens those languages use) or "
                "'corpus:<corpus>:<languages>' (e.g. 'corpus:help:es,ca,en', the GIMP manual)",
                validate=_source_level,
                hashed_at_default=False, owner="vocabulary"),
    )

    def after_load(self, model: Any, plan: Plan) -> Any:
        target = plan.level(self.axis)
        old_size = model.get_input_embeddings().weight.shape[0]
        if target == "native":
            plan.records["vocabulary"] = {"size": old_size}
            return model
        if target >= old_size:
            raise ValueError(f"vocabulary {target} is not smaller than the model's {old_size}")

        tok = plan.tokenizer
        training = plan.training
        source = plan.settings["vocabulary_source"]
        kept, protected = kept_set(tok, plan.settings, training.sequences, old_size)
        token_map = TokenMap.build(tok, kept, old_size)

        total = outside = lengthened = 0
        masks = training.completion_masks
        for i, sequence in enumerate(training.sequences):
            mask = masks[i] if masks is not None else [1] * len(sequence)
            ids, new_mask, out = token_map.encode_with_mask(sequence, mask)
            outside, total = outside + out, total + len(sequence)
            if len(ids) > plan.settings["context"]:  # spelled-out tokens made it longer than the context
                lengthened += len(ids) - plan.settings["context"]
                ids, new_mask = ids[:plan.settings["context"]], new_mask[:plan.settings["context"]]
            training.sequences[i] = ids
            if masks is not None:
                masks[i] = new_mask

        self._slice(model, kept)
        for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
            old = getattr(model.config, name, None)
            if isinstance(old, int) and 0 <= old < old_size:
                new = token_map.new_id(old)
                setattr(model.config, name, new if new is not None else token_map.new_id(token_map.fallback))
        plan.token_map = token_map
        plan.records["vocabulary"] = {
            "size": len(kept), "native_size": old_size, "protected_tokens": len(protected),
            "distinct_training_tokens": len({t for s in training.sequences for t in s}),
            "outside_share": outside / total if total else 0.0, "outside_tokens": outside,
            "fallback_token": token_map.fallback, "source": source,
            "outside_spelled_with": "bytes" if token_map.byte_ids else "the fallback token",
            "tokens_cut_after_spelling": lengthened,
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
