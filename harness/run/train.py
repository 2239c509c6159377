"""The one training recipe every cell runs: resolve the model, apply the techniques, train, keep the adapter.

    check techniques -> prepare the backend -> plan the load -> load (tracked) -> build data
    -> adapt the model (patch, slice, checkpoint, adapters) -> SFTTrainer.train (tracked) -> save the adapter

Cells differ only in their settings; nothing here branches on a cell's name, its matrix or its backend.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from harness.core.budget import Budget
from harness.core.runtime import Runtime
from harness.data import training as data_module
from harness.results.adapter_files import adapter_digest
from harness.run import gc_freeze
from harness.run.lm_head_loss import ensure_lm_head_loss
from harness.run.trackers import TrackerSet
from harness.run.worker_status import tell
from harness.stack import backends
from harness.stack.contract import LoadRequest, Plan, Technique
from harness.stack.fingerprint import fingerprint
from harness.stack.models import sources
from harness.stack.techniques import registry

log = logging.getLogger("vramlab")


def _loss_logger(losses: list[float]) -> Any:
    from transformers import TrainerCallback

    class LossLog(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                losses.append(float(logs["loss"]))
                tell(loss=losses[-1])

    return LossLog()


def train_cell(settings: dict[str, Any], runtime: Runtime, trackers: TrackerSet, budget: Budget,
               outputs: dict[str, Any], adapter_dir: Path | None = None) -> None:
    """Runs the cell; fills `outputs` as it goes so that an OOM half-way still leaves what was measured.
    With `adapter_dir`, the trained adapter (and a sliced vocabulary's map) is saved there for evaluation."""
    import torch

    backend = backends.for_settings(settings)
    plan = Plan(settings=settings, runtime=runtime, backend=backend,
                load=LoadRequest(max_seq_length=settings["context"]))
    techniques = registry()
    for technique in techniques:
        technique.check(plan)
    outputs["records"] = plan.records
    if runtime.cuda:
        torch.cuda.manual_seed_all(settings["seed"])
    torch.manual_seed(settings["seed"])

    # phases, each timed and with its own peaks: the model path's imports (Unsloth patches transformers as
    # it is imported), the model built or found in the cache, the loader, the techniques applied, the trainer
    # made, training
    with trackers.phase("prepare"):
        backend.prepare(plan)
        for technique in techniques:
            technique.before_load(plan)
        if runtime.cuda:
            gc_freeze.freeze_imports()
    with trackers.phase("build"):
        resolved = sources.resolve_outside(settings["model"], seed=settings["seed"], revision=settings["revision"])
    outputs["model"] = resolved.describe()
    outputs["model_folder"] = resolved.path  # never recorded: an error from a damaged cache names its folder there

    with trackers.phase("load"):
        model, tokenizer = backend.load(resolved.path, plan)
    plan.tokenizer = tokenizer

    with trackers.phase("adapt"):
        vocab = model.get_input_embeddings().weight.shape[0]
        plan.training = data_module.build_for(settings, tokenizer, vocab, random_weights=resolved.random_weights)
        # as the tokenizer gives it; a sliced vocabulary makes it again in its kept tokens and records that itself
        outputs["data"] = plan.training.describe()
        for technique in techniques:
            model = technique.after_load(model, plan)
        training = plan.training
        budget.account_for_paged_optimizer(plan, model)
    # the tokenizer as the model source gives it, read as `vramlab check --fresh` reads it (a loader may add to its own)
    given = sources.source_tokenizer(settings["model"], seed=settings["seed"], revision=settings["revision"])
    outputs["fingerprint"] = fingerprint(resolved, given, training.fingerprint,
                                         plan.token_map.kept if plan.token_map else None)
    trackers.get("compute").model_known(getattr(getattr(model, "base_model", model), "config", model.config),
                                        training.mean_length)
    with trackers.phase("trainer"):
        trainer = _make_trainer(settings, runtime, model, tokenizer, training, trackers, plan, techniques,
                                outputs)
    try:
        with trackers.phase("train"):
            trainer.train()
    finally:
        for technique in techniques:
            technique.after_train(model, plan)
    if adapter_dir is not None and not resolved.random_weights:  # random weights are never evaluated
        outputs["adapter"] = save_adapter(model, plan, adapter_dir)


def _make_trainer(settings: dict[str, Any], runtime: Runtime, model: Any, tokenizer: Any, training: Any,
                  trackers: TrackerSet, plan: Plan, techniques: list[Technique], outputs: dict[str, Any]) -> Any:
    """TRL's SFTTrainer over the cell's data, with the trackers' callbacks; the techniques' last look."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    lm_head_loss = ensure_lm_head_loss()
    timer = trackers.get("time")
    steps_total = settings["warmup_steps"] + settings["steps"]
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
        packing=False,  # sequences are already made to fit `context` tokens
        completion_only_loss=training.completion_masks is not None,
        bf16=(runtime.dtype == torch.bfloat16),
        use_cpu=not runtime.cuda,
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
        **timer.trainer_settings(),
        **plan.trainer_kwargs,
    )
    trainer_class = plan.trainer_class or SFTTrainer
    trainer = trainer_class(model=model, args=config, train_dataset=Dataset.from_dict(training.columns()),
                            processing_class=tokenizer,
                            callbacks=[*trackers.callbacks(), _loss_logger(outputs["metrics"]["loss"])])
    # lm_head_loss: the kernel in TRL's chunked LM head (Unsloth's where importing Unsloth replaced TRL's); it
    # computes the loss only on the loss path `trl-chunked` (harness/stack/techniques/loss_path.py)
    outputs["trainer"] = {"loss_type": config.loss_type, "optim": config.optim, "lm_head_loss": lm_head_loss,
                          "gradient_checkpointing": config.gradient_checkpointing,
                          "completion_only_loss": config.completion_only_loss}
    for technique in techniques:
        technique.before_train(model, plan)
    return trainer


def save_adapter(model: Any, plan: Plan, folder: Path) -> dict[str, Any]:
    """The trained adapter and what is needed to rebuild the model it was trained on (a sliced vocabulary's
    kept ids), written to a temporary folder and renamed, with a fingerprint of its weights."""
    import json
    import shutil

    tmp = folder.with_name(folder.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    if plan.token_map is not None:
        (tmp / "vocabulary.json").write_text(json.dumps(plan.token_map.to_json()))
    digest = adapter_digest(tmp)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return {"folder": folder.name, "sha256": digest,
            "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
            "sliced_vocabulary": plan.token_map is not None}
