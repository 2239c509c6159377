"""A JSON object read with each key once: json keeps the last of a key written twice without a word, which turns
{"status": "oom", ..., "status": "ok"} into a result that passes for what it is not, and {"role": "user", ...,
"role": "system"} into a system turn. Given to json.loads as its object_pairs_hook."""

from __future__ import annotations

from typing import Any


class KeyTwice(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} is written twice in one object; the second would silently replace the first")
        self.key = key


def no_key_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object as json builds it, or KeyTwice naming the first key written twice."""
    built = dict(pairs)
    if len(built) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise KeyTwice(key)
            seen.add(key)
    return built
