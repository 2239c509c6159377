"""The seed stack written as the shortest plain script, with no harness code: the reference the
harness is compared against (benchmarks/harness_overhead.py).

Unsloth 4-bit load, RS-LoRA r=16 on all linear layers with Unsloth's offloaded checkpointing,
SDPA restricted to its FlashAttention-2 kernel, paged 8-bit AdamW, TRL SFTTrainer with the nll loss,
batch 1, Zipf token ids, the allocator capped as the harness caps it. Prints one JSON line.

Two switches exist only to reproduce shared/notes/stack-measurements.md (benchmarks/loss_path.py):
`--loop plain` trains with a bare loop that passes labels to the model, so Unsloth computes the loss
itself (its fused, chunked cross-entropy) instead of TRL's chunked LM head; `--attention auto` lets SDPA
pick its kernel; `--adapter lora` drops the rank-stabilized scale (same shapes, same memory).
"""

import argparse
import json
import statistics
import time
from contextlib import nullcontext

import numpy as np
import torch
import unsloth  # noqa: F401  (must precede transformers and trl)
from datasets import Dataset
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers import TrainerCallback
from trl import SFTConfig, SFTTrainer
from unsloth import FastLanguageModel

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--context", type=int, default=20480)
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--warmup", type=int, default=1)
parser.add_argument("--cap-bytes", type=int, required=True)
parser.add_argument("--loop", choices=["sft", "plain"], default="sft")
parser.add_argument("--attention", choices=["flash", "auto"], default="flash")
parser.add_argument("--adapter", choices=["rslora", "lora"], default="rslora")
args = parser.parse_args()

torch.cuda.set_per_process_memory_fraction(args.cap_bytes / torch.cuda.get_device_properties(0).total_memory)
model, tokenizer = FastLanguageModel.from_pretrained(model_name=args.model, max_seq_length=args.context,
                                                     dtype=torch.bfloat16, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(
    model, r=16, lora_alpha=16, lora_dropout=0.0, bias="none", use_rslora=args.adapter == "rslora", random_state=0,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    use_gradient_checkpointing="unsloth", max_seq_length=args.context)

rng = np.random.default_rng(0)
vocab = model.get_input_embeddings().weight.shape[0]
weights = 1.0 / (np.arange(1, vocab + 1) + 2.7) ** 1.07
ids = rng.permutation(vocab)[rng.choice(vocab, size=(args.steps, args.context), p=weights / weights.sum())]
dataset = Dataset.from_dict({"input_ids": ids.tolist()})

times: list[float] = []
extra: dict[str, object] = {}


class Timer(TrainerCallback):
    def on_train_begin(self, *a, **k):
        torch.cuda.synchronize()
        self.last = time.perf_counter()

    def on_step_end(self, *a, **k):
        torch.cuda.synchronize()
        now = time.perf_counter()
        times.append(now - self.last)
        self.last = now


def train_sft() -> None:
    # TRL's default gradient_checkpointing=True is left as the committed comparison ran it: Unsloth's trainer
    # keeps the model's own "unsloth" mode either way (the harness sets False, for its Hugging Face path)
    config = SFTConfig(output_dir="/tmp/standalone", max_steps=args.steps, per_device_train_batch_size=1,
                       gradient_accumulation_steps=1, learning_rate=2e-4, lr_scheduler_type="constant",
                       loss_type="nll", max_length=args.context, packing=False, bf16=True,
                       optim="paged_adamw_8bit", logging_steps=1, save_strategy="no", report_to=[],
                       remove_unused_columns=False, disable_tqdm=True, seed=0)
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                         callbacks=[Timer()])
    torch.cuda.reset_peak_memory_stats()
    trainer.train()


def train_plain() -> None:
    from bitsandbytes.optim import PagedAdamW8bit

    optimizer = PagedAdamW8bit([p for p in model.parameters() if p.requires_grad], lr=2e-4)
    model.train()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.synchronize()
    last = time.perf_counter()
    for row in ids:
        batch = torch.as_tensor(row, device="cuda").unsqueeze(0)
        model(input_ids=batch, labels=batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        now = time.perf_counter()
        times.append(now - last)
        last = now
    try:  # a private helper of unsloth_zoo: its absence must not lose the measurement
        from unsloth_zoo.fused_losses.cross_entropy_loss import _measured_target_gb

        # Unsloth sizes its loss chunks from the device's free memory, which the allocator cap does not lower.
        extra["unsloth_ce_target_gb"] = _measured_target_gb(None)
    except Exception as error:
        extra["unsloth_ce_target_gb_error"] = repr(error)


restrict = args.attention == "flash"
with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True) if restrict else nullcontext():
    train_sft() if args.loop == "sft" else train_plain()
measured = times[args.warmup:]
median = statistics.median(measured)
print(json.dumps({"loop": args.loop, "attention": args.attention, "adapter": args.adapter,
                  "context": args.context, "cap_bytes": args.cap_bytes, "step_seconds": times,
                  "median_step_seconds": median, "tokens_per_second": args.context / median,
                  "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                  "peak_reserved_bytes": torch.cuda.max_memory_reserved(), **extra}))
