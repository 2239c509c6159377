"""The user's training data a matrix names (`chat:` files, `text:` folders): what cannot be read or
trained on is refused at validation, naming the path and the line.

The cases come from the bad-input trials (tests/bad_input_trials/); a comment above a test names its case there."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import cli
from tests.refusals import SMOLLM, F, bad_matrix, matrix_at, odd_files, refused, validate


def _user_data(tmp_path: Path, kind: str, files: dict[str, bytes]) -> str:
    if kind == "chat":
        (tmp_path / "chat.jsonl").write_bytes(files["chat.jsonl"])
        return f"chat:{tmp_path / 'chat.jsonl'}"
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return f"text:{folder}"


CHAT_LINE = b'{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}\n'


DATA_CASES = [
    ("chat", {"chat.jsonl": b""}, "the file is empty"),
    ("chat", {"chat.jsonl": CHAT_LINE + b'{"messages": [{"role": "user"\n'}, ":2: invalid JSON"),
    ("chat", {"chat.jsonl": b'{"messages": [{"role": "user", "content": "Hi"}]}\n'}, "no assistant message"),
    ("chat", {"chat.jsonl": b'{"messages": [{"role": "human", "content": "Hi"}]}\n'},
     "has role 'human' (did you mean 'user'?)"),
    ("chat", {"chat.jsonl": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}, "not UTF-8"),
    ("chat", {"chat.jsonl": CHAT_LINE + b"\x00\x00\x00\x00"}, "binary"),
    ("text", {}, "holds no .txt file"),
    ("text", {"a.txt": b"caf\xe9 au lait"}, "not UTF-8"),
    ("text", {"a.txt": b"  \n"}, "the file is empty"),
    ("text", {"a.txt": b"Title\n\x00\x01\x02\x00"}, "binary"),
]


def _data_matrix(tmp_path: Path, data: str) -> str:
    """A SmolLM2 matrix (real weights, so chat: data has a chat template) training on `data` (chat:... or text:...)."""
    return matrix_at(tmp_path, SMOLLM % (f', data: "{data}"', ""))


def _text_folder(tmp_path: Path, text: str) -> Path:
    """A text: folder holding a.txt with `text`."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(text)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "files", "expected"), DATA_CASES)
def test_bad_user_data_is_caught_at_validation(tmp_path, kind, files, expected):
    data = _user_data(tmp_path, kind, files)
    code, err = validate(tmp_path, f'fixed: {{data: "{data}"}}\naxes: {{adapter: [lora]}}')
    assert code == 2, err
    assert "\n" not in err and "fixed.data" in err and expected in err


@pytest.mark.slow
def test_good_user_data_passes_validation(tmp_path):
    data = _user_data(tmp_path, "chat", {"chat.jsonl": CHAT_LINE})
    code, err = validate(tmp_path, f'fixed: {{data: "{data}"}}\naxes: {{adapter: [lora]}}')
    assert code == 0, err


# 5: data errors name the path they read, resolved
def test_data_errors_name_the_resolved_path(tmp_path, monkeypatch):
    from harness.data.workload.userdata import DataError, read_chat_jsonl, read_text_folder
    from harness.spec.matrix import MatrixError, expand

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "docs").mkdir()
    for read, given, expected in ((read_chat_jsonl, "bad.jsonl", f"{tmp_path / 'bad.jsonl'}:1: invalid JSON"),
                                  (read_text_folder, "docs", f"{tmp_path / 'docs'}: holds no .txt file")):
        with pytest.raises(DataError) as raised:
            read(given)
        assert str(raised.value).startswith(expected), raised.value
    for data, expected in (("chat:missing.jsonl", f"no such file {tmp_path / 'missing.jsonl'}"),
                           ("chat:docs", f"{tmp_path / 'docs'} is a folder, not a file"),
                           ("text:./bad.jsonl", f"{tmp_path / 'bad.jsonl'} is a file, not a folder"),
                           ("chat:bad.jsonl", f"{tmp_path / 'bad.jsonl'}:1: invalid JSON")):
        (tmp_path / "m.yaml").write_text(f"fixed: {{model: 'arch:tiny-llama', device: cpu, data: '{data}'}}\n"
                                         "axes: {adapter: [lora]}\n")
        with pytest.raises(MatrixError) as raised:
            expand(str(tmp_path / "m.yaml"))
        assert expected in str(raised.value), raised.value


# Q01: chat data needs a chat template, which the arch: presets' placeholder tokenizer has not
def test_chat_data_for_a_model_without_a_chat_template_is_refused(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}\n')
    fixed = F.replace("data: zipf", f'data: "chat:{chat}"')
    bad_matrix(matrix_at(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"), "has a placeholder tokenizer")


# P10: a folder given to chat: (or a file to text:) is named as what it is
@pytest.mark.parametrize("kind", ["chat", "text"])
def test_user_data_of_the_wrong_kind_says_what_the_path_is(tmp_path, kind):
    given = tmp_path if kind == "chat" else matrix_at(tmp_path, "x: 1\n", "afile")
    fixed = F.replace("data: zipf", f'data: "{kind}:{given}"')
    bad_matrix(matrix_at(tmp_path, f"fixed: {{{fixed}}}\naxes: {{adapter: [lora]}}\n"),
               f"is a {'folder, not a file' if kind == 'chat' else 'file, not a folder'}; chat: takes a .jsonl file")


# D16, D18, D19, T07: chat:/text: data that is a link loop (a traceback), a device, a FIFO, a folder of a device
@pytest.mark.parametrize("which", ["fifo", "zero", "loop", "dangling"])
def test_chat_data_that_is_no_regular_file_is_said_to_be_what_it_is(tmp_path, capsys, which):
    path, kind = odd_files(tmp_path)[which]
    shown = path.absolute()
    refused(["validate", _data_matrix(tmp_path, f"chat:{path}")], capsys,
            f"fixed.data: 'chat:{path}': {shown} is {kind}, not a file")


def test_a_text_folder_with_a_txt_that_is_no_file_names_it(tmp_path, capsys):
    folder = _text_folder(tmp_path, "Some text to train on.\n")
    (folder / "z.txt").symlink_to("/dev/zero")
    refused(["validate", _data_matrix(tmp_path, f"text:{folder}")], capsys,
            f"{folder / 'z.txt'} is a character device (a symlink to /dev/zero), not a text file")


# D13, D23: a conversation whose only assistant turn is empty trained on the template's tokens alone
def test_a_conversation_with_only_empty_replies_is_refused(tmp_path, capsys):
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "  "}]}\n')
    refused(["validate", _data_matrix(tmp_path, f"chat:{data}")], capsys,
            f"{data}:1: every assistant message is empty, so there is nothing to train on")


# D27, D28, D30: chat lines Python's JSON cannot take (a traceback), and a lone surrogate (a tokenizer's TypeError)
@pytest.mark.parametrize(("line", "said"), [
    ('{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}", "JSON that cannot be read (nested too deep to read)"),
    ('{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}], "n": ' + "9" * 5000
     + "}", "JSON that cannot be read (Exceeds the limit (4300 digits)"),
    ('{"messages": [{"role": "user", "content": "hi\\ud800"}, {"role": "assistant", "content": "x"}]}',
     "message 1 (user) holds an unpaired surrogate (\\ud800 at character 2)")])
def test_chat_lines_that_are_no_text_are_refused_by_line(tmp_path, capsys, line, said):
    data = tmp_path / "chat.jsonl"
    data.write_text(line + "\n")
    refused(["validate", _data_matrix(tmp_path, f"chat:{data}")], capsys, f"{data}:1: {said}")


def test_a_chat_line_with_a_key_twice_is_refused(tmp_path, capsys):
    data = tmp_path / "chat.jsonl"
    data.write_text('{"messages":[{"role":"user","content":"hi","role":"system"},'
                    '{"role":"assistant","content":"hello"}]}\n')
    refused(["validate", _data_matrix(tmp_path, f"chat:{data}")], capsys,
            f"{data}:1: key 'role' is written twice in one object")


def test_text_documents_of_one_section_are_refused_at_validate(tmp_path, capsys):
    folder = _text_folder(tmp_path, "one line of prose and nothing after it\n")
    refused(["validate", _data_matrix(tmp_path, f"text:{folder}")], capsys,
            f"{folder}: no document has a second section, so there is nothing to train on")
    (folder / "b.txt").write_text("# One\n\nThe first section.\n\n# Two\n\nThe second, trained on the first.\n")
    assert cli.main(["validate", _data_matrix(tmp_path, f"text:{folder}")]) == 0
