"""What is alive on the device at a cell's allocated peak, and which code made it (`vramlab run-cell
--memory-history FILE`). Why it is so: docs/measurement.md."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV = "VRAMLAB_MEMORY_HISTORY"
MAX_ENTRIES = 2_000_000  # events kept; an 8B training step makes well under a million
LIBRARIES = ("unsloth_zoo", "unsloth", "peft", "transformers", "bitsandbytes", "trl", "liger_kernel",
             "harness", "accelerate")
GIB = 2**30
MIB = 2**20


def summary_path(path: Path) -> Path:
    return path.with_name(path.name + ".peak.json")


@contextmanager
def recording(path: Path | None) -> Iterator[None]:
    """Record the allocator's history inside the block (CUDA only); write the snapshot and its peak summary
    however the block ends, an out-of-memory error included."""
    import torch

    if path is None or not torch.cuda.is_available():
        yield
        return
    before = torch.cuda.memory_allocated()
    torch.cuda.memory._record_memory_history(max_entries=MAX_ENTRIES, stacks="python")
    try:
        yield
    finally:
        snapshot = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            pickle.dump(snapshot, handle)
        summary = peak_summary(snapshot, before)
        summary_path(path).write_text(json.dumps(summary, indent=1) + "\n")


def requested() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


def _owner(frames: list[dict[str, Any]]) -> str:
    """The first frame (innermost first) in a library doing the work, as 'library/file.py:line function'."""
    for frame in frames:
        name = frame.get("filename", "")
        for lib in LIBRARIES:
            marker = f"/{lib}/"
            if marker in name:
                short = name.split(marker, 1)[1]
                return f"{lib}/{short}:{frame.get('line')} {frame.get('name')}"
    top = frames[0] if frames else {}
    return f"{top.get('filename', '?')}:{top.get('line')} {top.get('name', '?')}"


def _replay(events: list[dict[str, Any]], allocated_before: int, until: int | None = None
            ) -> tuple[int, int, dict[int, tuple[int, list[dict[str, Any]]]]]:
    """Allocations and frees in order: the largest running total and the event it came at, and the blocks
    alive after event `until` (after the last event when None)."""
    live: dict[int, tuple[int, list[dict[str, Any]]]] = {}
    total = peak = allocated_before
    peak_index = -1
    for index, event in enumerate(events[:None if until is None else until + 1]):
        action = event.get("action")
        if action == "alloc":
            live[event["addr"]] = (event["size"], event.get("frames") or [])
            total += event["size"]
            if total > peak:
                peak, peak_index = total, index
        elif action == "free_completed":
            total -= event["size"]
            live.pop(event["addr"], None)
    return peak, peak_index, live


def peak_summary(snapshot: dict[str, Any], allocated_before: int, top: int = 40) -> dict[str, Any]:
    """Replay device 0's trace: the allocated peak over the recording, and the blocks alive at it, grouped.
    Two passes (find the peak, then replay up to it) rather than a copy of the live set at every new peak."""
    traces = snapshot.get("device_traces") or [[]]
    events = traces[0]
    peak, peak_index, _ = _replay(events, allocated_before)
    peak_live = _replay(events, allocated_before, until=peak_index)[2] if peak_index >= 0 else {}
    groups: dict[str, list[int]] = {}
    for size, frames in peak_live.values():
        groups.setdefault(_owner(frames), []).append(size)
    ranked = sorted(groups.items(), key=lambda item: -sum(item[1]))
    made = sum(sum(sizes) for sizes in groups.values())
    return {
        "events": len(events),
        "allocated_before_recording_bytes": allocated_before,
        "peak_allocated_bytes": peak,
        "peak_event_index": peak_index,
        "peak_event": _owner((events[peak_index].get("frames") or []) if peak_index >= 0 else []),
        "alive_from_recording_bytes": made,
        "groups": [{"owner": owner, "bytes": sum(sizes), "count": len(sizes),
                    "sizes_mib": sorted({round(s / MIB, 1) for s in sizes}, reverse=True)[:8]}
                   for owner, sizes in ranked[:top]],
    }


def format_summary(summary: dict[str, Any]) -> str:
    lines = [f"allocated peak {summary['peak_allocated_bytes'] / GIB:.3f} GiB at event {summary['peak_event_index']} "
             f"({summary['peak_event']}); before recording {summary['allocated_before_recording_bytes'] / GIB:.3f} "
             f"GiB; made while recording and alive then {summary['alive_from_recording_bytes'] / GIB:.3f} GiB"]
    for group in summary["groups"]:
        lines.append(f"  {group['bytes'] / MIB:9,.0f} MiB  x{group['count']:<4} {group['owner']}  "
                     f"(sizes MiB: {', '.join(str(s) for s in group['sizes_mib'])})")
    return "\n".join(lines)
