"""A sliced vocabulary applied to a cell's real training data with the real tokenizers (Qwen2.5-Coder's, built from
its GGUF file, and the placeholder of a random-weight model): every target kept whole, `counted` keeping exactly
the counted and protected tokens, the recorded numbers right, and vocab-16gb's data as its results trained on it.
The model is a real one-layer transformers model with the tokenizer's vocabulary, so the slicing runs as in a cell."""

from __future__ import annotations

import pytest

from harness.data import training as data_module
from harness.data.corpora import texts
from harness.data.workload.documents import SECTION_SEPARATOR
from harness.spec.matrix import expand, expand_spec
from harness.stack.contract import LoadRequest, Plan
from harness.stack.techniques.vocabulary import Vocabulary
from harness.stack.token_map import byte_token_ids

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def qwen(cache_dir):
    """Qwen2.5-Coder-0.5B's tokenizer as every cell of that model gets it (about 40 s on 2 cores)."""
    from harness.stack.models.gguf_tokenizer import gguf_tokenizer
    from harness.stack.models.sources import PackageModelError, source_gguf

    try:
        return gguf_tokenizer(source_gguf("package:qwen2.5-coder-0.5b"))
    except PackageModelError as err:
        pytest.skip(str(err))


def _cell(settings: dict) -> dict:
    spec = {"fixed": {"model": "package:qwen2.5-coder-0.5b", "data": "grant-reports", "completion_only": "on",
                      "documents": 2, "document_words": 1600, "steps": 10, "warmup_steps": 1, "grad_accum": 2,
                      "batch_size": 1, **settings}, "design": "list", "cells": [{"name": "sliced"}]}
    return expand_spec("m", spec, check_model=False)[0].settings


def _sliced(tokenizer, settings: dict) -> tuple[Plan, data_module.TrainingData, object]:
    """The cell's data built as train.py builds it, then the vocabulary technique applied to a real model."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1))
    plan = Plan(settings=settings, runtime=None, backend=None, load=LoadRequest(), tokenizer=tokenizer)
    plan.training = native = data_module.build_for(settings, tokenizer, len(tokenizer), random_weights=False)
    return plan, native, Vocabulary().after_load(model, plan)


def _protected(tokenizer) -> set[int]:
    return {*tokenizer.all_special_ids, *tokenizer.added_tokens_decoder, *byte_token_ids(tokenizer).values()}


def test_a_sliced_cell_at_a_small_context_keeps_every_target_whole(qwen):
    # Spanish tokens kept for English reports: a section of 240-620 tokens is 1,200-3,100 once spelled
    settings = _cell({"context": 2048, "vocabulary": 2000, "vocabulary_source": "corpus:help:es"})
    plan, native, model = _sliced(qwen, settings)
    token_map, record, training = plan.token_map, plan.records["vocabulary"], plan.training
    sections = {s.text for d in data_module.training_documents(settings) for s in d.sections}
    spelled = {text: token_map.spell_marked(qwen(text, add_special_tokens=False)["input_ids"])[0]
               for text in sections}
    # spelling the data as built, then cutting it to the context (as before), would have cut targets here
    assert sum(len(token_map.encode(s)[0]) > 2048 for s in native.sequences) > 0
    for ids, mask in zip(training.sequences, training.completion_masks, strict=True):
        target = ids[mask.index(1):]
        assert len(ids) <= 2048 and qwen.decode(token_map.decode_ids(target)) in sections
        assert target == spelled[qwen.decode(token_map.decode_ids(target))]  # whole, in the model's tokens
    pairs = [s.text for d in data_module.training_documents(settings) for s in d.sections[1:]]
    assert len(training.sequences) >= len(pairs)  # every pair visited: the skipped ones are all the too long ones
    assert record["targets_skipped"] == sum(len(spelled[t]) > 2048 for t in pairs) > 0
    assert record["targets_cut_after_spelling"] == record["tokens_cut_after_spelling"] == 0
    assert record["size"] == 2000 == model.get_input_embeddings().weight.shape[0] == model.config.vocab_size
    counted = {t for text in texts("es", "train", corpus="help") for t in qwen(text, add_special_tokens=False)[
        "input_ids"]}
    kept = set(token_map.kept)
    assert record["counted_tokens"] == len(counted)
    assert record["filled_ids"] == len(kept - _protected(qwen) - counted) and record["fill_rule"] == "lowest ids"
    assert record["counted_left_out"] == len(counted - kept) > 0  # 2,000 hold fewer than Spanish uses
    assert 0 < record["outside_share"] < 1 and record["outside_spelled_with"] == "bytes"


def test_the_recorded_outside_share_is_the_share_of_the_trained_tokens_outside_the_kept_set(qwen):
    # a context that holds every document whole: nothing is cut, so the trained text is the native one, spelled
    settings = _cell({"context": 32768, "truncation": "none", "vocabulary": 3000,
                      "vocabulary_source": "corpus:help:es"})
    plan, native, _ = _sliced(qwen, settings)
    kept = set(plan.token_map.kept)
    record = plan.records["vocabulary"]
    outside = sum(t not in kept for s in native.sequences for t in s)
    total = sum(len(s) for s in native.sequences)
    assert 0 < outside < total
    assert record["outside_tokens"] == outside and record["outside_share"] == pytest.approx(outside / total)
    assert plan.training.sequences == [plan.token_map.encode(s)[0] for s in native.sequences]


def test_counted_keeps_exactly_the_counted_and_protected_tokens_and_trains_without_spelling(qwen):
    settings = _cell({"context": 1024, "vocabulary": "counted", "vocabulary_source": "corpus:help:es,ca,en+training"})
    plan, native, model = _sliced(qwen, settings)

    def ids(text: str) -> list[int]:
        return qwen(text, add_special_tokens=False)["input_ids"]

    counted = {t for lang in ("es", "ca", "en") for text in texts(lang, "train", corpus="help") for t in ids(text)}
    counted |= {t for d in data_module.training_documents(settings) for s in d.sections for t in ids(s.text)}
    counted |= set(ids(SECTION_SEPARATOR))
    record = plan.records["vocabulary"]
    assert plan.token_map.kept == sorted(counted | _protected(qwen))
    assert record["size"] == len(counted | _protected(qwen)) == model.get_input_embeddings().weight.shape[0]
    assert (record["counted_tokens"], record["filled_ids"], record["fill_rule"]) == (len(counted), 0, "none")
    assert record["protected_tokens"] == len(_protected(qwen)) and record["source"].endswith("+training")
    # the training data's every token is kept: the sequences are the native ones under their new ids
    assert plan.training.sequences == [plan.token_map.encode(s)[0] for s in native.sequences]
    assert record["outside_share"] == record["outside_tokens"] == 0
    assert record["targets_cut_after_spelling"] == record["targets_skipped"] == 0


def test_vocab_16gb_trains_on_the_data_its_committed_results_trained_on(cache_dir):
    """Random weights, a placeholder tokenizer without byte tokens: a sliced-away token becomes the fallback token,
    one for one, so packing again after spelling gives the rows the results were measured with."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from harness.stack.models.presets import PRESETS
    from harness.stack.models.sources import make_placeholder_tokenizer

    cell = next(c for c in expand("vocab-16gb") if c.settings["vocabulary"] == 32000)
    tokenizer = make_placeholder_tokenizer(151936, PRESETS["qwen3-8b"])
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=151936, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                         num_attention_heads=1, num_key_value_heads=1))
    plan = Plan(settings=cell.settings, runtime=None, backend=None, load=LoadRequest(), tokenizer=tokenizer)
    plan.training = native = data_module.build_for(cell.settings, tokenizer, 151936, random_weights=True)
    Vocabulary().after_load(model, plan)
    remapped = [plan.token_map.encode(s) for s in native.sequences]  # how the results' cells remapped them
    assert plan.training.sequences == [ids for ids, _ in remapped]
    record = plan.records["vocabulary"]
    assert record["outside_tokens"] == sum(out for _, out in remapped)
    assert (record["size"], record["source"], record["outside_spelled_with"]) == (32000, "training",
                                                                                 "the fallback token")
