"""A conversation as one training example, with the loss on the assistant's tokens only.

Most chat templates (SmolLM2's among them) have no `{% generation %}` markers, so the assistant's
tokens are found by rendering: the tokens of message i are what rendering messages[:i+1] adds to
rendering messages[:i]. Of an assistant message, the part that rendering messages[:i] with the
generation prompt already produces (e.g. "<|im_start|>assistant\\n") is the header and gets no loss; the
rest (content and end-of-turn tokens) does. This works only if each rendering is a prefix of the next:
templates that rewrite earlier turns once later ones exist (Qwen3 drops past reasoning) break it, and
that is reported as an error instead of silently mislabelling tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.data.workload.spelling import Spell, spread
from harness.data.workload.truncation import DoesNotFit

Message = dict[str, str]


@dataclass(frozen=True)
class Example:
    input_ids: list[int]
    completion_mask: list[int]  # 1 where the loss applies
    source: str = ""
    prefix_tokens: int = 0  # tokens before the first trained one (document examples)
    notes: tuple[str, ...] = field(default=())  # what was cut to fit, if anything
    marks: bytes = b""  # spelled in a sliced vocabulary: what each token came from (harness/data/workload/spelling.py)

    def record(self) -> dict[str, list[int]]:
        """The columns TRL's SFTTrainer reads from a pre-tokenized dataset (with completion_only_loss)."""
        return {"input_ids": list(self.input_ids), "completion_mask": list(self.completion_mask)}


class TemplateError(ValueError):
    """The chat template cannot be split into per-message pieces by rendering prefixes."""


def _render(tokenizer: Any, messages: Sequence[Message], generation_prompt: bool = False) -> list[int]:
    if not messages and not generation_prompt:
        return []
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=generation_prompt)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _name(tokenizer: Any) -> str:
    return getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__


def _pieces(tokenizer: Any, messages: Sequence[Message]) -> tuple[list[int], list[int]]:
    ids: list[int] = []
    mask: list[int] = []
    for i, message in enumerate(messages):
        rendered = _render(tokenizer, messages[:i + 1])
        if rendered[:len(ids)] != ids:
            at = next((p for p, (x, y) in enumerate(zip(ids, rendered, strict=False)) if x != y), len(rendered))
            raise TemplateError(
                f"the chat template of {_name(tokenizer)} renders messages 1..{i} differently once message "
                f"{i + 1} ({message['role']}) follows (first difference at token {at}), so the pieces of the "
                "conversation do not concatenate to its full rendering and the assistant tokens cannot be "
                "found by rendering prefixes; use a template that leaves earlier turns unchanged")
        piece = rendered[len(ids):]
        header = 0
        if message["role"] == "assistant" and i > 0:
            prompt = _render(tokenizer, messages[:i], generation_prompt=True)
            if prompt[:len(ids)] == ids and rendered[:len(prompt)] == prompt:
                header = len(prompt) - len(ids)  # else the whole piece is trained, header included
        mask.extend([0] * len(piece) if message["role"] != "assistant" else [0] * header + [1] * (len(piece) - header))
        ids = rendered
    if ids != _render(tokenizer, messages):
        raise TemplateError(f"the chat template of {_name(tokenizer)} is not deterministic: two renderings differ")
    return ids, mask


def _turn_starts(messages: Sequence[Message]) -> list[int]:
    """Indices where a user turn starts after the leading system message: where a left cut may fall, so the
    kept conversation still opens as templates expect (system, then user)."""
    first = 1 if messages and messages[0]["role"] == "system" else 0
    return [i for i in range(first + 1, len(messages)) if messages[i]["role"] == "user"]


def chat_example(tokenizer: Any, messages: Sequence[Message], context: int, spell: Spell | None = None) -> Example:
    """The conversation rendered with the tokenizer's chat template, loss on assistant tokens only, at most
    `context` tokens: an over-long one loses whole turns from the left (the system message stays); if its
    last turn alone is too long, it is cut at `context` tokens, and DoesNotFit is raised when no assistant
    token would remain. With `spell` (a sliced vocabulary), the conversation is spelled in the model's own tokens
    before it is fitted, and what is left is never cut: DoesNotFit instead."""
    if context < 1:
        raise ValueError(f"context must be positive, got {context}")
    if not any(m.get("role") == "assistant" for m in messages):
        raise ValueError("the conversation has no assistant message, so nothing would be trained")
    system = list(messages[:1]) if messages and messages[0]["role"] == "system" else []
    notes: list[str] = []

    def rendered(kept: Sequence[Message]) -> tuple[list[int], list[int], bytes]:
        ids, mask = _pieces(tokenizer, kept)
        if spell is None:
            return ids, mask, b""
        spelled, marks = spell(ids)
        return spelled, spread(mask, marks), marks

    ids, mask, marks = rendered(messages)
    for start in _turn_starts(messages):
        if len(ids) <= context:
            break
        kept = system + list(messages[start:])
        if not any(m["role"] == "assistant" for m in kept):
            break
        ids, mask, marks = rendered(kept)
        notes = [f"dropped the first {start - len(system)} of {len(messages) - len(system)} non-system messages "
                 f"to fit {context} tokens"]
    needed = len(ids)
    if needed > context and spell is not None:
        raise DoesNotFit(needed, context, "the last turn alone is longer than the context once spelled")
    if needed > context:
        notes.append(f"cut the last {len(ids) - context} of {len(ids)} tokens")
        ids, mask = ids[:context], mask[:context]
    if not any(mask):
        raise DoesNotFit(needed, context, "no assistant token fits: the last turn's prompt alone is too long")
    return Example(ids, mask, "chat", 0, tuple(notes), marks)
