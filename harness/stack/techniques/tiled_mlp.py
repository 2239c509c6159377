"""Tiled MLP: each decoder layer's MLP runs over the sequence in shards, and its backward recomputes one
shard at a time, so the MLP keeps only its input for backward instead of the gate and up projections
(each intermediate-size wide, three times the hidden size for an 8B model) of every token.

`arctic` is Unsloth's loader option (`unsloth_tiled_mlp`, Arctic Long Sequence Training's scheme): shards
of hidden-size tokens. Unsloth's other mode, `target`, sizes its shards from half of the device's free
memory as CUDA reports it; under an emulated budget on a larger GPU that is the whole card's free memory,
not the budget's, so it is not offered. Only the Unsloth path has it (harness/spec/conflicts.py).
"""

from __future__ import annotations

from typing import Any

from harness.core.setting import Setting
from harness.stack.contract import Plan, Technique


class TiledMlp(Technique):
    axis = "tiled_mlp"
    settings = (Setting("tiled_mlp", str, "off",
                        "run each MLP over the sequence in shards, recomputed one at a time in backward "
                        "(Unsloth's arctic tiling)", levels=("off", "arctic"), owner="tiled_mlp",
                        hashed_at_default=False),)
    cuda_levels = ("arctic",)

    def before_load(self, plan: Plan) -> None:
        plan.load.tiled_mlp = plan.level(self.axis)
        plan.records["tiled_mlp"] = {"mode": plan.level(self.axis)}

    def before_train(self, model: Any, plan: Plan) -> None:
        # evidence from the modules themselves: how many MLPs run the tiled forward, and what runs inside it
        tiled = [m for _, m in model.named_modules()
                 if getattr(getattr(m, "forward", None), "__name__", "").startswith("tiled_forward")]
        inner = {getattr(getattr(m, "_unsloth_forward", None), "__name__", "?") for m in tiled}
        plan.records["tiled_mlp"].update({"tiled_modules": len(tiled), "inner_forward": sorted(inner)})
        if plan.level(self.axis) != "off" and not tiled:
            raise RuntimeError("tiled_mlp: arctic was asked, but no MLP runs a tiled forward after loading")
        if plan.level(self.axis) == "off" and tiled:
            raise RuntimeError(f"tiled_mlp: off was asked, but {len(tiled)} MLPs run a tiled forward")
