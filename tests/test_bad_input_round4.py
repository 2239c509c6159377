"""Bad input, fourth round (issue 25, /work/trial-report-round4.md): each case the trial found unclear, accepted or
damaging gets one line and a non-zero exit, nothing written, and no committed report or result replaced by one
built from less. Tests that run vramlab in a child process are marked slow."""

from __future__ import annotations

from pathlib import Path

import pytest

F = 'model: "arch:tiny-llama", data: zipf, device: cpu, warmup_steps: 0, steps: 1, context: 64'


def _matrix(tmp_path: Path, text: str, name: str = "m") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


def _refused(path: str, expected: str) -> None:
    from harness.spec.matrix import MatrixError, expand

    with pytest.raises(MatrixError) as err:
        expand(path)
    assert expected in str(err.value) and "\n" not in str(err.value), str(err.value)


# F12, F13: a control character in a matrix file is a YAML error like any other, not a traceback
@pytest.mark.parametrize("junk", ["\x00\n", 'description: "\x07bell"\n'])
def test_a_control_character_in_a_matrix_file_is_one_line(tmp_path, junk):
    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\n{junk}"), "unacceptable character")


# P08: YAML's merge key is read as YAML reads it; a key written twice is still refused
def test_a_merge_key_is_read_and_duplicates_beside_it_are_still_refused(tmp_path):
    from harness.spec.matrix import expand

    base = f"fixed: &b {{{F}, adapter: lora}}\ndesign: list\ncells:\n"
    cells = expand(_matrix(tmp_path, base + "  - {name: one, <<: *b}\n  - {name: two, <<: *b, adapter: rslora}\n"))
    assert [(c.name, c.settings["adapter"]) for c in cells] == [("one", "lora"), ("two", "rslora")]
    _refused(_matrix(tmp_path, base + "  - {name: one, <<: *b, name: two}\n", "dup"), "is written twice")


# M38 (and S11's plan): cells sharing one GPU are bounded, wherever the number is given
def test_cells_per_device_beyond_the_limit_are_refused(tmp_path, monkeypatch):
    from harness.core.environment_variables import MAX_DEVICE_SLOTS, device_slots
    from harness.core.errors import UsageError
    from harness.process.device_lease import slots_wanted

    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\nconcurrent_cells: 1000000000000\n"),
             f"more than the limit of {MAX_DEVICE_SLOTS}")
    with pytest.raises(ValueError, match="more than the limit"):
        slots_wanted(MAX_DEVICE_SLOTS + 1)
    monkeypatch.setenv("VRAMLAB_DEVICE_SLOTS", str(MAX_DEVICE_SLOTS + 1))
    with pytest.raises(UsageError, match=f"from 1 to {MAX_DEVICE_SLOTS}"):
        device_slots()
    assert slots_wanted(MAX_DEVICE_SLOTS) == MAX_DEVICE_SLOTS


# M55: an exclude entry that matches no cell is stale, said, not dropped without a word
def test_an_exclude_entry_that_matches_no_cell_is_refused(tmp_path):
    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\naxes: {{adapter: [lora]}}\nexclude: [{{adapter: rslora}}]\n"),
             "exclude[0]: matches no cell")


# M69: the description is free text, not any YAML value
def test_a_description_that_is_no_text_is_refused(tmp_path):
    _refused(_matrix(tmp_path, f"description: [a, list]\nfixed: {{{F}}}\naxes: {{adapter: [lora]}}\n"),
             "description: expected text, got a list")


# N07: a name in the setting=level form names the cell's own level
def test_a_cell_name_that_states_another_setting_is_refused(tmp_path):
    from harness.spec.matrix import expand

    cells = "cells: [{name: \"adapter=rslora\", adapter: lora}, {name: y, adapter: rslora}]\n"
    _refused(_matrix(tmp_path, f"fixed: {{{F}}}\ndesign: list\n{cells}"),
             "the name says adapter=rslora, but the cell has adapter=lora")
    # the same form stating the cell's own levels (budget and rate in other spellings), or free text, stands
    fine = ('cells: [{name: "adapter=rslora,budget=16384MiB,learning_rate=2e-4", adapter: rslora, budget: 16GiB},'
            ' {name: "adapter=my-own,checkpointing=off", adapter: lora, checkpointing: "off"}]\n')
    assert len(expand(_matrix(tmp_path, f"fixed: {{{F}}}\ndesign: list\n{fine}", "fine"))) == 2


# M74, H04: a model folder whose config.json names no model_type is refused when the matrix is read
def test_a_model_folder_without_a_model_type_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    fixed = F.replace('"arch:tiny-llama"', f'"{tmp_path / "empty"}"')
    _refused(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"), "config.json: no model_type")


# Q01: chat data needs a chat template, which the arch: presets' placeholder tokenizer has not
def test_chat_data_for_a_model_without_a_chat_template_is_refused(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}\n')
    fixed = F.replace("data: zipf", f'data: "chat:{chat}"')
    _refused(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"), "has a placeholder tokenizer")


# P10: a folder given to chat: (or a file to text:) is named as what it is
@pytest.mark.parametrize("kind", ["chat", "text"])
def test_user_data_of_the_wrong_kind_says_what_the_path_is(tmp_path, kind):
    given = tmp_path if kind == "chat" else _matrix(tmp_path, "x: 1\n", "afile")
    fixed = F.replace("data: zipf", f'data: "{kind}:{given}"')
    _refused(_matrix(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"),
             f"is a {'folder' if kind == 'chat' else 'file'}; chat: takes a .jsonl file")
