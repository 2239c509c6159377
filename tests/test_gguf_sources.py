"""A gguf: source that is no GGUF model is said to be what it is, in one line: a FIFO or a link to a device is no
file "not found"; a GGUF file without a tokenizer has nothing for `tokenizer-check` to compare; a GGUF file with no
tensors (a vocabulary-only one) is no model, and `validate` refuses it before any cell tries to load it. What a GGUF
file's header tells is read once and kept in the cache."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from harness.stack.models import facts as facts_module
from tests.refusals import refused


def write_gguf(path: Path, tokenizer: bool, tensors: bool) -> Path:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    for add, value in ((writer.add_block_count, 1), (writer.add_context_length, 128),
                       (writer.add_embedding_length, 8), (writer.add_feed_forward_length, 16),
                       (writer.add_head_count, 2)):
        add(value)
    if tokenizer:
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list(["a", "b"])
        writer.add_token_types([1, 1])
    if tensors:
        writer.add_tensor("token_embd.weight", np.zeros((2, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path



def test_tokenizer_check_of_a_gguf_without_a_tokenizer_is_one_line(tmp_path, capsys):
    path = write_gguf(tmp_path / "weights-only.gguf", tokenizer=False, tensors=True)
    refused(["tokenizer-check", f"gguf:{path}"], capsys, f"{path}: no tokenizer in it (no tokenizer.ggml.tokens)")


@pytest.mark.parametrize(("make", "said"), [
    ("fifo", "is a FIFO (a named pipe), not a GGUF file"),
    ("zero", "is a character device (a symlink to /dev/zero), not a GGUF file")])
def test_tokenizer_check_of_something_that_is_no_file_says_what_it_is(tmp_path, capsys, make, said):
    path = tmp_path / "model.gguf"
    if make == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    refused(["tokenizer-check", f"gguf:{path}"], capsys, f"{path} {said}")


def test_validate_refuses_a_gguf_with_no_model_in_it(tmp_path, capsys):
    path = write_gguf(tmp_path / "vocab-only.gguf", tokenizer=True, tensors=False)
    matrix = tmp_path / "m.yaml"
    matrix.write_text(f'fixed: {{model: "gguf:{path}", device: cpu, steps: 2, lora_rank: 4}}\ndesign: list\n'
                      "cells:\n  - {name: a, context: 32}\n")
    refused(["validate", str(matrix)], capsys, f"{path}: a GGUF file with no tensors, so no model in it")


def test_a_gguf_files_facts_are_read_once_and_again_when_the_file_changes(tmp_path, monkeypatch):
    """validate, snakemake and each cell read a matrix's model facts; gguf's reader took seconds for them from the
    SmolLM2 file each time. They are kept in the cache, and a file written since is read again."""
    monkeypatch.setenv("VRAMLAB_CACHE", str(tmp_path / "cache"))
    path = write_gguf(tmp_path / "m.gguf", tokenizer=True, tensors=True)
    reads = []
    real = facts_module.open_gguf
    monkeypatch.setattr(facts_module, "open_gguf", lambda file: reads.append(file) or real(file))
    first = facts_module._gguf_facts(str(path))
    assert facts_module._gguf_facts(str(path)) == first and len(reads) == 1
    assert (first.model_type, first.vocab_size, first.hidden_size, first.layers) == ("llama", 2, 8, 1)
    write_gguf(path, tokenizer=False, tensors=True)  # the same file written again, now with no vocabulary
    assert facts_module._gguf_facts(str(path)).vocab_size is None and len(reads) == 2
    monkeypatch.setenv("VRAMLAB_CACHE", "relative")  # a cache that cannot be used: read each time, no error
    assert facts_module._gguf_facts(str(path)).vocab_size is None and len(reads) == 3
