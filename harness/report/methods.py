"""reports/<matrix>/methods.md: the methods paragraph a paper needs, generated from the report's tables
(cells.csv, environment.csv, design.json) so that it never disagrees with them: the hardware and how the budget
was applied, the software versions the result files recorded, the data, seeds and steps, and what each reported
quantity means.
"""

from __future__ import annotations

import pandas as pd

from harness.report.frames import Frames

GIB = 2**30
# libraries named in the software list, in this order, where the result files recorded them
LIBRARIES = ("torch", "transformers", "peft", "trl", "accelerate", "bitsandbytes", "liger-kernel", "unsloth",
             "flash-attn", "triton", "lm-eval", "datasets", "tokenizers", "snakemake", "nvidia-ml-py")


def _listed(values: pd.Series) -> str:
    found = [str(v) for v in dict.fromkeys(values.dropna()) if str(v) != ""]
    return ", ".join(found) if found else "–"


def _known(row: pd.Series, key: str) -> str:
    value = row.get(key)
    return "not recorded" if value is None or pd.isna(value) else str(value)


def _hardware(env: pd.DataFrame, cells: pd.DataFrame, frames: Frames) -> list[str]:
    lines = []
    for _, row in env.iterrows():
        cpu = f"host CPU {row['cpu']}" + (f" ({int(row['cpu_count'])} cores)" if pd.notna(row.get("cpu_count")) else "")
        if pd.notna(row.get("gpu")):
            memory = f", {row['gpu_memory_bytes'] / GIB:.0f} GiB" if pd.notna(row.get("gpu_memory_bytes")) else ""
            capability = f", compute capability {row['gpu_capability']}" if pd.notna(row.get("gpu_capability")) else ""
            device = (f"one {row['gpu']}{memory}{capability}; CUDA {_known(row, 'cuda')}, driver "
                      f"{_known(row, 'driver')}; {cpu}")
        else:
            device = f"the CPU only: {cpu}"
        lines.append(f"- {int(row['cells'])} cell{'s' if row['cells'] != 1 else ''}: {device}; Python "
                     f"{row['python']}.")
    budgets = cells["budget_bytes"].dropna()
    if len(budgets):
        budget = f"{budgets.iloc[0] / GIB:.2f} GiB"
        if frames.on_cpu:
            lines.append(f"- Budget {budget}, judged on the process's peak resident set (the cells ran on the CPU; "
                         "no GPU memory is measured).")
        elif env.get("allocator_capped", pd.Series(dtype=bool)).astype(str).eq("True").any():
            lines.append(f"- Budget {budget} on a larger card, emulated: PyTorch's caching allocator is capped at the "
                         "budget less the memory outside it (CUDA context, library workspaces, kernel modules, "
                         "bitsandbytes' paged optimizer state), and the whole process's device memory, sampled "
                         "through NVML, is judged against the budget: a cell is `ok` only if that peak stays "
                         "within it, as on a real card of that size.")
        else:
            lines.append(f"- Budget {budget}, judged on {_listed(env.get('budget_judged_on', pd.Series()))}.")
    return lines


def _software(env: pd.DataFrame) -> list[str]:
    columns = [f"version:{name}" for name in LIBRARIES if f"version:{name}" in env]
    parts = [f"{c.split(':', 1)[1]} {_listed(env[c])}" for c in columns if env[c].notna().any()]
    return [f"- {', '.join(parts)}."] if parts else []


def markdown(frames: Frames, environment: pd.DataFrame | None, title: str, quality: bool) -> str:
    cells = frames.cells
    ran = cells[cells["status"] != "pending"]
    lines = [f"# Methods: {title}", "",
             "Generated from this folder's `cells.csv`, `environment.csv` and `design.json` (the result files' own "
             "records); every number here is theirs.", "", "## Hardware and budget", ""]
    env = environment if environment is not None else pd.DataFrame()
    lines += _hardware(env, cells, frames) if len(env) else ["- No environment was recorded."]
    lines += ["", "## Software", ""]
    lines += _software(env) or ["- No versions were recorded."]
    steps = ", ".join(f"{int(s):,}" for s in sorted(ran["steps"].dropna().unique()))
    warmup = ", ".join(f"{int(s):,}" for s in sorted(ran["warmup_steps"].dropna().unique()))
    seeds = ", ".join(str(int(s)) for s in sorted(ran["seed"].dropna().unique()))
    contexts = ", ".join(f"{int(c):,}" for c in sorted(ran["context"].dropna().unique()))
    lines += ["", "## Models, data, seeds and steps", "",
              f"- Models: {_listed(ran['model'])}" + ("; random weights (memory and speed only)."
                                                       if ran["random_weights"].fillna(False).astype(bool).any()
                                                       else "."),
              f"- Data: {_listed(ran['data'])}; context {contexts} tokens; batch size "
              f"{_listed(ran['batch_size'])}, gradient accumulation {_listed(ran['grad_accum'])}.",
              f"- {len(ran)} cells of {len(cells)} have a result; seeds {seeds or '–'}; optimizer steps per cell: "
              f"{steps or '–'}, warm-up steps among them: {warmup or '–'} (left out of every speed figure).", "",
              "## Definitions", "",
              "- Peak device memory: the whole process's device memory at its highest, sampled through NVML (on a "
              "CPU: the process's peak resident set). Peak allocated and reserved: PyTorch's caching-allocator "
              "peaks. Host unmapped: host memory not backed by a file; host pinned: PyTorch's pinned host memory.",
              "- Tokens/s: tokens per optimizer step over the median optimizer step time, warm-up steps excluded.",
              "- MFU (model FLOPs utilisation): tokens/s times the model's FLOPs per token (6 per matmul parameter, "
              "4 with a frozen base under LoRA, plus attention: `harness/flops.py`) over the device's dense "
              "matrix-multiply rate in the training dtype, measured once on that device."
              + (" Not reported here: the cells ran on a CPU." if frames.on_cpu else ""),
              "- Seeds: cells repeated over seeds are reported as the mean, the sample standard deviation and n; a "
              "cell of one seed is compared with the reference's cell of the same seed."]
    if quality:
        lines.append("- Bits per byte (lm-eval): the summed negative log-likelihood of a text in bits over its "
                     "length in UTF-8 bytes, lower is better; comparable across tokenizers and vocabularies. Each "
                     "score also has the same model untrained (its adapter disabled).")
        lines.append("- Comparisons (`comparisons.csv`): the mean over paired seeds of the difference on the same "
                     "items; intervals from a crossed bootstrap of seeds, documents and items within documents, "
                     "p-values adjusted by Holm over each family and each interval printed at its Holm level. One "
                     "rule names every verdict: higher or lower where Holm rejects at 0.05, no difference where the "
                     "interval lies inside the margin, inconclusive otherwise (docs/quality.md).")
    return "\n".join([*lines, ""])
