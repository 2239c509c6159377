"""Model FLOPs per trained token, and the machine's measured peak rate, for an MFU estimate.

Per token, with N the parameters of every matrix multiply (attention and MLP projections of all
layers, plus the LM head; the embedding is a lookup, not a multiply):
  forward                      2N
  backward, input gradients    2N      (frozen base weights get no weight gradients)
  backward, weight gradients   2N      only for full fine-tuning; LoRA's own are ~2·(r/d) of it, ignored
  attention scores and values  2·L·T·H·Dh forward with a causal mask (QKᵀ and AV, each 2·T·H·Dh
                               multiply-adds over the T/2 positions seen on average), x3 with backward
So LoRA: 4N + 6·L·T·H·Dh; full fine-tuning: 6N + 6·L·T·H·Dh. Recomputation by checkpointing is not
counted: MFU counts the model's FLOPs, not the hardware's.
"""

from __future__ import annotations

import json
import time
from typing import Any


def matmul_parameters(config: Any) -> int:
    d = config.hidden_size
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or d // heads
    kv = getattr(config, "num_key_value_heads", None) or heads
    attention = d * heads * head_dim + 2 * d * kv * head_dim + heads * head_dim * d
    mlp = 3 * d * config.intermediate_size
    return config.num_hidden_layers * (attention + mlp) + d * config.vocab_size


def flops_per_token(config: Any, context: int, lora: bool) -> float:
    n = matmul_parameters(config)
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    attention = 6 * config.num_hidden_layers * context * heads * head_dim
    return (4 if lora else 6) * n + attention


def measure_peak_flops(device: str, dtype: Any, size: int = 8192, repeats: int = 20) -> float:
    """Dense matrix-multiply rate of this device in `dtype`, the ceiling MFU is taken against."""
    import torch

    if device == "cpu":
        size, repeats = 1024, 5
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    return 2 * size**3 * repeats / (time.perf_counter() - start)


def cached_peak_flops(cache_dir, device: str, dtype: Any, device_name: str) -> float:
    """Measured once per machine and dtype, then read back from the cache folder."""
    from pathlib import Path

    path = Path(cache_dir) / "peak_flops.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    key = f"{device_name}|{dtype}"
    if key not in known:
        known[key] = measure_peak_flops(device, dtype)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(known, indent=2))
    return known[key]
