"""What /proc tells of a process: whether it still runs (a zombie does not), and its stat fields."""

from __future__ import annotations

from pathlib import Path


def stat_fields(stat: Path) -> list[str]:
    """A /proc/<pid>/stat's fields after the command name, from the state on; none when it cannot be read."""
    try:
        text = stat.read_text()
    except OSError:
        return []
    # the command name may hold spaces and parentheses: the fields start after its last ')'
    return text[text.rfind(")") + 2:].split()


def running(pid: int) -> bool:
    """Whether the process exists and is not a zombie (ended, waiting to be reaped), child or not."""
    fields = stat_fields(Path(f"/proc/{pid}/stat"))
    return bool(fields) and fields[0] not in ("Z", "X")
