"""lm-eval's Hugging Face model wrapper around the model object a cell trained, with its tokenizer seen
through the cell's sliced vocabulary where it has one.

With a TokenMap, every string is tokenized as the model's tokenizer does, then mapped to the model's rows
(sliced-away tokens spelled with their bytes); generated ids are mapped back before decoding, and the stop
sequences are looked for in the decoded text, not in raw ids, which would belong to the other vocabulary.
"""

from __future__ import annotations

import functools
from typing import Any

from harness.stack.token_map import TokenMap


def cell_lm(model: Any, tokenizer: Any, max_length: int, batch_size: int = 1,
            token_map: TokenMap | None = None) -> Any:
    """lm-eval's HFLM with CellLM's methods; lm-eval, which imports torch and transformers, is imported here."""
    return _with_hflm()(model, tokenizer, max_length, batch_size=batch_size, token_map=token_map)


@functools.cache
def _with_hflm() -> type:
    from lm_eval.models.huggingface import HFLM

    return type("CellLM", (CellLM, HFLM), {})


class CellLM:
    """The methods; mixed with lm-eval's HFLM by `cell_lm`, so that super() below is HFLM."""

    def __init__(self, model: Any, tokenizer: Any, max_length: int, batch_size: int = 1,
                 token_map: TokenMap | None = None) -> None:
        self.token_map = token_map
        super().__init__(pretrained=model, tokenizer=tokenizer, max_length=max_length, batch_size=batch_size)

    def _mapped(self, ids: list[int]) -> list[int]:
        return self.token_map.encode(ids)[0] if self.token_map else ids

    @property
    def eot_token_id(self) -> int:
        return self._mapped([super().eot_token_id])[0]

    @property
    def prefix_token_id(self) -> int:
        return self._mapped([super().prefix_token_id])[0]

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, left_truncate_len: int | None = None,
                   **kwargs: Any) -> list[int]:
        ids = self._mapped(super().tok_encode(string, add_special_tokens=add_special_tokens))
        return ids[-left_truncate_len:] if left_truncate_len else ids

    def tok_batch_encode(self, strings: list[str], padding_side: str = "left", left_truncate_len: int | None = None,
                         truncation: bool = False) -> tuple[Any, Any]:
        if self.token_map is None:
            return super().tok_batch_encode(strings, padding_side, left_truncate_len, truncation)
        import torch

        encoded = [self.tok_encode(s) for s in strings]
        if left_truncate_len:
            encoded = [ids[-left_truncate_len:] for ids in encoded]
        width = max(map(len, encoded))
        pad = self.eot_token_id
        ids = torch.full((len(encoded), width), pad, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, sequence in enumerate(encoded):
            if padding_side == "left":
                ids[row, width - len(sequence):], mask[row, width - len(sequence):] = torch.tensor(sequence), 1
            else:
                ids[row, :len(sequence)], mask[row, :len(sequence)] = torch.tensor(sequence), 1
        return ids, mask

    def tok_decode(self, tokens: Any, skip_special_tokens: bool = True) -> str:
        if self.token_map is not None:  # lm-eval also decodes a single id (the end-of-text token)
            tokens = self.token_map.decode_ids([tokens] if isinstance(tokens, int) else list(tokens))
        return super().tok_decode(tokens, skip_special_tokens=skip_special_tokens)

    def _model_generate(self, context: Any, max_length: int, stop: list[str], **generation_kwargs: Any) -> Any:
        if self.token_map is None:
            return super()._model_generate(context, max_length, stop, **generation_kwargs)
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        start = context.shape[1]
        lm = self

        class StopInText(StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                texts = [lm.tok_decode(row[start:].tolist()) for row in input_ids]
                return torch.tensor([any(s in t for s in stop) for t in texts], device=input_ids.device)

        generation_kwargs.pop("temperature", None)
        generation_kwargs.setdefault("do_sample", False)
        return self.model.generate(input_ids=context, max_length=max_length,
                                   stopping_criteria=StoppingCriteriaList([StopInText()]),
                                   pad_token_id=self.eot_token_id, eos_token_id=self.eot_token_id, use_cache=True,
                                   **generation_kwargs)
