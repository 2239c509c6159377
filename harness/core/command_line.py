"""The argument parser of every vramlab command line: argparse, except that an option given twice is refused
(argparse lets the last one win, so `--out a --out b` would silently write b) and its errors are one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn


class _Once(argparse.Action):
    """Mixed into an option's own action: a second use of the option, in any spelling, is an error."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given = getattr(parser, "given", None)
        if given is not None:
            if self.dest in given:
                raise argparse.ArgumentError(self, f"given more than once ({given[self.dest]}, then "
                                                   f"{_spelled(option_string, values)}); give it once")
            given[self.dest] = _spelled(option_string, values)
        super().__call__(parser, namespace, values, option_string)


def _spelled(option: str | None, values: Any) -> str:
    shown = values if isinstance(values, str) else " ".join(map(str, values)) if isinstance(values, list) else ""
    return f"{option} {shown[:80]}".strip()


# the actions that keep one value: repeatable ones (append, count) are meant to be given again
_SINGLE = (argparse._StoreAction, argparse._StoreConstAction, argparse._StoreTrueAction,
           argparse._StoreFalseAction, argparse.BooleanOptionalAction)
_ONCE: dict[type, type] = {kind: type(f"Once{kind.__name__}", (_Once, kind), {}) for kind in _SINGLE}


class DefaultsShown(argparse.RawDescriptionHelpFormatter):
    """Each option's default in its help, where it has one a user would type (argparse's own formatter also says
    "default: None" and "default: False"); a help that names its default itself is left as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        said = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in said or not action.option_strings:
            return said
        return f"{said} (default: %(default)s)"


FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".csv", ".md", ".txt", ".gguf")


class Parser(argparse.ArgumentParser):
    """Subcommands made with add_subparsers are Parsers too (argparse gives them the parent's class), and show
    their defaults in their help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsShown)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.option_strings and type(action) in _ONCE:
            action.__class__ = _ONCE[type(action)]
        return action

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self.given: dict[str, str] = {}  # the options of this one parse, each as it was first given
        self.words = list(sys.argv[1:] if args is None else args)
        try:
            return super().parse_known_args(args, namespace)
        finally:
            self.given = {}

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}{self._dashed_file(message)} (see {self.prog} --help)\n")

    def _dashed_file(self, message: str) -> str:
        """A file whose name starts with '-' is taken by argparse for an option, and the error then names only what
        is missing: say which word was taken so, and how to give it as a file."""
        if "required" not in message and "unrecognized" not in message:
            return ""
        known = {option for action in self._actions for option in action.option_strings}
        for word in getattr(self, "words", []):
            if word == "--":
                break
            unread = "required" in message or word in message.split()  # the word argparse named, if it named any
            if (word.startswith("-") and "=" not in word and word not in known and unread
                    and (Path(word).exists() or Path(word).suffix in FILE_SUFFIXES)):
                return (f"; {word!r} starts with '-', so it was read as an option: give it as ./{word} "
                        f"(or after --)")
        return ""
