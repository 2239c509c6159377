"""What can be known about a cell's model without loading its weights: its family, how many positions and
tokens it has, the names of its linear layers, and its shapes. Matrix validation uses it, so that a context
beyond the model's positions, a vocabulary target not smaller than its vocabulary, or LoRA targets that match
no layer are told before anything runs; the memory estimate (harness/estimate) reads the shapes.

Read from the preset (arch:), the folder's config.json, the GGUF file's header (package:, gguf:), or for a hub id
its config.json in the hub cache, read by transformers' AutoConfig (with the defaults a config.json leaves out); a
hub id that is not on this machine tells nothing, and then nothing is checked.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.core.path_problems import not_a_regular_file
from harness.core.suggest import did_you_mean
from harness.stack.models import gguf_facts_memo
from harness.stack.models.gguf_file import GGUFFileError, open_gguf
from harness.stack.models.hub import LOCAL_MODELS, UNPINNED, cached_config, hub_id_problem
from harness.stack.models.parts import SPLIT_GGUF
from harness.stack.models.presets import PRESETS
from harness.stack.models.sources import (
    PackageModelError,
    PackageNotInstalledError,
    empty_source_problem,
    missing_parts_problem,
    package_gguf,
)

# linear layer names of the decoder families this harness trains (attention and MLP projections)
LINEAR_LAYERS = {
    family: ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    for family in ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3")
}
# GGUF architecture names -> transformers model_type
_GGUF_FAMILIES = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "gemma3": "gemma3_text",
                  "mistral": "mistral"}


class ModelSourceError(ValueError):
    """The model a cell names cannot be found; the message says how to get it."""


@dataclass(frozen=True)
class ModelFacts:
    model_type: str | None
    max_positions: int | None
    vocab_size: int | None
    # shapes, None where the source does not tell them
    hidden_size: int | None = None
    intermediate_size: int | None = None
    layers: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    tied_embeddings: bool | None = None

    @property
    def linear_layers(self) -> tuple[str, ...] | None:
        return LINEAR_LAYERS.get(self.model_type or "")

    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear layer of one decoder layer (needs the shapes)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        h, i = self.hidden_size, self.intermediate_size
        return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
                "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}

    @property
    def has_shapes(self) -> bool:
        return None not in (self.hidden_size, self.intermediate_size, self.layers, self.heads, self.kv_heads,
                            self.head_dim, self.vocab_size)


def _from_config(config: dict, max_positions_key: str = "max_position_embeddings") -> ModelFacts:
    """A transformers config (a preset is one): head_dim defaults to hidden/heads as transformers does."""
    text = config.get("text_config", config)
    heads = text.get("num_attention_heads")
    head_dim = text.get("head_dim") or (text["hidden_size"] // heads if heads and text.get("hidden_size") else None)
    return ModelFacts(config.get("model_type"), text.get(max_positions_key), text.get("vocab_size"),
                      hidden_size=text.get("hidden_size"), intermediate_size=text.get("intermediate_size"),
                      layers=text.get("num_hidden_layers"), heads=heads,
                      kv_heads=text.get("num_key_value_heads", heads), head_dim=head_dim,
                      tied_embeddings=bool(config.get("tie_word_embeddings", text.get("tie_word_embeddings", False))))


@functools.cache
def facts(source: str, revision: str = UNPINNED) -> ModelFacts | None:
    """None where nothing can be known here (a hub id not cached on this machine). `revision`: a hub id's (its commit
    once the matrix is read), ignored for any other source."""
    if source.startswith("arch:"):
        name = source[len("arch:"):]
        if name not in PRESETS:
            hint = did_you_mean(name, PRESETS, prefix="arch:")
            raise ModelSourceError(f"no architecture preset {name!r}{hint} (known: {', '.join(sorted(PRESETS))})")
        return _from_config(PRESETS[name])
    if source.startswith(("package:", "gguf:")):
        name = source[len("package:"):]
        split = SPLIT_GGUF.get(name) if source.startswith("package:") else None
        if split is not None and split.header and missing_parts_problem(source):
            return ModelFacts(**dict(split.header))  # told without assembling, or locking, anything in the cache
        empty = empty_source_problem(source)
        if empty is not None:
            raise ModelSourceError(empty)
        try:
            file = package_gguf(name) if source.startswith("package:") else Path(source[len("gguf:"):]).expanduser()
        except PackageNotInstalledError as err:
            split = SPLIT_GGUF.get(name)
            if split is not None and split.header:  # known from the registry: loading it will ask for the parts
                return ModelFacts(**dict(split.header))
            raise ModelSourceError(str(err)) from None
        except (FileNotFoundError, PackageModelError) as err:
            raise ModelSourceError(str(err)) from None
        kind = not_a_regular_file(file)
        if kind is not None:
            raise ModelSourceError(f"{file} is {kind}, not a GGUF file")
        if not file.is_file():
            raise ModelSourceError(f"GGUF file not found: {file}")
        return _gguf_facts(str(file))
    path = Path(source).expanduser()
    if (path / "config.json").is_file():
        return _from_config(_folder_config(path / "config.json"))
    if source.startswith(("/", "./", "../", "~")) or path.exists():
        raise ModelSourceError(f"model folder {source!r} does not exist or holds no config.json")
    problem = hub_id_problem(source)
    if problem:
        raise ModelSourceError(f"{source!r} is neither a local model nor a Hugging Face hub id: {problem}; give "
                               f"org/name of the hub, or a local model: {LOCAL_MODELS}")
    config = cached_config(source, None if revision == UNPINNED else revision)
    return None if config is None else _from_config(_auto_config(config))


def _auto_config(file: Path) -> dict[str, Any]:
    """A hub id's config.json from the cache as transformers reads it: AutoConfig fills in what the file leaves to
    the model type's defaults (head_dim, the key-value heads, tied embeddings)."""
    from transformers import AutoConfig

    _folder_config(file)  # a file that is no model's config is named here, not in AutoConfig's traceback
    try:
        return AutoConfig.from_pretrained(str(file.parent), local_files_only=True).to_dict()
    except (ValueError, KeyError, OSError) as err:
        raise ModelSourceError(f"{file}: transformers cannot read it as a model's config ({type(err).__name__}: "
                               f"{' '.join(str(err).split())[:200]})") from None


def folder_digest(source: str) -> str | None:
    """sha256 of a local model folder as far as it is cheap to read: its config.json, and the names and sizes of its
    other files (weights are gigabytes); None for any other source, whose content the harness builds or pins."""
    path = Path(source).expanduser()
    if source.startswith(("arch:", "package:", "gguf:")) or not (path / "config.json").is_file():
        return None
    digest = hashlib.sha256()
    try:
        digest.update((path / "config.json").read_bytes())
        for file in sorted(p for p in path.iterdir() if p.is_file() and p.name != "config.json"):
            digest.update(f"{file.name}\0{file.stat().st_size}\0".encode())
    except OSError:
        return None
    return digest.hexdigest()


def _folder_config(file: Path) -> dict[str, Any]:
    """A model folder's config.json as transformers needs it: a JSON object naming its model_type."""
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ModelSourceError(f"{file}: cannot be read as JSON ({' '.join(str(err).split())[:200]})") from None
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise ModelSourceError(f"{file}: no model_type, so this is no transformers model folder (a config.json "
                               "names its model_type, e.g. \"llama\")")
    return config


def _gguf_facts(file: str) -> ModelFacts:
    kept = gguf_facts_memo.remembered(file)
    if kept is not None:
        try:
            return ModelFacts(**kept)
        except TypeError:  # an entry of fields this version does not have: read again
            pass
    try:
        reader = open_gguf(file)
        found = _read_gguf_facts(reader)
    except GGUFFileError as err:
        raise ModelSourceError(str(err)) from None
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:  # a header of unexpected fields
        raise ModelSourceError(f"{file}: its GGUF header cannot be read ({type(err).__name__}: "
                               f"{' '.join(str(err).split())[:200]})") from None
    # a vocabulary-only GGUF (llama.cpp ships them, ggml-vocab-*.gguf) or one written without its weights has a
    # header like a model's and nothing to load: said here, not when a cell fails on it
    if not len(reader.tensors):
        raise ModelSourceError(f"{file}: a GGUF file with no tensors, so no model in it (a vocabulary-only file, or "
                               "one written without its weights); give a GGUF model file")
    gguf_facts_memo.remember(file, asdict(found))
    return found


def _read_gguf_facts(reader: Any) -> ModelFacts:

    def field(name: str):
        entry = reader.fields.get(name)
        if entry is None:
            return None
        value = entry.parts[entry.data[0]]
        return bytes(value).decode() if value.dtype.kind == "u" and value.dtype.itemsize == 1 else int(value[0])

    arch = field("general.architecture")
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    hidden, heads = field(f"{arch}.embedding_length"), field(f"{arch}.attention.head_count")
    # a GGUF file of a tied model has no separate output tensor (llama.cpp reuses token_embd)
    tied = not any(t.name == "output.weight" for t in reader.tensors)
    return ModelFacts(_GGUF_FAMILIES.get(arch, arch), field(f"{arch}.context_length"),
                      len(tokens.data) if tokens is not None else None,
                      hidden_size=hidden, intermediate_size=field(f"{arch}.feed_forward_length"),
                      layers=field(f"{arch}.block_count"), heads=heads,
                      kv_heads=field(f"{arch}.attention.head_count_kv") or heads,
                      head_dim=field(f"{arch}.attention.key_length") or (hidden // heads if hidden and heads else None),
                      tied_embeddings=tied)
