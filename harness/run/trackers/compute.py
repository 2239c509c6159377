"""Compute: model FLOPs per trained token and the share of the device's measured matmul rate reached (MFU),
in the precision the cell actually computes in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.core.runtime import Runtime
from harness.flops import cached_peak_flops, flops_per_token
from harness.run.trackers.base import Tracker


class ComputeTracker(Tracker):
    name = "compute"

    def __init__(self, runtime: Runtime, device_name: str, cache_dir: Path) -> None:
        self.runtime, self.device_name, self.cache_dir = runtime, device_name, cache_dir
        self.flops_per_token: float | None = None

    def model_known(self, config: Any, sequence_length: int) -> None:
        """The trained model's shapes and its (mean) sequence length, once the recipe has them."""
        self.flops_per_token = flops_per_token(config, sequence_length, lora=True)

    def report(self, metrics: dict[str, Any]) -> None:
        if self.flops_per_token is None or not metrics.get("tokens_per_second"):
            return
        metrics["flops_per_token"] = self.flops_per_token
        achieved = self.flops_per_token * metrics["tokens_per_second"]
        metrics["achieved_flops_per_second"] = achieved
        peak = cached_peak_flops(self.cache_dir, self.runtime.device, self.runtime.dtype, self.device_name)
        metrics["peak_flops_per_second"] = peak
        metrics["mfu"] = achieved / peak
