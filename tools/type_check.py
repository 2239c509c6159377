"""The type check CI runs: mypy over harness/ (its settings in pyproject.toml, [tool.mypy]) against a committed
baseline of the errors it had when the check began, which may only shrink.

    python -m tools.type_check            fail on any error not in the baseline, and on a baseline entry that is gone
    python -m tools.type_check --shrink   remove from the baseline the errors that are gone (never adds one)

An error is kept by its file, its message and its code, without its line number, so that code moving about a file
does not change the baseline; the same error twice in a file is two lines. A new error is fixed, or silenced where
it stands with `# type: ignore[code]` and a reason, never added to the baseline.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "type_check_baseline.txt"
ERROR = re.compile(r"^(?P<file>[^:]+):\d+(?::\d+)?: error: (?P<message>.*?)\s*(?P<code>\[[a-z-]+\])?$")


def error_key(line: str) -> str | None:
    """An error line of mypy's as the baseline keeps it (file, message, code: no line number); None for a note."""
    found = ERROR.match(line)
    return f"{found['file']}: {found['message']} {found['code'] or ''}".rstrip() if found else None


def current_errors() -> tuple[collections.Counter[str], str]:
    """mypy's errors, each as its file, message and code; and mypy's whole output."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-pretty", "--no-error-summary", "--show-error-codes"],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 2: mypy itself failed (a bad setting, a syntax error it cannot pass)
        sys.exit(f"mypy failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return collections.Counter(key for line in done.stdout.splitlines() if (key := error_key(line))), done.stdout


def baseline() -> collections.Counter[str]:
    lines = BASELINE.read_text().splitlines() if BASELINE.is_file() else []
    return collections.Counter(line for line in lines if line and not line.startswith("#"))


def write(errors: collections.Counter[str]) -> None:
    head = ("# mypy's errors in harness/ that were there before type checking ran in CI, without line numbers "
            "(tools/type_check.py).\n# It only shrinks: fix one, then `python -m tools.type_check --shrink`.\n")
    BASELINE.write_text(head + "".join(f"{line}\n" for line in sorted(errors.elements())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.type_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shrink", action="store_true", help="remove the errors that are gone from the baseline")
    args = parser.parse_args(argv)
    found, output = current_errors()
    known = baseline()
    new, gone = found - known, known - found
    if new:
        lines = [line for line in output.splitlines() if error_key(line) in new]
        print(f"type check: {sum(new.values())} mypy errors that are not in the baseline; fix them (the baseline only "
              "shrinks):\n" + "\n".join(lines), file=sys.stderr)
        return 1
    if gone and args.shrink:
        write(known - gone)
        print(f"type check: {sum(gone.values())} errors are gone; {BASELINE.relative_to(ROOT)} now holds "
              f"{sum((known - gone).values())}")
        return 0
    if gone:
        print(f"type check: {sum(gone.values())} errors of the baseline are gone (fixed): remove them with "
              "`python -m tools.type_check --shrink`, so that they cannot come back:\n"
              + "\n".join(sorted(gone.elements())), file=sys.stderr)
        return 1
    print(f"type check: no mypy error beyond the {sum(known.values())} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
