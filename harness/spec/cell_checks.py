"""Checks of a matrix's cells beside their settings' own: a name that states a setting the cell does not have, and
chat data given to a model whose tokenizer has no chat template to format it with."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.spec.settings import SETTINGS


def _readings(text: str) -> Iterator[Any]:
    """What `setting=text` in a name may mean: the text as written, as YAML reads it, as a number."""
    yield text
    with contextlib.suppress(yaml.YAMLError):
        yield yaml.safe_load(text)
    with contextlib.suppress(ValueError):
        yield float(text)


def _as_level(name: str, reading: Any) -> tuple[bool, Any]:
    setting = SETTINGS[name]
    if setting.check(reading):
        return False, None
    return True, setting.canonical(reading) if setting.canonical else reading


def name_contradiction(name: str, settings: dict[str, Any]) -> str | None:
    """Where a given name reads `setting=level` (the form generated names take) and the cell has another level of
    that setting, what it says and what the cell has; a part that reads as no level of its setting is free text."""
    for part in name.split(","):
        key, sep, text = part.partition("=")
        if not sep or key not in SETTINGS or isinstance(settings.get(key), list | dict):
            continue
        levels = [level for ok, level in map(lambda r: _as_level(key, r), _readings(text)) if ok]
        if levels and settings.get(key) not in levels:
            return f"the name says {key}={text}, but the cell has {key}={settings.get(key)}"
    return None


def chat_template_problem(settings: dict[str, Any]) -> str | None:
    """chat: data is formatted by the model's chat template: an arch: preset's placeholder tokenizer has none, nor
    has a model folder whose tokenizer config names none (a GGUF file's is read only when it loads)."""
    data, model = str(settings.get("data")), str(settings.get("model"))
    if not data.startswith("chat:"):
        return None
    if model.startswith("arch:"):
        return (f"chat data is formatted by the model's chat template, and {model} (random weights) has a placeholder "
                "tokenizer without one; give a model with a chat template (package:, a model folder) or text: data")
    folder = Path(model).expanduser()
    config = folder / "tokenizer_config.json"
    own_file = any((folder / name).is_file() for name in ("chat_template.jinja", "chat_template.json"))
    if config.is_file() and not own_file:
        try:
            template = json.loads(config.read_text()).get("chat_template")
        except (OSError, ValueError, AttributeError):
            return None  # the folder's own problem, told when it loads
        if not template:
            return (f"chat data is formatted by the model's chat template, and the tokenizer of {model} has none "
                    f"({config} names no chat_template); give a model with one, or text: data")
    return None
