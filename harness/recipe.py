"""The one training recipe every cell runs: resolve the model, apply the techniques, train, measure.

    check techniques -> resolve model -> plan the load -> load (tracked) -> build data
    -> adapt the model (slice, patch, checkpoint, adapters) -> SFTTrainer.train (tracked, timed)

Cells differ only in their settings; nothing here branches on a cell's name or matrix.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from harness import data as data_module
from harness import models
from harness.budget import Budget
from harness.flops import flops_per_token
from harness.measure import MemoryTracker, StepRecord, summarize_steps
from harness.techniques import Plan, registry

log = logging.getLogger("vramlab")


class Skipped(Exception):
    """The cell cannot run here; the message is the reason recorded."""


def _resolve_device(settings: dict[str, Any]) -> tuple[str, Any]:
    import torch

    device = settings["device"]
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise Skipped("the cell asks for device 'cuda' and no CUDA GPU is present")
    dtype = settings["dtype"]
    if dtype == "auto":
        dtype = "bfloat16" if device == "cuda" else "float32"
    return device, getattr(torch, dtype)


def _step_callback(record: StepRecord, cuda: bool, total_steps: int):
    import torch
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        """Wall time between consecutive optimizer-step ends, device synchronized: everything the
        trainer does for a step (data, forward, backward, optimizer, logging) is inside it."""

        def _now(self) -> float:
            if cuda:
                torch.cuda.synchronize()
            return time.perf_counter()

        def on_train_begin(self, args, state, control, **kwargs):
            self.last = self._now()

        def on_step_end(self, args, state, control, **kwargs):
            now = self._now()
            record.seconds.append(now - self.last)
            self.last = now
            log.info("step %d/%d: %.2f s", state.global_step, total_steps, record.seconds[-1])

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                record.loss.append(float(logs["loss"]))

    return StepTimer()


def _load(plan: Plan, resolved: models.ResolvedModel) -> tuple[Any, Any]:
    s = plan.settings
    if plan.loader == "unsloth":
        from unsloth import FastLanguageModel

        model, tokenizer = FastLanguageModel.from_pretrained(
            model_name=str(resolved.path), max_seq_length=s["context"], dtype=plan.dtype,
            load_in_4bit=plan.load_kwargs.get("load_in_4bit", False), full_finetuning=False)
        return model, tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device_map = {"": 0} if plan.device == "cuda" else None
    model = AutoModelForCausalLM.from_pretrained(resolved.path, dtype=plan.dtype, device_map=device_map,
                                                 **plan.load_kwargs)
    tokenizer = AutoTokenizer.from_pretrained(resolved.path)
    return model, tokenizer


def train_cell(settings: dict[str, Any], tracker: MemoryTracker, budget: Budget,
               outputs: dict[str, Any]) -> dict[str, Any]:
    """Runs the cell; fills `outputs` as it goes so that an OOM half-way still leaves what was
    measured. Returns the metrics."""
    import torch

    device, dtype = _resolve_device(settings)
    plan = Plan(settings=settings, device=device, dtype=dtype)
    techniques = registry()
    for technique in techniques:
        technique.check(plan)
    outputs["records"] = plan.records
    metrics = outputs["metrics"]
    if device == "cuda":
        torch.cuda.manual_seed_all(settings["seed"])
    torch.manual_seed(settings["seed"])

    for technique in techniques:
        technique.before_load(plan)
    resolved = models.resolve_outside(settings["model"], seed=settings["seed"])
    outputs["model"] = {"source": resolved.source, "path": str(resolved.path),
                        "random_weights": resolved.random_weights, **resolved.detail}

    with tracker.phase("load") as load_peaks:
        model, tokenizer = _load(plan, resolved)
    metrics["load_seconds"] = load_peaks.seconds
    plan.tokenizer = tokenizer

    kind = settings["data"]
    if kind == "auto":
        kind = "zipf" if resolved.random_weights else "stdlib-docs"
    steps_total = settings["warmup_steps"] + settings["steps"]
    n_sequences = steps_total * settings["grad_accum"] * settings["batch_size"]
    vocab = model.get_input_embeddings().weight.shape[0]
    training = data_module.build(kind, tokenizer, vocab, settings["context"], n_sequences, settings["seed"])
    plan.sequences = training.sequences
    outputs["data"] = {"kind": kind, "fingerprint": training.fingerprint, "sequences": n_sequences,
                       **training.detail}

    for technique in techniques:
        model = technique.after_load(model, plan)
    budget.account_for_paged_optimizer(plan, model)

    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from harness.lm_head_loss import ensure_lm_head_loss

    lm_head_loss = ensure_lm_head_loss()

    record = StepRecord()
    config = SFTConfig(
        output_dir=str(outputs["scratch_dir"]),
        max_steps=steps_total,
        per_device_train_batch_size=settings["batch_size"],
        gradient_accumulation_steps=settings["grad_accum"],
        learning_rate=settings["learning_rate"],
        lr_scheduler_type="constant",
        warmup_steps=0,
        seed=settings["seed"],
        data_seed=settings["seed"],
        loss_type=settings["loss"],  # explicit: TRL 1.7 changed the default SFT loss
        max_length=settings["context"],
        packing=False,  # sequences are already packed to exactly `context` tokens
        bf16=(dtype == torch.bfloat16),
        use_cpu=(device == "cpu"),
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        dataloader_num_workers=0,
        remove_unused_columns=False,
        disable_tqdm=True,
        # the checkpointing technique owns checkpointing: TRL's default (True) makes the Trainer call
        # gradient_checkpointing_enable() again at train time, which turns plain HF checkpointing on
        # over `off` and replaces the offloading function of `offload`
        gradient_checkpointing=False,
        **plan.trainer_kwargs,
    )
    dataset = Dataset.from_dict({"input_ids": plan.sequences})
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                         callbacks=[_step_callback(record, device == "cuda", steps_total)])
    outputs["trainer"] = {"loss_type": config.loss_type, "optim": config.optim, "lm_head_loss": lm_head_loss,
                          "gradient_checkpointing": config.gradient_checkpointing}
    for technique in techniques:
        technique.before_train(model, plan)
    metrics["step_seconds"], metrics["loss"] = record.seconds, record.loss
    try:
        with tracker.phase("train") as train_peaks:
            trainer.train()
    finally:
        for technique in techniques:
            technique.after_train(model, plan)
    metrics["train_seconds"] = train_peaks.seconds

    tokens_per_step = settings["batch_size"] * settings["grad_accum"] * settings["context"]
    metrics.update(summarize_steps(record.seconds, settings["warmup_steps"], tokens_per_step))
    base_model = getattr(model, "base_model", model)
    fpt = flops_per_token(getattr(base_model, "config", model.config), settings["context"],
                          lora=True)
    metrics["flops_per_token"] = fpt
    if metrics.get("tokens_per_second"):
        metrics["achieved_flops_per_second"] = fpt * metrics["tokens_per_second"]
    return metrics
