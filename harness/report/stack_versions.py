"""The line of a report's Setup that says which library versions made its numbers, read from environment.csv (the
distinct environments the result files recorded); methods.md lists every library, this names the ones a reader
compares first."""

from __future__ import annotations

import pandas as pd

NAMED = ("torch", "transformers", "peft", "trl", "bitsandbytes", "liger-kernel", "unsloth")


def versions_line(environment: pd.DataFrame | None, everything: str = "`methods.md`") -> list[str]:
    """'Versions that made these numbers: torch 2.11.0, ...' (a library the cells did not have is left out; where
    environments differ, each version found is named); `everything` says where every library is listed."""
    if environment is None or environment.empty:
        return []
    parts = []
    for name in NAMED:
        column = environment.get(f"version:{name}")
        found = [str(v) for v in dict.fromkeys(column.dropna())] if column is not None else []
        if found:
            parts.append(f"{name} {' / '.join(found)}")
    if not parts:
        return []
    several = f" ({len(environment)} environments: {everything} gives each)" if len(environment) > 1 else ""
    return [f"Versions that made these numbers{several}: {', '.join(parts)}; every library in {everything}.", ""]
