"""Cells repeated over seeds form one group, named like the cell without its `/seed=N` suffix; a group is what a
table row, a chart point or a comparison stands for. Also: what differs between two sets of settings, said the
same way everywhere ("quantization nf4, context 8192")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

NOT_A_DIFFERENCE = ("seed", "name")


def group_name(name: str) -> str:
    return name.split("/seed=")[0]


def _same(a: Any, b: Any) -> bool:
    # cells.csv holds every value as text (lists joined with commas), a Cell holds the YAML value
    return str(a) == str(b)


def differences(settings: Mapping[str, Any], reference: Mapping[str, Any],
                ignore: Iterable[str] = ()) -> dict[str, Any]:
    """The settings (in `settings`' order) whose value differs from the reference's; the seed never counts."""
    skip = {*NOT_A_DIFFERENCE, *ignore}
    return {k: v for k, v in settings.items() if k not in skip and k in reference and not _same(v, reference[k])}


def describe(change: Mapping[str, Any]) -> str:
    """{'quantization': 'none', 'lora_targets': ['q_proj', 'v_proj']}
    -> 'quantization none, lora_targets q_proj,v_proj'"""
    return ", ".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in change.items())
