"""Does the tokenizer transformers builds from a GGUF file match the file's own vocabulary?

transformers converts a GGUF file's token list into a `tokenizers` tokenizer by its own rules (for Gemma those
rules were once wrong), so before a GGUF model is trained or scored its tokenizer is compared with what the
file says (`vramlab tokenizer-check SOURCE`): the vocabulary size, the id of every token string, the BPE
merges, the special tokens (bos, eos, padding, unknown, and every control token), whether a bos token is
added, the chat template, and sample texts (English, Spanish, Catalan, code, a chat turn) whose ids must
spell the text again through the file's own token strings and decode back to it exactly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.stack.models.gguf_file import GGUFFileError, open_gguf

SAMPLES = {
    "English": "The quick brown fox jumps over the lazy dog. Isn't it 3.14159 times   faster?\n",
    "Spanish": "¿Dónde está el niño? Mañana comeré piñones con el pingüino en Cádiz, ¡qué ilusión!",
    "Catalan": "La col·lecció de l'il·lustre paral·lelisme: façana, caçar, plaça i cel·la a Barcelona.",
    "code": 'def área(x: int) -> dict[str, int]:\n\t"""Ñ."""\n    return {"l·l": x ** 2}  # ç\r\n',
}
# llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
CONTROL, USER_DEFINED = 3, 4


@dataclass(frozen=True)
class GGUFVocab:
    """A GGUF file's tokenizer.ggml.* fields."""

    model: str  # "gpt2" (byte-level BPE), "llama" (SentencePiece) ...
    tokens: list[str]
    types: list[int]
    merges: list[str]
    special: dict[str, int | None]  # bos, eos, padding, unknown
    add_bos: bool | None
    chat_template: str | None


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.check}: {self.detail}"


def read_vocab(file: Path) -> GGUFVocab:
    reader = open_gguf(file)

    def strings(name: str) -> list[str]:
        field = reader.fields.get(name)
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data] if field else []

    def value(name: str):
        field = reader.fields.get(name)
        if field is None:
            return None
        part = field.parts[field.data[0]]
        return bytes(part).decode("utf-8") if part.dtype.kind == "u" and part.dtype.itemsize == 1 else part[0].item()

    types_field = reader.fields.get("tokenizer.ggml.token_type")
    types = [int(types_field.parts[i][0]) for i in types_field.data] if types_field else []
    special = {k: value(f"tokenizer.ggml.{k}_token_id") for k in ("bos", "eos", "padding", "unknown")}
    add_bos = value("tokenizer.ggml.add_bos_token")
    return GGUFVocab(value("tokenizer.ggml.model"), strings("tokenizer.ggml.tokens"), types,
                     strings("tokenizer.ggml.merges"), special, None if add_bos is None else bool(add_bos),
                     value("tokenizer.chat_template"))


@cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: the printable character that stands for each byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[chr(byte)] = byte
        else:
            chars[chr(256 + extra)] = byte
            extra += 1
    return chars


def spelled(vocab: GGUFVocab, ids: list[int]) -> str:
    """The text the token ids stand for, read from the GGUF file's own token strings (not transformers')."""
    out = bytearray()
    for i in ids:
        token = vocab.tokens[i]
        if vocab.types and vocab.types[i] == CONTROL:
            out += token.encode()
        elif vocab.model == "gpt2":
            out += bytes(_byte_decoder()[c] for c in token)
        elif re.fullmatch(r"<0x[0-9A-Fa-f]{2}>", token):
            out.append(int(token[3:5], 16))
        else:
            out += token.replace("▁", " ").encode()
    return out.decode("utf-8", errors="replace")


def _merges_of(tokenizer: Any) -> list[str]:
    model = json.loads(tokenizer.backend_tokenizer.to_str())["model"]
    return [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]


def _first(pairs: list, n: int = 3) -> str:
    return ", ".join(repr(p) for p in pairs[:n]) + (f" (+{len(pairs) - n} more)" if len(pairs) > n else "")


def compare(vocab: GGUFVocab, tokenizer: Any, samples: dict[str, str] | None = None) -> list[Finding]:
    findings = []
    size = len(tokenizer)
    findings.append(Finding("vocabulary size", size == len(vocab.tokens),
                            f"GGUF {len(vocab.tokens):,} tokens, tokenizer {size:,}"))

    ids = tokenizer.get_vocab()
    wrong = [(t, i, ids.get(t)) for i, t in enumerate(vocab.tokens) if ids.get(t) != i]
    extra = sorted(set(ids) - set(vocab.tokens))
    findings.append(Finding("token ids", not wrong and not extra,
                            f"{len(vocab.tokens) - len(wrong):,} of {len(vocab.tokens):,} token strings have the "
                            f"GGUF id" + (f"; differ (token, GGUF id, tokenizer id): {_first(wrong)}" if wrong else "")
                            + (f"; not in the GGUF file: {_first(extra)}" if extra else "")))

    if vocab.merges:
        merges = _merges_of(tokenizer)
        same = merges == vocab.merges
        where = next((i for i, (a, b) in enumerate(zip(merges, vocab.merges, strict=False)) if a != b), None)
        findings.append(Finding("merges", same, f"GGUF {len(vocab.merges):,}, tokenizer {len(merges):,}"
                                + ("" if same else f"; first difference at {where}")))

    def named(i: int | None) -> str:
        return "none" if i is None else f"{i} {vocab.tokens[i] if i < len(vocab.tokens) else '?'!r}"

    attributes = {"bos": "bos_token_id", "eos": "eos_token_id", "padding": "pad_token_id", "unknown": "unk_token_id"}
    for key, attribute in attributes.items():
        theirs, ours = vocab.special[key], getattr(tokenizer, attribute)
        # a bos token the file says is never added changes no encoding (Qwen's own tokenizer has none)
        moot = key == "bos" and ours is None and vocab.add_bos is False
        findings.append(Finding(f"{key} token", theirs == ours or moot,
                                f"GGUF {named(theirs)}, tokenizer {named(ours)}"
                                + (" (the file adds no bos token)" if moot and theirs != ours else "")))

    control = {t for t, kind in zip(vocab.tokens, vocab.types, strict=True) if kind == CONTROL}
    special = {t.content for t in tokenizer.added_tokens_decoder.values() if t.special}
    findings.append(Finding("control tokens", control == special,
                            f"{len(control)} in the GGUF file, {len(special)} special in the tokenizer"
                            + (f"; GGUF only: {_first(sorted(control - special))}" if control - special else "")
                            + (f"; tokenizer only: {_first(sorted(special - control))}" if special - control else "")))
    # control and user-defined tokens written as text (a chat or fill-in-the-middle prompt) must each
    # become their one id, not a run of byte-level pieces
    marked = [(i, t) for i, (t, kind) in enumerate(zip(vocab.tokens, vocab.types, strict=True))
              if kind in (CONTROL, USER_DEFINED)]
    pieces = {t: tokenizer(t, add_special_tokens=False)["input_ids"] for _, t in marked}
    split = [(t, len(pieces[t])) for i, t in marked if pieces[t] != [i]]
    findings.append(Finding("control and user-defined tokens as text", not split,
                            f"{len(marked) - len(split)} of {len(marked)} encode to their one id"
                            + (f"; split (token, pieces): {_first(split, 4)}" if split else "")))

    if vocab.add_bos is not None:
        probe = tokenizer("a")["input_ids"]
        adds = bool(probe) and probe[0] == tokenizer.bos_token_id and tokenizer.bos_token_id is not None
        findings.append(Finding("adds bos", adds == vocab.add_bos, f"GGUF {vocab.add_bos}, tokenizer {adds}"))

    if vocab.chat_template is not None:
        findings.append(Finding("chat template", tokenizer.chat_template == vocab.chat_template,
                                f"{len(vocab.chat_template):,} characters in the GGUF file"))

    samples = dict(SAMPLES if samples is None else samples)
    # a chat turn, its markers written as text: each must become its one control token
    bos, eos = vocab.special["bos"], vocab.special["eos"]
    opener = "<|im_start|>" if "<|im_start|>" in control else (vocab.tokens[bos] if bos is not None else None)
    closer = "<|im_end|>" if "<|im_end|>" in control else (vocab.tokens[eos] if eos is not None else None)
    if opener and closer:
        samples["chat turn"] = f"{opener}user\nHola, ¿qué tal?{closer}\n"
    for name, text in samples.items():
        encoded = tokenizer(text, add_special_tokens=False)["input_ids"]
        decoded = tokenizer.decode(encoded)
        spelt = spelled(vocab, encoded)
        findings.append(Finding(f"sample {name}", decoded == text and spelt == text,
                                f"{len(text)} characters -> {len(encoded)} tokens; decodes back "
                                f"{'exactly' if decoded == text else f'as {decoded!r}'}; the GGUF token strings "
                                f"spell {'it' if spelt == text else repr(spelt)}"))
    return findings


def register_marked_tokens(tokenizer: Any, vocab: GGUFVocab) -> list[str]:
    """Add the file's control tokens (as special) and user-defined tokens that transformers' conversion left
    as plain vocabulary entries, each at its existing id; returns those added. Without this, `<|im_start|>`
    written as text falls apart into byte pieces and Unsloth finds no pad-named token for Qwen. Plain text
    never spells these markers, so its token ids stay as they were."""
    from tokenizers import AddedToken

    known = {t.content for t in tokenizer.added_tokens_decoder.values()}
    added = []
    for kind, special in ((CONTROL, True), (USER_DEFINED, False)):
        missing = [t for t, k in zip(vocab.tokens, vocab.types, strict=True) if k == kind and t not in known]
        tokenizer.add_tokens([AddedToken(t, special=special, normalized=False) for t in missing],
                             special_tokens=special)
        added += missing
    return added


def gguf_tokenizer(file: Path, vocab: GGUFVocab | None = None) -> Any:
    """The tokenizer every GGUF model source uses: transformers' conversion, its marked tokens registered."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)
    register_marked_tokens(tokenizer, vocab if vocab is not None else read_vocab(file))
    return tokenizer


def check_file(file: Path) -> list[Finding]:
    """Compare the tokenizer a GGUF model source builds with the file's vocabulary."""
    vocab = read_vocab(file)  # parsed once, for the registration and the comparison
    if not vocab.tokens:
        raise GGUFFileError(f"{file}: no tokenizer in it (no tokenizer.ggml.tokens), so there is nothing to compare; a "
                            "GGUF model without one needs its tokenizer from elsewhere")
    try:
        built = gguf_tokenizer(file, vocab)
    except ValueError as err:  # transformers' own words, on one line
        said = " ".join(str(err).split())[:300]
        raise GGUFFileError(f"{file}: transformers cannot build a tokenizer from it ({said})") from None
    return compare(vocab, built)
