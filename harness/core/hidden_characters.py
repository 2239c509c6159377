"""Characters that text shown to a reader (a report, a table, a result's name) cannot show as text."""

from __future__ import annotations

# direction overrides and isolates: they make text read other than it is stored (the "Trojan Source" trick)
_BIDI_CONTROLS = {*range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def hidden_character(text: str, allowed: str = "\t\n") -> str | None:
    """The first character of `text` a report cannot show as text: a control character other than those `allowed`
    (a description may hold tabs and new lines; a one-line name none), or a bidirectional override, named by its
    code point."""
    for char in text:
        code = ord(char)
        if (code < 0x20 and char not in allowed) or code == 0x7F or code in _BIDI_CONTROLS:
            return f"the control character U+{code:04X}"
    return None
