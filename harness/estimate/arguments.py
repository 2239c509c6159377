"""What `vramlab estimate` is given, checked before anything is estimated or printed: a chart path it can write
in a format it can draw, folders that are folders, and one value per --set setting."""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import UsageError
from harness.core.path_problems import file_in_the_way

CHART_FORMATS = (".png", ".pdf", ".svg")


def check_estimate_arguments(chart: str | None, calibrate: list[str] | None, pairs: list[str] | None) -> None:
    """UsageError naming the first argument that cannot be used (--results-dir: harness/commands.py, for any
    command)."""
    if chart:
        path = Path(chart)
        if path.is_dir():
            raise UsageError(f"--chart {chart} is a folder; give the chart's file (e.g. {path / 'estimate.png'})")
        if path.suffix.lower() not in CHART_FORMATS:
            raise UsageError(f"--chart {chart}: draws {', '.join(CHART_FORMATS)} files; give a name ending in one")
        blocker = file_in_the_way(path)
        if blocker is not None:
            raise UsageError(f"--chart {chart}: {blocker} is a file, not a folder, so the chart cannot go under it")
    for folder in calibrate or ():
        if not Path(folder).is_dir():
            raise UsageError(f"--calibrate {folder}: {'is a file' if Path(folder).exists() else 'does not exist'}; "
                             "give results folders (e.g. results/seed-16gb)")
    seen: dict[Path, str] = {}
    for folder in calibrate or ():  # one folder named twice (or by two paths) would count each of its cells twice
        same = seen.setdefault(Path(folder).resolve(), folder)
        if same != folder or list(calibrate or ()).count(folder) > 1:
            also = "" if same == folder else f" (as {same})"
            raise UsageError(f"--calibrate {folder}: given more than once{also}, so each of its cells would be counted "
                             "twice; give each results folder once")
    for pair in pairs or ():
        key, sep, value = (part.strip() for part in pair.partition("="))
        if sep and not value:  # read as YAML it would be null, and the refusal would name a None never written
            raise UsageError(f"--set {pair}: the value is empty; give one (e.g. --set {key or 'context'}=32768), or "
                             "leave the setting out for its default")
        if sep and not key:
            raise UsageError(f"--set {pair}: the setting's name is empty; write it as KEY=VALUE (e.g. --set "
                             "context=32768)")
    keys = [pair.partition("=")[0].strip() for pair in pairs or ()]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise UsageError(f"--set {', '.join(twice)} given more than once; give each setting once")
