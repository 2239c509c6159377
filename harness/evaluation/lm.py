"""lm-eval's Hugging Face model wrapper around the model object a cell trained, with its tokenizer seen
through the cell's sliced vocabulary where it has one, and two methods of its own. Why it is so:
docs/quality.md (`harness/evaluation/lm.py`).

With a TokenMap, every string is tokenized as the model's tokenizer does, then mapped to the model's rows
(sliced-away tokens spelled with their bytes); generated ids are mapped back before decoding, and the stop
sequences are looked for in the decoded text, not in raw ids, which would belong to the other vocabulary.

Log-likelihoods: the decoder's last hidden states go through the output layer in fp32, a chunk of positions at a
time and only at the continuation's positions, then fp32 log-softmax, summed in float64: no full
[positions, vocabulary] matrix (9 GiB in fp32 for a 16k-token text), no bf16 rounding of any log-probability.
Generation: greedy, prompts of like length batched (left-padded) so that one decoding step serves many: five
evaluations sharing a GPU, each decoding one prompt at a time, did not finish 360 recall prompts of 20k tokens in
seven minutes. A batch is bounded in tokens and in its attention mask, which is quadratic in its width; a batch
that still runs out of memory is split in halves (a warning in the log), so that only a single prompt that does
not fit is an out-of-memory result.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from harness.stack.token_map import TokenMap

log = logging.getLogger("vramlab")

# positions of the continuation scored through the output layer at once: 2,048 x 151,936 x 4 bytes = 1.2 GiB
LOGIT_CHUNK = 2048
# tokens (prompt and answer, padding included) generated in one batch: a 20k-token recall prompt goes six at a
# time; a batch's KV cache and prefill activations stay far inside a 16 GiB budget for 0.5B-1.5B models
GENERATE_TOKENS = 131_072
# a padded batch's attention mask is rows x width x width booleans: six 20k-token prompts need 2.35 GiB for it
# alone, which ran the shared-context recall out of a 16 GiB budget on 4 December (docs/quality-study.md)
GENERATE_MASK_BYTES = 1 << 30


def cell_lm(model: Any, tokenizer: Any, max_length: int, batch_size: int = 1,
            token_map: TokenMap | None = None) -> Any:
    """lm-eval's HFLM with CellLM's methods; lm-eval, which imports torch and transformers, is imported here."""
    return _with_hflm()(model, tokenizer, max_length, batch_size=batch_size, token_map=token_map)


@functools.cache
def _with_hflm() -> type:
    from lm_eval.models.huggingface import HFLM

    return type("CellLM", (CellLM, HFLM), {})


def generation_batches(lengths: list[int], token_budget: int,
                       mask_budget: int = GENERATE_MASK_BYTES) -> list[list[int]]:
    """Indices grouped into batches of like length, longest first, each at most `token_budget` tokens and its
    attention mask at most `mask_budget` bytes once its rows are padded to its longest (a row over either budget
    goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches:
            rows, width = len(batches[-1]) + 1, lengths[batches[-1][0]]
            if rows * width <= token_budget and rows * width * width <= mask_budget:
                batches[-1].append(i)
                continue
        batches.append([i])
    return batches


def in_halves(batch: list[int], generate: Callable[[list[int]], list[list[int]]]) -> list[list[int]]:
    """`generate(batch)`, or, where the device runs out of memory on a batch of several rows, the same on each
    half in turn; one row that does not fit raises the out-of-memory error as it came."""
    import torch

    try:
        return generate(batch)
    except torch.OutOfMemoryError:
        if len(batch) == 1:
            raise
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    half = len(batch) // 2
    log.warning("a generation batch of %d prompts ran out of memory: split in two of %d and %d", len(batch), half,
                len(batch) - half)
    return in_halves(batch[:half], generate) + in_halves(batch[half:], generate)


class CellLM:
    """The methods; mixed with lm-eval's HFLM by `cell_lm`, so that super() below is HFLM."""

    # HFLM's, which these methods read
    model: Any
    device: Any
    max_length: int
    max_gen_toks: int
    cache_hook: Any

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

    def tok_decode(self, tokens: Any, skip_special_tokens: bool = True) -> str:
        if self.token_map is not None:  # lm-eval also decodes a single id (the end-of-text token)
            tokens = self.token_map.decode_ids([tokens] if isinstance(tokens, int) else list(tokens))
        return super().tok_decode(tokens, skip_special_tokens=skip_special_tokens)

    # --- the model's parts ---------------------------------------------------------------------------------

    def _causal_lm(self) -> Any:
        model = self.model
        return model.get_base_model() if hasattr(model, "get_base_model") else model

    @functools.cached_property
    def _head_fp32(self) -> tuple[Any, Any, float | None]:
        """The output layer's weight (and bias) in fp32, and the final logit soft-cap where the model has one."""
        head = self._causal_lm().get_output_embeddings()
        weight = head.weight.detach().float()
        bias = head.bias.detach().float() if getattr(head, "bias", None) is not None else None
        return weight, bias, getattr(self._causal_lm().config, "final_logit_softcapping", None)

    def _hidden(self, ids: Any) -> Any:
        """The decoder's final (normed) hidden states of one sequence, [positions, hidden]."""
        decoder = self._causal_lm().get_decoder()
        return decoder(input_ids=ids.unsqueeze(0), use_cache=False).last_hidden_state[0]

    def _continuation_logprobs(self, hidden: Any, targets: Any) -> tuple[float, bool]:
        """Sum of fp32 log p(target) over the rows of `hidden` (row i predicts targets[i]), and whether each
        target is the greedy choice."""
        import torch
        import torch.nn.functional as F

        weight, bias, softcap = self._head_fp32
        total = torch.zeros((), dtype=torch.float64, device=hidden.device)
        greedy = True
        for start in range(0, targets.shape[0], LOGIT_CHUNK):
            rows = hidden[start:start + LOGIT_CHUNK].float()
            logits = F.linear(rows, weight, bias)
            if softcap:
                logits = torch.tanh(logits / softcap) * softcap
            logprobs = torch.log_softmax(logits, dim=-1)
            wanted = targets[start:start + LOGIT_CHUNK]
            total += logprobs.gather(1, wanted.unsqueeze(1)).sum(dtype=torch.float64)
            greedy = greedy and bool((logprobs.argmax(dim=-1) == wanted).all())
            del logits, logprobs
        return float(total), greedy

    # --- lm-eval's entry points ----------------------------------------------------------------------------

    def _loglikelihood_tokens(self, requests: list[tuple[Any, list[int], list[int]]], disable_tqdm: bool = False,
                              override_bs: int | None = None) -> list[tuple[float, bool]]:
        """(log-likelihood, is greedy) of each continuation, one request at a time; the input is cut from the
        left to the model's length as lm-eval cuts it."""
        import torch

        results = []
        with torch.inference_mode():
            for request, context, continuation in requests:
                if not context or not continuation:
                    raise ValueError("a log-likelihood request needs a context and a continuation")
                whole = (context + continuation)[-(self.max_length + 1):]
                ids = torch.tensor(whole[:-1], dtype=torch.long, device=self.device)
                targets = torch.tensor(continuation, dtype=torch.long, device=self.device)
                hidden = self._hidden(ids)[-len(continuation):]
                answer = self._continuation_logprobs(hidden, targets)
                results.append(answer)
                if request is not None:
                    self.cache_hook.add_partial("loglikelihood", request, answer)
                del hidden
        return results

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Greedy generation, prompts of like length in batches of at most GENERATE_TOKENS tokens and a mask of at
        most GENERATE_MASK_BYTES (left-padded), each row stopping at its own stop string: one decoding step serves a
        whole batch."""
        import torch
        from lm_eval.models.utils import handle_stop_sequences, normalize_gen_kwargs, postprocess_generated_text

        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        prompts, stops, budgets = [], [], []
        for request in requests:
            context, gen_kwargs = request.args
            kwargs = normalize_gen_kwargs(dict(gen_kwargs), self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
            max_gen = kwargs.pop("max_gen_toks")
            if kwargs.get("do_sample") or kwargs.get("temperature", 0.0) not in (0, 0.0, None):
                raise ValueError("the evaluate stage generates greedily only (do_sample: false, temperature 0)")
            prompts.append(self.tok_encode(context)[-(self.max_length - max_gen):])
            stops.append(until)
            budgets.append(max_gen)
        answers: list[str] = [""] * len(requests)
        started = time.perf_counter()
        batches = generation_batches([len(p) + b for p, b in zip(prompts, budgets, strict=True)], GENERATE_TOKENS)
        with torch.inference_mode():
            for done, batch in enumerate(batches, 1):
                generated = in_halves(batch, lambda rows: self._greedy_batch(
                    [prompts[i] for i in rows], [stops[i] for i in rows], max(budgets[i] for i in rows)))
                for i, tokens in zip(batch, generated, strict=True):
                    text = postprocess_generated_text(generation=self.tok_decode(tokens[:budgets[i]]), stop=stops[i],
                                                      think_end_token=None)
                    answers[i] = text
                    self.cache_hook.add_partial("generate_until", requests[i].args, text)
                if done % 10 == 0 or done == len(batches):
                    log.info("generated %d of %d batches (%d prompts) in %.0f s", done, len(batches), len(prompts),
                             time.perf_counter() - started)
        return answers

    def _greedy_batch(self, prompts: list[list[int]], stops: list[list[str]], budget: int) -> list[list[int]]:
        """Greedy tokens after each prompt (left-padded into one batch), each row until its own stop string, the
        end token or `budget` tokens."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        width = max(map(len, prompts))
        pad = self.eot_token_id
        ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            ids[row, width - len(prompt):], mask[row, width - len(prompt):] = torch.tensor(prompt), 1
        lm = self

        class StopInText(StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                return torch.tensor([any(stop in lm.tok_decode(row[width:].tolist()) for stop in stops[r])
                                     for r, row in enumerate(input_ids)], device=input_ids.device)

        out = self.model.generate(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                  max_new_tokens=budget, do_sample=False, stopping_criteria=StoppingCriteriaList(
                                      [StopInText()]), pad_token_id=pad, eos_token_id=pad, use_cache=True)
        rows = []
        for row in out[:, width:].tolist():
            rows.append(row[:row.index(pad)] if pad in row else row)
        return rows
