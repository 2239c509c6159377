"""YAML 1.1's number forms that do not read as written: `1:30` is base 60 (90), `0x10` hexadecimal and `010` octal
(16 and 8), `0b10` binary, and `1_6` drops its underscore (16). PyYAML follows YAML 1.1, so a setting written so
would be a cell of another number than the one on the page, and its id and result would record that number. Each
such plain scalar is told, with the number it would be, before anything is built from the file; a quoted value
is text and is left alone."""

from __future__ import annotations

import math
import re

import yaml

INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")


def _form(text: str) -> str | None:
    """Which YAML 1.1 form `text` (a plain int or float scalar) is written in, where it is not plain decimal."""
    bare = text.lstrip("+-")
    if ":" in text:
        return "base 60 (as a clock's 1:30 is 90 minutes)"
    if bare.startswith("0x"):
        return "hexadecimal"
    if bare.startswith("0b"):
        return "binary"
    if "_" in text:
        return "a number without its underscores"
    if bare.startswith("0") and len(bare) > 1 and "." not in bare:
        return "octal (for its leading 0)"
    return None


def out_of_range(text: str) -> str | None:
    """Why a number written in decimal digits (`1e400`, `1e-400`) is not the number a float holds: past the largest
    it reads as infinity, below the smallest as 0.0, so a learning rate of 1e-400 would train at none; or None."""
    if not any(c.isdigit() for c in text):  # .inf, .nan: written as what they are
        return None
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        return None
    mantissa = re.split("[eE]", text)[0]
    if math.isinf(value):
        return f"{text} is too large for a number: it would read as {value}"
    if value == 0 and re.search("[1-9]", mantissa):
        return f"{text} is too small for a number: it would read as 0.0"
    return None


def number_trap(node: yaml.ScalarNode) -> str | None:
    """Why a plain int or float scalar does not read as written (its form, and the number it reads as), or None."""
    if node.style is not None or node.tag not in (INT_TAG, FLOAT_TAG):
        return None
    text = node.value
    if node.tag == FLOAT_TAG and out_of_range(text):
        return out_of_range(text)
    if node.tag == INT_TAG and DECIMAL_INT.fullmatch(text):
        return None
    form = _form(text)
    if form is None:
        return None
    reader = yaml.constructor.SafeConstructor()
    number = reader.construct_yaml_int(node) if node.tag == INT_TAG else reader.construct_yaml_float(node)
    return (f"YAML 1.1 reads {text} as {form}: {number!r}; write {number!r} if that number is meant, or "
            f"\"{text}\" in quotes for text")


def number_traps(root: yaml.Node) -> tuple[str, int, str] | None:
    """The first number in a composed document that does not read as written: (its key, its line, why), or None."""
    seen: set[int] = set()

    def walk(node: yaml.Node, key: str) -> tuple[str, int, str] | None:
        if id(node) in seen:
            return None
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            why = number_trap(node)
            return None if why is None else (key, node.start_mark.line + 1, why)
        if isinstance(node, yaml.SequenceNode):
            children = [(child, key) for child in node.value]
        else:
            children = [(child, k.value if isinstance(k, yaml.ScalarNode) else key) for k, child in node.value]
        return next((found for child, name in children if (found := walk(child, name)) is not None), None)

    return walk(root, "")
