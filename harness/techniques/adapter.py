"""LoRA or rank-stabilized LoRA adapters (peft), rank, alpha and target modules from the cell."""

from __future__ import annotations

from typing import Any

from harness.techniques.base import Plan, Technique


class Adapter(Technique):
    axis = "adapter"

    def after_load(self, model: Any, plan: Plan) -> Any:
        s = plan.settings
        common = {"r": s["lora_rank"], "lora_alpha": s["lora_alpha"], "target_modules": list(s["lora_targets"]),
                  "lora_dropout": 0.0, "bias": "none", "use_rslora": plan.level(self.axis) == "rslora"}
        if plan.loader == "unsloth":
            from unsloth import FastLanguageModel

            model = FastLanguageModel.get_peft_model(
                model, use_gradient_checkpointing=plan.unsloth_checkpointing, random_state=s["seed"],
                max_seq_length=s["context"], **common)
        else:
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(model, LoraConfig(task_type="CAUSAL_LM", **common))
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        total = sum(p.numel() for p in model.parameters())
        scale = s["lora_alpha"] / (s["lora_rank"] ** 0.5 if common["use_rslora"] else s["lora_rank"])
        plan.records["adapter"] = {"kind": plan.level(self.axis), "trainable_parameters": trainable,
                                   "total_parameters": total, "scaling": scale}
        return model
