"""Keys that YAML does not read as names: `~:` and `null:` read as nothing, `1:` as a number, `yes:` and `true:` as
true/false, `2024-01-01:` as a date, `? [a, b]` as a list. Every key of a matrix is a setting's or a section's name,
so such a key is told as it is written, with what YAML made of it, before anything is built from the file (the
checks after it would name Python's value instead: None, True, datetime.date(2024, 1, 1))."""

from __future__ import annotations

import yaml

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"
READ_AS = {"tag:yaml.org,2002:null": "nothing", "tag:yaml.org,2002:int": "a number",
           "tag:yaml.org,2002:float": "a number", "tag:yaml.org,2002:bool": "true/false",
           "tag:yaml.org,2002:timestamp": "a date", "tag:yaml.org,2002:binary": "binary data",
           "tag:yaml.org,2002:seq": "a list", "tag:yaml.org,2002:map": "a mapping"}


def _written(node: yaml.Node, text: str) -> str:
    """The key as the file writes it, on one line and short."""
    written = node.value if isinstance(node, yaml.ScalarNode) else text[node.start_mark.index:node.end_mark.index]
    written = " ".join(written.split()) or "(an empty key)"
    return written if len(written) <= 40 else written[:40] + "…"


def key_trap(root: yaml.Node, text: str) -> str | None:
    """Why the first key of a composed document that is no name is not one ("line 5: the key ~ reads as nothing ..."),
    or None."""
    seen: set[int] = set()

    def walk(node: yaml.Node) -> str | None:
        if id(node) in seen:  # an alias: its node was walked where the anchor is
            return None
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            return next((found for child in node.value if (found := walk(child)) is not None), None)
        if not isinstance(node, yaml.MappingNode):
            return None
        for key, value in node.value:
            if key.tag not in (STR_TAG, MERGE_TAG):
                read_as = READ_AS.get(key.tag, f"a value tagged {key.tag}")
                return (f"line {key.start_mark.line + 1}: the key {_written(key, text)} reads as {read_as} in YAML, "
                        "not as a name; every key of a matrix is a plain name such as model or steps")
            found = walk(value)
            if found is not None:
                return found
        return None

    return walk(root)
