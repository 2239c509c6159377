"""Small pieces with exact answers: data, vocabulary choice, the CPU loss port, budget judgement."""

from __future__ import annotations

import pytest
import torch

from harness.core.budget import Budget
from harness.data import training as data
from harness.run.lm_head_loss import TorchChunkedLogProb, ensure_lm_head_loss
from harness.run.trackers import summarize_steps
from harness.stack.techniques.vocabulary import choose_kept
from harness.stack.token_map import byte_level_symbols


def test_zipf_data_is_deterministic_full_and_skewed():
    a = data.build("zipf", None, 5000, context=256, count=8, seed=1)
    b = data.build("zipf", None, 5000, context=256, count=8, seed=1)
    assert a.fingerprint == b.fingerprint and a.sequences == b.sequences
    assert all(len(s) == 256 for s in a.sequences)
    counts = torch.bincount(torch.tensor(a.sequences).flatten(), minlength=5000)
    top = counts.sort(descending=True).values
    assert top[:50].sum() > top[-2500:].sum()  # a few ids carry much of the mass
    assert data.build("zipf", None, 5000, 256, 8, seed=2).fingerprint != a.fingerprint


def test_stdlib_corpus_is_english_prose():
    docs = data.stdlib_documents()
    assert len(docs) == len(data.STDLIB_MODULES)
    assert sum(len(d) for d in docs) > 300_000
    assert "Module json." in docs[data.STDLIB_MODULES.index("json")]


def test_packing_wraps_around_instead_of_padding():
    assert data._pack([1, 2, 3, 4, 5], 2, 4) == [[1, 2], [3, 4], [1, 2], [3, 4]]


def test_vocabulary_keeps_protected_then_most_frequent_then_lowest_ids():
    sequences = [[9, 9, 9, 7, 7, 5, 300]]
    kept = choose_kept(sequences, vocab_size=400, target=5, protected={0, 1})
    assert kept.ids == [0, 1, 5, 7, 9]  # 300 and 5 are tied at one use: the lower id wins
    assert choose_kept([[3]], vocab_size=10, target=4, protected={9}).ids == [0, 1, 3, 9]
    with pytest.raises(ValueError, match="smaller than the 3 special"):
        choose_kept([[1]], vocab_size=10, target=2, protected={1, 2, 3})


def test_byte_level_alphabet_is_the_256_bytes():
    symbols = byte_level_symbols()
    assert len(set(symbols)) == 256 and symbols[ord("A")] == "A" and symbols[ord(" ")] == "Ġ"  # Ġ: the space byte


@pytest.mark.slow
def test_cpu_loss_port_matches_full_logits():
    torch.manual_seed(0)
    hidden = torch.randn(2500, 32, requires_grad=True)
    weight = torch.randn(300, 32, requires_grad=True)
    targets = torch.randint(0, 300, (2500,))
    log_probs, entropy, _, _, is_top1 = TorchChunkedLogProb.apply(
        hidden, weight, None, targets, 1.0, 4096, None, 1.0, ("entropy", "is_top1"))
    full = torch.log_softmax(hidden @ weight.t(), dim=-1)
    expected = full.gather(1, targets[:, None]).squeeze(1)
    torch.testing.assert_close(log_probs, expected)
    torch.testing.assert_close(entropy, -(full.exp() * full).sum(-1))
    assert torch.equal(is_top1, full.argmax(-1) == targets)
    grad, = torch.autograd.grad(log_probs.sum(), hidden)
    expected_grad, = torch.autograd.grad(expected.sum(), hidden)
    torch.testing.assert_close(grad, expected_grad)


def test_step_summary_excludes_warmup_and_reports_spread():
    summary = summarize_steps([30.0, 2.0, 2.2, 1.8, 2.0, 2.4], warmup=1, tokens_per_step=1000)
    assert summary["measured_steps"] == 5
    assert summary["median_step_seconds"] == 2.0
    assert summary["tokens_per_second"] == 500.0
    assert summary["min_step_seconds"] == 1.8 and summary["max_step_seconds"] == 2.4
    assert summary["step_seconds_iqr"] > 0


def test_budget_judges_the_whole_process_peak():
    budget = Budget.from_settings({"budget": "16GiB"}, cuda=False)
    assert budget.judge(15 * 2**30) is None
    assert "16.50 GiB, over the 16.00 GiB budget" in budget.judge(int(16.5 * 2**30))


@pytest.mark.slow
@pytest.mark.parametrize("level", ["on", "offload"])
def test_checkpointing_gives_the_gradients_of_plain_backprop(level):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    from harness.stack.backends.huggingface import HuggingFaceBackend
    from harness.stack.models.presets import PRESETS

    def lora_grads(checkpointing: str) -> dict[str, torch.Tensor]:
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**PRESETS["tiny-llama"]))
        model = HuggingFaceBackend().enable_checkpointing(model, checkpointing, {})
        model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "down_proj"],
                                                 init_lora_weights=False))
        model.train()
        ids = torch.randint(0, 2048, (2, 40), generator=torch.Generator().manual_seed(1))
        model(input_ids=ids, labels=ids).loss.backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}

    plain, checkpointed = lora_grads("off"), lora_grads(level)
    assert plain.keys() == checkpointed.keys() and len(plain) == 8
    for name in plain:
        torch.testing.assert_close(checkpointed[name], plain[name], rtol=1e-4, atol=1e-6)


def test_slicing_the_vocabulary_keeps_the_modules_and_the_hooks_a_library_put_on_them():
    # Unsloth may have moved the input embedding to host memory with hooks on that module; slicing must keep
    # the module (and so its hooks) and slice each matrix where it is
    from transformers import LlamaConfig, LlamaForCausalLM

    from harness.stack.techniques.vocabulary import Vocabulary

    model = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2))
    embedding, head = model.get_input_embeddings(), model.get_output_embeddings()
    kept = [5, 1, 7]
    rows_before = embedding.weight[kept].clone(), head.weight[kept].clone()
    seen = []
    embedding.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    Vocabulary._slice(model, kept)
    assert model.get_input_embeddings() is embedding and model.get_output_embeddings() is head
    assert torch.equal(embedding.weight, rows_before[0]) and torch.equal(head.weight, rows_before[1])
    assert embedding.num_embeddings == head.out_features == model.config.vocab_size == 3
    logits = model(torch.tensor([[0, 2, 1]])).logits
    assert seen == [(1, 3, 16)] and logits.shape == (1, 3, 3)


@pytest.mark.slow
def test_the_record_names_unsloths_kernel_where_unsloth_put_it_in_trls_slot(monkeypatch):
    from trl.trainer import utils as trl_utils

    class UnslothWrapper:  # how unsloth/models/rl.py's _UnslothFusedLinearHead marks the TRL kernel it wraps
        _unsloth_fused_linear = True

    class TrlKernel:
        pass

    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", UnslothWrapper())
    assert ensure_lm_head_loss() == "unsloth_zoo fused_linear_logprobs (Unsloth's kernel in TRL's slot)"
    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", TrlKernel)
    assert ensure_lm_head_loss() == "trl ChunkedLogProbFunction (Triton)"

