"""The memory estimate: a cell's device memory predicted by component, without a GPU (memory_model.py),
the memory outside the allocator it takes from measurements (outside.py), and its check against every
committed measurement (calibration.py)."""

from __future__ import annotations

from typing import Any

from harness.estimate.memory_model import Component, Estimate, ShapesUnknown, estimate


def estimate_cell(settings: dict[str, Any]) -> Estimate:
    """The estimate for a cell's settings, its model's shapes read without loading weights."""
    from harness.model_info import facts

    model = facts(settings["model"])
    if model is None:
        raise ShapesUnknown(f"the shapes of {settings['model']} are not known here (a hub id that is not "
                            "downloaded); give a local folder with config.json, a GGUF file or an arch: preset")
    return estimate(settings, model)


__all__ = ["Component", "Estimate", "ShapesUnknown", "estimate", "estimate_cell"]
