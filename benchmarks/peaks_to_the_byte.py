"""Do measured cells peak where their published results did, to the byte? Reads reproductions of committed cells
(result files written by `snakemake --config matrix=NAME reproduce=true`, gathered as FOLDER/<matrix>/<id>.json,
one FOLDER a way of running them) beside results/<matrix>/<id>.json (or, for a ceiling probe measured again
with `vramlab run-cell --context`, results/<matrix>/ceiling/<search>/<id>.json), and writes FOLDER/comparison.md:
per cell, the status and each device-side peak (device, allocated, reserved, pinned host) equal or not, and how the
emulated card answered. Host RSS and speed are not compared: they move with what else runs on the machine.

    python benchmarks/peaks_to_the_byte.py results/benchmarks/NAME emulation-off emulation-on
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PEAKS = ("peak_device_bytes", "peak_allocated_bytes", "peak_reserved_bytes", "peak_host_pinned_bytes")


def _emulation(result: dict[str, Any]) -> str:
    record = (result.get("budget") or {}).get("card_emulation")
    if not record:
        return "–"
    if not record.get("on"):
        return f"off ({record.get('why_not')})"
    calls = record.get("calls") or {}
    lowest = record.get("lowest_free_bytes")
    free = f", least free {lowest / 2**30:.2f} GiB" if lowest is not None else ""
    return f"on: mem_get_info ×{calls.get('mem_get_info', 0)}{free}"


def _row(published: dict[str, Any], again: dict[str, Any]) -> tuple[list[str], bool]:
    same_status = published["status"] == again["status"]
    cells = [published["status"] + ("" if same_status else f" → {again['status']}")]
    equal = same_status
    for key in PEAKS:
        before, after = published["metrics"].get(key), again["metrics"].get(key)
        if before == after:
            cells.append("same" if before is not None else "–")
        else:
            equal = False
            cells.append("–" if before is None or after is None else f"{(after - before) / 2**20:+.2f} MiB")
    return [*cells, _emulation(again)], equal


def _published(matrix: str, name: str, again: dict[str, Any]) -> dict[str, Any] | None:
    """The published result of the cell, or where this very measurement has since become the published one, the
    result it replaced (results/superseded/<matrix>/...), so that the comparison reads the same after the
    replacement as before it; None for a probe that was never published."""
    cell = REPO / "results" / matrix / name
    found = [cell] if cell.exists() else sorted((REPO / "results" / matrix / "ceiling").glob(f"*/{name}"))
    if not found:
        return None
    published = json.loads(found[0].read_text())
    if published != again:
        return published
    below = found[0].relative_to(REPO / "results" / matrix).parent
    replaced = sorted((REPO / "results" / "superseded" / matrix / below).glob(f"{found[0].stem}.*.json"))
    return json.loads(replaced[-1].read_text()) if replaced else published


def _order(name: str) -> tuple[str, int]:
    """A probe's name ends in @context=N: its search's probes in the order of their contexts."""
    search, _, context = name.partition("@context=")
    return search, int(context) if context.isdigit() else 0


def _mib(value: int | None) -> str:
    return "–" if value is None else f"{value / 2**20:,.2f} MiB"


def compare(folder: Path, ways: list[str]) -> str:
    lines = [f"# Peaks to the byte: {', '.join(ways)} against the published results", "",
             "Each cell's published result (`results/<matrix>/<id>.json`, or for a ceiling probe "
             "`results/<matrix>/ceiling/<search>/<id>.json`; where this measurement has become the published one, "
             "the result it replaced, kept in `results/superseded/`) against the same cell measured again "
             f"({', '.join(f'`{way}/`' for way in ways)}): status, then the device-side peaks, each `same` when "
             "equal to the byte. Host RSS and speed are left out: they move with what else runs on the machine.", ""]
    total = agree = 0
    for way in ways:
        lines += [f"## {way}", "", "| matrix | cell | status | device | allocated | reserved | pinned host | card |",
                  "|---|---|---|---|---|---|---|---|"]
        new, rows = [], []
        measured = [(path, json.loads(path.read_text())) for path in (folder / way).glob("*/[0-9a-f]*.json")]
        for path, again in sorted(measured, key=lambda item: (item[0].parent.name, _order(item[1]["name"]))):
            published = _published(path.parent.name, path.name, again)
            if published is None:
                new.append(f"| {path.parent.name} | {again['name']} | {again['status']} | "
                           + " | ".join(_mib(again["metrics"].get(key)) for key in PEAKS) + f" | {_emulation(again)} |")
                continue
            cells, equal = _row(published, again)
            total, agree = total + 1, agree + equal
            rows.append(f"| {path.parent.name} | {published['name']} | " + " | ".join(cells) + " |")
        lines += rows
        if new:
            lines += ["", f"Probes of {way} never published before (their peaks, not differences):", "",
                      "| matrix | cell | status | device | allocated | reserved | pinned host | card |",
                      "|---|---|---|---|---|---|---|---|", *new]
        lines.append("")
    lines.insert(2, f"{agree} of {total} measurements have the published status and every device-side peak to the "
                    "byte.\n")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    folder = Path(argv[0])
    out = folder / "comparison.md"
    out.write_text(compare(folder, argv[1:]))
    print(out.read_text().splitlines()[2])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
