"""A cell's behaviour fingerprint: digests of what its behaviour depends on beyond its settings (the model file,
the tokenizer, a sliced vocabulary's kept ids, the training data). A cell records it as it trains
(harness/run/train.py); `vramlab check --fresh` computes it again with the code and files of the machine it runs on
(harness/spec/fingerprint_here.py, which harness/results/freshness.py judges results by). Both go through these
functions, so a digest that differs is a difference in what the cell would do, never in how it was computed. Why it
is so: docs/freshness.md."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from harness.stack.models.facts import folder_digest
from harness.stack.models.presets import PRESETS
from harness.stack.models.sources import ResolvedModel

# 1: the digests below; a change to what they cover is a new version, and a check compares only its own version
FINGERPRINT_VERSION = 1


def _sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode())\
        .hexdigest()


def model_digest(resolved: ResolvedModel) -> str | None:
    """The model's file: the GGUF file's sha256; a local folder's config and file list; an arch: preset's fields
    with the seed its random weights are drawn with. None for a hub id, whose files transformers fetches."""
    detail = resolved.detail
    if detail.get("gguf_sha256"):
        return str(detail["gguf_sha256"])
    if detail.get("kind") == "arch":
        return _sha256({"preset": PRESETS[detail["preset"]], "seed": detail["seed"]})
    return folder_digest(resolved.source)


def _merges(tokenizer: Any) -> list[str]:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return []
    merges = json.loads(backend.to_str()).get("model", {}).get("merges") or []
    return [m if isinstance(m, str) else " ".join(m) for m in merges]


def tokenizer_facts(tokenizer: Any) -> dict[str, Any]:
    """What the tokenizer digest covers: every token string with its id, the BPE merges in order, the added tokens
    (special and marked ones) with their ids and flags, and the ids of bos, eos and unk. The padding token is left
    out: a loader may choose one of its own (Unsloth does), and a padded position never counts."""
    added = sorted([i, t.content, bool(t.special), bool(t.normalized), bool(t.lstrip), bool(t.rstrip),
                    bool(t.single_word)] for i, t in tokenizer.added_tokens_decoder.items())
    return {"vocab": sorted(tokenizer.get_vocab().items(), key=lambda kv: (kv[1], kv[0])),
            "merges": _merges(tokenizer), "added": added,
            "special": {name: getattr(tokenizer, f"{name}_token_id", None) for name in ("bos", "eos", "unk")}}


def tokenizer_digest(tokenizer: Any) -> tuple[str, int, int]:
    """The tokenizer's digest, its size (added tokens included) and how many added tokens it has."""
    found = tokenizer_facts(tokenizer)
    return _sha256(found), len(found["vocab"]), len(found["added"])


def ids_digest(ids: Iterable[int]) -> str:
    """A set of token ids (a sliced vocabulary's kept ones), in id order."""
    return _sha256(sorted(int(i) for i in ids))


def fingerprint(resolved: ResolvedModel, tokenizer: Any, training_data: str | None,
                kept: Iterable[int] | None) -> dict[str, Any]:
    """The fingerprint a result records (harness/results/model.py, Fingerprint): `tokenizer` as the model source
    gives it (sources.source_tokenizer), `training_data` the sequences' fingerprint as built, `kept` a sliced
    vocabulary's ids (None: native)."""
    digest, size, added = tokenizer_digest(tokenizer)
    return {"version": FINGERPRINT_VERSION, "model": model_digest(resolved), "tokenizer": digest,
            "tokenizer_tokens": size, "added_tokens": added,
            "kept_tokens": ids_digest(kept) if kept is not None else None, "training_data": training_data}
