"""A sliced vocabulary's map between the tokenizer's ids and the model's rows, as a sliced tokenizer would
behave. Why it is so: docs/stack.md."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.data.workload.spelling import KEPT, LATER, SPELLED

_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def byte_level_symbols() -> list[str]:
    """The 256 characters byte-level BPE (GPT-2 and its descendants) uses for raw bytes, in byte order:
    printable Latin-1 bytes stand for themselves, the other bytes are shifted above U+0100."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    symbols, shifted = {}, 0
    for byte in range(256):
        if byte in printable:
            symbols[byte] = chr(byte)
        else:
            symbols[byte] = chr(256 + shifted)
            shifted += 1
    return [symbols[b] for b in range(256)]


def byte_token_ids(tokenizer: Any) -> dict[int, int]:
    """byte value -> token id of the token that stands for that single byte (empty if there are none)."""
    vocab = tokenizer.get_vocab()
    found: dict[int, int] = {}
    for byte, symbol in enumerate(byte_level_symbols()):
        if symbol in vocab:
            found[byte] = vocab[symbol]
    if len(found) == 256:
        return found
    found = {}
    for token, index in vocab.items():
        match = _BYTE_PIECE.match(token)
        if match:
            found[int(match.group(1), 16)] = index
    return found if len(found) == 256 else {}


def token_bytes(tokenizer: Any, token_id: int, byte_level: bool) -> bytes | None:
    """The bytes a token stands for, where they can be told."""
    token = tokenizer.convert_ids_to_tokens(token_id)
    if token is None:
        return None
    if byte_level:
        inverse = {symbol: byte for byte, symbol in enumerate(byte_level_symbols())}
        if all(ch in inverse for ch in token):
            return bytes(inverse[ch] for ch in token)
        return None
    match = _BYTE_PIECE.match(token)
    if match:
        return bytes([int(match.group(1), 16)])
    return token.replace("\u2581", " ").encode("utf-8")  # SentencePiece marks a leading space with U+2581


@dataclass
class TokenMap:
    kept: list[int]  # tokenizer ids kept, in the order of the model's new rows
    native_size: int
    fallback: int  # tokenizer id whose row stands in where a token cannot be spelled
    byte_ids: dict[int, int] = field(default_factory=dict)  # byte -> tokenizer id, when the tokenizer has them
    byte_level: bool = True
    _new: dict[int, int] = field(default_factory=dict, repr=False)
    _spellings: dict[int, list[int]] = field(default_factory=dict, repr=False)
    tokenizer: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._new = {old: new for new, old in enumerate(self.kept)}
        if self.fallback not in self._new:
            raise ValueError(f"the fallback token {self.fallback} must be kept")

    @classmethod
    def build(cls, tokenizer: Any, kept: list[int], native_size: int) -> TokenMap:
        byte_ids = byte_token_ids(tokenizer)
        byte_level = bool(byte_ids) and byte_ids.get(ord("A")) == tokenizer.get_vocab().get("A")
        fallback = tokenizer.unk_token_id if tokenizer.unk_token_id is not None else tokenizer.eos_token_id
        return cls(kept=sorted(kept), native_size=native_size, fallback=fallback,
                   byte_ids=byte_ids if set(byte_ids.values()) <= set(kept) else {}, byte_level=byte_level,
                   tokenizer=tokenizer)

    def new_id(self, old: int) -> int | None:
        return self._new.get(old)

    def spell(self, old: int) -> list[int]:
        """New ids for a tokenizer id: itself where kept, else its bytes, else the fallback."""
        new = self._new.get(old)
        if new is not None:
            return [new]
        if old not in self._spellings:
            raw = token_bytes(self.tokenizer, old, self.byte_level) if self.byte_ids and self.tokenizer else None
            spelled = [self._new[self.byte_ids[b]] for b in raw] if raw else [self._new[self.fallback]]
            self._spellings[old] = spelled
        return self._spellings[old]

    def encode(self, ids: list[int]) -> tuple[list[int], int]:
        """Tokenizer ids -> the model's ids, and how many tokens fell outside the kept set."""
        out: list[int] = []
        outside = 0
        for old in ids:
            spelled = self.spell(old)
            outside += old not in self._new
            out.extend(spelled)
        return out, outside

    def spell_marked(self, ids: Sequence[int]) -> tuple[list[int], bytes]:
        """As encode, with a mark beside each of the model's ids saying what it came from (a kept token, the first or
        a later token of a spelled one: harness/data/workload/spelling.py), so that the data can be fitted to the
        context after spelling and still count what fell outside."""
        out: list[int] = []
        marks = bytearray()
        for old in ids:
            spelled = self.spell(old)
            out.extend(spelled)
            if old in self._new:
                marks.append(KEPT)
            else:
                marks.append(SPELLED)
                marks.extend([LATER] * (len(spelled) - 1))
        return out, bytes(marks)

    def decode_ids(self, new_ids: list[int]) -> list[int]:
        """The model's ids -> tokenizer ids (spelled bytes decode as the byte tokens they are)."""
        return [self.kept[i] for i in new_ids if 0 <= i < len(self.kept)]

    def to_json(self) -> dict[str, Any]:
        return {"kept": self.kept, "native_size": self.native_size, "fallback": self.fallback,
                "spells_with_bytes": bool(self.byte_ids)}

    @classmethod
    def from_json(cls, data: dict[str, Any], tokenizer: Any) -> TokenMap:
        token_map = cls.build(tokenizer, data["kept"], data["native_size"])
        if token_map.fallback != data["fallback"] or bool(token_map.byte_ids) != data["spells_with_bytes"]:
            raise ValueError("this tokenizer is not the one the vocabulary map was made with")
        return token_map
