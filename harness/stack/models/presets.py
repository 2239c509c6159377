"""Architectures that can be built with random weights (`model: arch:<name>`).

The 8B presets copy the published configurations field by field: memory and speed depend on shapes,
never on weight values, so a randomly initialised copy measures the same as the real checkpoint.
Quality is another matter: cells on these models never get a quality score.
"""

from __future__ import annotations

from typing import Any

_LLAMA_31_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 8192}

PRESETS: dict[str, dict[str, Any]] = {
    # Qwen/Qwen3-8B config.json
    "qwen3-8b": {
        "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
        "max_position_embeddings": 40960, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False,
        "bos_token_id": 151643, "eos_token_id": 151645, "pad_token_id": 151643,
    },
    # meta-llama/Llama-3.1-8B config.json: the 128k vocabulary of the seed project
    "llama-3.1-8b": {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256,
        "max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": _LLAMA_31_ROPE,
        "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False,
        "mlp_bias": False, "bos_token_id": 128000, "eos_token_id": 128001, "pad_token_id": 128001,
    },
    # small shapes of the same two families, for tests and for trying a matrix on a CPU
    "tiny-llama": {
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 2048,
        "max_position_embeddings": 131072, "rope_theta": 10000.0, "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1,
    },
    "tiny-qwen3": {
        "model_type": "qwen3", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 2048,
        "max_position_embeddings": 32768, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1,
    },
}


def preset(name: str) -> dict[str, Any]:
    if name not in PRESETS:
        raise ValueError(f"unknown architecture preset {name!r}; known: {', '.join(sorted(PRESETS))}")
    return dict(PRESETS[name])
