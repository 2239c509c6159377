"""Vocabulary slicing: keep the N most frequent tokens of the training data, slice embedding and LM head.

Kept: every special and added token, every byte-fallback token (so any text can still be spelled),
then the most frequent tokens of this cell's training data, then, if the data holds fewer distinct
tokens than N, the lowest remaining ids (BPE merges are numbered roughly by frequency). Training ids
are remapped to the new rows; a token outside the kept set becomes the fallback token (unk, else eos),
as a sliced tokenizer would emit, and the share of such tokens is recorded: it is the quality price.
The full-size embedding and head are freed, which is the memory the technique buys (2 tensors of
vocab x hidden; with the logits, 4 bytes x context x vocab in fp32 as well).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from harness.techniques.base import Plan, Technique

_BYTE_PIECE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")


def byte_level_symbols() -> set[str]:
    """The 256 characters byte-level BPE (GPT-2 and its descendants) uses for raw bytes: printable
    Latin-1 bytes stand for themselves, the other bytes are shifted above U+0100."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    symbols = {chr(b) for b in printable}
    shifted = sum(1 for b in range(256) if b not in printable)
    symbols |= {chr(256 + i) for i in range(shifted)}
    return symbols


def byte_fallback_ids(tokenizer: Any) -> set[int]:
    """Ids of tokens that stand for single bytes: SentencePiece's <0xNN> pieces, or the 256 base
    symbols of a byte-level BPE."""
    byte_symbols = byte_level_symbols()
    found = set()
    for token, index in tokenizer.get_vocab().items():
        if _BYTE_PIECE.match(token) or (len(token) == 1 and token in byte_symbols):
            found.add(index)
    return found


def choose_kept(sequences: list[list[int]], vocab_size: int, target: int, protected: set[int]) -> list[int]:
    protected = {i for i in protected if 0 <= i < vocab_size}
    if len(protected) > target:
        raise ValueError(f"vocabulary {target} is smaller than the {len(protected)} special and byte tokens")
    kept = set(protected)
    counts = Counter(t for seq in sequences for t in seq)
    for token, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(kept) >= target:
            break
        kept.add(token)
    for token in range(vocab_size):
        if len(kept) >= target:
            break
        kept.add(token)
    return sorted(kept)


class Vocabulary(Technique):
    axis = "vocabulary"

    def after_load(self, model: Any, plan: Plan) -> Any:
        target = plan.level(self.axis)
        old_size = model.get_input_embeddings().weight.shape[0]
        if target == "native":
            plan.records["vocabulary"] = {"size": old_size}
            return model
        if target >= old_size:
            raise ValueError(f"vocabulary {target} is not smaller than the model's {old_size}")
        import torch

        tok = plan.tokenizer
        protected = set(tok.all_special_ids) | set(tok.added_tokens_decoder) | byte_fallback_ids(tok)
        kept = choose_kept(plan.sequences, old_size, target, protected)
        new_id = torch.full((old_size,), -1, dtype=torch.long)
        new_id[torch.tensor(kept)] = torch.arange(len(kept))
        fallback_old = tok.unk_token_id if tok.unk_token_id is not None else tok.eos_token_id
        fallback = int(new_id[fallback_old])

        total = outside = 0
        remapped = []
        for seq in plan.sequences:
            ids = new_id[torch.tensor(seq)]
            outside += int((ids < 0).sum())
            total += len(seq)
            remapped.append(torch.where(ids < 0, fallback, ids).tolist())
        plan.sequences[:] = remapped

        self._slice(model, torch.tensor(kept))
        for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
            old = getattr(model.config, name, None)
            if isinstance(old, int) and 0 <= old < old_size:
                setattr(model.config, name, int(new_id[old]) if new_id[old] >= 0 else fallback)
        plan.records["vocabulary"] = {
            "size": len(kept), "native_size": old_size, "protected_tokens": len(protected),
            "distinct_training_tokens": len({t for s in plan.sequences for t in s}),
            "outside_share": outside / total if total else 0.0, "outside_tokens": outside,
            "fallback_token": fallback_old,
        }
        return model

    @staticmethod
    def _slice(model: Any, kept: Any) -> None:
        import torch

        old_in = model.get_input_embeddings()
        old_out = model.get_output_embeddings()
        tied = old_out is not None and old_out.weight is old_in.weight
        device = old_in.weight.device
        kept = kept.to(device)
        new_in = torch.nn.Embedding(len(kept), old_in.weight.shape[1], padding_idx=None,
                                    device=device, dtype=old_in.weight.dtype)
        new_in.weight.data.copy_(old_in.weight.data.index_select(0, kept))
        model.set_input_embeddings(new_in)
        if old_out is not None:
            if tied:
                new_out = torch.nn.Linear(old_out.in_features, len(kept), bias=False, device=device,
                                          dtype=old_in.weight.dtype)
                new_out.weight = new_in.weight
            else:
                new_out = torch.nn.Linear(old_out.in_features, len(kept), bias=old_out.bias is not None,
                                          device=device, dtype=old_out.weight.dtype)
                new_out.weight.data.copy_(old_out.weight.data.index_select(0, kept))
                if old_out.bias is not None:
                    new_out.bias.data.copy_(old_out.bias.data.index_select(0, kept))
            model.set_output_embeddings(new_out)
        model.config.vocab_size = len(kept)
        del old_in, old_out
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
