"""On the GPU machine (its own python3, no wheels needed): is greedy generation at 20k tokens cheaper one prompt at a
time (no padding, so no mask: SDPA's causal path) than two left-padded prompts a batch (a materialized mask), as the
evaluation batches them now? Random Qwen2.5-0.5B shapes: only time and memory matter. About a minute.

    python3 tools/gpu-machine/generation-speed.py
"""

from __future__ import annotations

import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

SHAPES = [(1, 20000, 0), (2, 20000, 0), (2, 20000, 300), (1, 10000, 0), (2, 10000, 300), (4, 5000, 300),
          (1, 5000, 0)]  # (rows, prompt tokens, left padding of every row but the first)


def model() -> Qwen2ForCausalLM:
    config = Qwen2Config(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
                         tie_word_embeddings=False, attn_implementation="sdpa")
    torch.manual_seed(0)
    return Qwen2ForCausalLM(config).to("cuda", torch.bfloat16).eval()


def generate(lm: Qwen2ForCausalLM, rows: int, tokens: int, pad: int) -> tuple[float, float]:
    """Seconds for 24 greedy tokens after the batch, and the allocated peak in GiB."""
    ids = torch.randint(0, 150000, (rows, tokens), device="cuda")
    mask = torch.ones_like(ids)
    mask[1:, :pad] = 0
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.no_grad():
        lm.generate(input_ids=ids, attention_mask=mask, max_new_tokens=24, min_new_tokens=24, do_sample=False,
                    pad_token_id=0)
    torch.cuda.synchronize()
    return time.perf_counter() - start, torch.cuda.max_memory_allocated() / 2**30


def main() -> None:
    lm = model()
    generate(lm, 1, 2048, 0)  # warm-up: kernels chosen and compiled once
    for rows, tokens, pad in SHAPES:
        runs = [generate(lm, rows, tokens, pad) for _ in range(3)]
        best = min(seconds for seconds, _ in runs)
        peak = max(gib for _, gib in runs)
        print(f"rows={rows} tokens={tokens} pad={pad}: {best:.3f} s a batch, {best / rows:.3f} s a prompt, "
              f"peak {peak:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
