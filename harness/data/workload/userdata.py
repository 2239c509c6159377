"""The user's own data: chat conversations (JSONL) and long documents (a folder of .txt files).

Every problem is a DataError whose message is one line naming the file, the line (or byte), what is
wrong and how to fix it, because the person reading it is looking at a training run that refused to
start, not at this code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.core.errors import UsageError
from harness.core.json_objects import KeyTwice, no_key_twice
from harness.core.path_problems import not_a_regular_file
from harness.core.suggest import closest
from harness.data.workload.documents import Document
from harness.data.workload.sections import split_sections

ROLES = ("system", "user", "assistant")
# names other tools use for the same roles (ShareGPT, Gemini, ...)
_ROLE_ALIASES = {"human": "user", "gpt": "assistant", "bot": "assistant", "model": "assistant", "ai": "assistant"}
_EXAMPLE = '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}'


class DataError(UsageError):
    """User data that cannot be read, with a one-line message saying where and how to fix it."""


def looked_at(path: str | Path) -> Path:
    """The path as it is read, absolute: every message names it so, since a relative one in a matrix is read from
    wherever the command runs, which the person reading the error may not know."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):  # a symlink loop: its own message says so (harness/core/path_problems.py)
        return Path(path).expanduser().absolute()


def _text(path: Path) -> str:
    kind = not_a_regular_file(path)
    if kind is not None:
        raise DataError(f"{path} is {kind}, not a file; give a UTF-8 text file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror})") from None
    skip = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # the byte-order mark some editors write
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = skip + error.start
        line = data[:offset].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not UTF-8 (byte {offset} is 0x{data[offset]:02x}); "
                        "save the file with UTF-8 encoding") from None
    nul = data.find(b"\x00")
    if nul >= 0:  # valid UTF-8, but no text holds NUL bytes
        line = data[:nul].count(b"\n") + 1
        raise DataError(f"{path}:{line}: a binary file (byte {nul} is 0x00), not text; give a UTF-8 text file")
    return text


def _type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null",
            int: "number", float: "number"}.get(type(value), type(value).__name__)


def _role_hint(role: Any) -> str:
    if not isinstance(role, str):
        return ""
    guess = _ROLE_ALIASES.get(role.lower()) or closest(role.lower(), ROLES)
    return f" (did you mean {guess!r}?)" if guess else ""


def _messages(record: Any, where: str) -> list[dict[str, str]]:
    if not isinstance(record, dict):
        raise DataError(f"{where}: the line is a JSON {_type(record)}, not an object; write one object per line "
                        f"such as {_EXAMPLE}")
    if "messages" not in record:
        close = closest("messages", record)
        hint = f" ({close!r} looks like a misspelling of it)" if close else ""
        raise DataError(f"{where}: no 'messages' key{hint}; keys found: {', '.join(map(str, record)) or 'none'}; "
                        f"expected {_EXAMPLE}")
    messages = record["messages"]
    if not isinstance(messages, list) or not messages:
        raise DataError(f"{where}: 'messages' must be a non-empty array of {{role, content}} objects, "
                        f"got {_type(messages) if messages != [] else 'an empty array'}")
    result = []
    for n, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            raise DataError(f"{where}: message {n} is a JSON {_type(message)}; each message must be an object "
                            'like {"role": "user", "content": "..."}')
        role = message.get("role")
        if role not in ROLES:
            raise DataError(f"{where}: message {n} has role {role!r}{_role_hint(role)}; the role must be one of "
                            f"{', '.join(ROLES)}")
        content = message.get("content")
        if not isinstance(content, str):
            found = "no content" if content is None else f"content of type {_type(content)}"
            raise DataError(f"{where}: message {n} ({role}) has {found}; the content must be a string (for "
                            "several parts, join their text into one string)")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone surrogate: valid JSON (\ud800), but no text a tokenizer takes
            raise DataError(f"{where}: message {n} ({role}) holds an unpaired surrogate "
                            f"(\\u{ord(content[error.start]):04x} at character {error.start}), which is no text; "
                            "remove it") from None
        result.append({"role": role, "content": content})
    if not any(m["role"] == "assistant" for m in result):
        raise DataError(f"{where}: no assistant message, so there is nothing to train on; add the reply the model "
                        "should learn as a message with role 'assistant'")
    if not any(m["content"].strip() for m in result if m["role"] == "assistant"):
        raise DataError(f"{where}: every assistant message is empty, so there is nothing to train on but the chat "
                        "template's own tokens; give the reply the model should learn")
    return result


def read_chat_jsonl(path: str | Path) -> list[list[dict[str, str]]]:
    """Conversations from a JSONL file: one {"messages": [{"role", "content"}, ...]} object per line, roles
    system, user or assistant, at least one assistant message each; blank lines are skipped."""
    path = looked_at(path)
    conversations = []
    for number, line in enumerate(_text(path).split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line, object_pairs_hook=no_key_twice)
        except KeyTwice as twice:
            raise DataError(f"{where}: key {twice.key!r} is written twice in one object; the second would silently "
                            "replace the first") from None
        except json.JSONDecodeError as error:
            raise DataError(f"{where}: invalid JSON ({error.msg} at column {error.colno}); each line must be "
                            f"one complete JSON object such as {_EXAMPLE}") from None
        except (ValueError, RecursionError) as error:  # a number of thousands of digits, arrays nested too deep
            why = "nested too deep to read" if isinstance(error, RecursionError) else str(error).split(";")[0]
            raise DataError(f"{where}: JSON that cannot be read ({why}); each line must be one conversation such as "
                            f"{_EXAMPLE}") from None
        conversations.append(_messages(record, where))
    if not conversations:
        raise DataError(f"{path}: the file is empty; write one conversation per line, such as {_EXAMPLE}")
    return conversations


def read_text_folder(path: str | Path) -> list[Document]:
    """One Document per *.txt file of the folder (sorted by name, not recursive), split into sections at
    its headings (harness.data.workload.sections); the file name without .txt is the id and the title."""
    folder = looked_at(path)
    if not folder.is_dir():
        raise DataError(f"{folder}: not a folder; give the folder that holds the .txt documents")
    entries = sorted(folder.glob("*.txt"))
    odd = next(((p, kind) for p in entries if (kind := not_a_regular_file(p)) is not None), None)
    if odd is not None:
        raise DataError(f"{odd[0]} is {odd[1]}, not a text file; remove it from the folder or put the document's "
                        "text there")
    files = [p for p in entries if p.is_file()]
    if not files:
        raise DataError(f"{folder}: holds no .txt file; put each document in a UTF-8 file ending in .txt")
    documents = []
    for file in files:
        text = _text(file)
        if not text.strip():
            raise DataError(f"{file}: the file is empty; remove it or give it text")
        documents.append(Document(file.stem, file.stem, tuple(split_sections(text, file.stem))))
    if not any(len(d.sections) > 1 for d in documents):  # each section trains on the text before it
        raise DataError(f"{folder}: no document has a second section, so there is nothing to train on (a section "
                        "is trained on the text before it); mark sections with headings (docs/data.md says which "
                        "lines are read as headings)")
    return documents
