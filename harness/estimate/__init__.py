"""The memory estimate: a cell's device memory predicted by component, without a GPU (memory_model.py),
the memory outside the allocator it takes from measurements (outside.py), and its check against every
committed measurement (calibration.py)."""

from __future__ import annotations

from typing import Any

from harness.core.budget import budget_bytes, parse_bytes, shown_size
from harness.estimate.memory_model import Component, Estimate, ShapesUnknown, estimate
from harness.spec.settings import defaults
from harness.stack.models.facts import ModelFacts, facts

GIB = 2**30


def estimate_cell(settings: dict[str, Any]) -> Estimate:
    """The estimate for a cell's settings, its model's shapes read without loading weights."""
    # a result written before a setting existed ran at that setting's default
    settings = {**defaults(), **settings}
    # a hub id not on this machine tells nothing: the estimate says so, as for a source without shapes
    return estimate(settings, facts(settings["model"], settings["revision"]) or ModelFacts(None, None, None))


def predicted_not_to_fit(settings: dict[str, Any]) -> str | None:
    """Why the estimate says a cell cannot fit its budget, or None (also where the shapes are not known)."""
    try:
        est = estimate_cell(settings)
    except ShapesUnknown:
        return None
    budget = budget_bytes(settings["budget"])
    if est.total_bytes > budget:
        return (f"predicted not to fit: the memory estimate (vramlab estimate) is {shown_size(est.total_bytes)} "
                f"of device memory at its peak ({est.peak_moment}), over the {shown_size(budget)} budget; "
                "not run, as the matrix asks (predicted_oom: skip)")
    host = host_budget_exceeded(settings, est)
    if host is not None:
        return (f"predicted not to fit: offloaded checkpointing pins {est.host_pinned_bytes / GIB:.2f} GiB of host "
                f"memory ({est.host_detail}), over the {host / GIB:.2f} GiB host budget; not run, as "
                "the matrix asks (predicted_oom: skip)")
    return None


def host_budget_exceeded(settings: dict[str, Any], est: Estimate) -> int | None:
    """The cell's host budget (bytes) where the layer inputs that offloaded checkpointing pins exceed it, else None.
    Those inputs alone are less than the process holds on the host, so this errs towards fitting."""
    host = settings.get("host_budget", "none")
    if host == "none" or est.host_pinned_bytes <= parse_bytes(host):
        return None
    return parse_bytes(host)


__all__ = ["Component", "Estimate", "ShapesUnknown", "estimate", "estimate_cell", "host_budget_exceeded",
           "predicted_not_to_fit"]
