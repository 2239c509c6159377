"""What a local model folder must hold besides its config.json for a cell to load it: weights and a tokenizer.
Asked by the commands that load the model (validate, run-cell, prepare-model), not where its config is read: the
memory estimate works from a config.json alone (docs/will-it-fit.md)."""

from __future__ import annotations

from pathlib import Path

# the names transformers' from_pretrained looks for in a folder (one file, or the index of its shards)
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
# a fast tokenizer's file, or a slow one's vocabulary (SentencePiece, BPE, WordPiece)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt")


def _holds_any(folder: Path, names: tuple[str, ...]) -> bool:
    return any((folder / name).is_file() for name in names)


def missing_parts(folder: Path) -> str | None:
    """What `folder` lacks to be loaded as a model (its weights, its tokenizer), in words, or None."""
    missing = []
    if not _holds_any(folder, WEIGHT_FILES):
        missing.append("no weights (model.safetensors or pytorch_model.bin, or the index of their shards)")
    if not _holds_any(folder, TOKENIZER_FILES):
        missing.append("no tokenizer (tokenizer.json, tokenizer.model, vocab.json or vocab.txt)")
    return " and ".join(missing) or None


def unloadable_folder(source: str) -> str | None:
    """For a model source that is a local folder with a config.json, what keeps a cell from loading it, in one
    sentence; None for any other source (a preset, a GGUF file, a hub id) and for a whole folder."""
    if source.startswith(("arch:", "gguf:", "package:")):
        return None
    folder = Path(source).expanduser()
    if not (folder / "config.json").is_file():
        return None
    missing = missing_parts(folder)
    if missing is None:
        return None
    return (f"model folder {source!r} holds {missing}, so no model can be loaded from it; save the model and its "
            "tokenizer into it (save_pretrained of each)")
