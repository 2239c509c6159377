"""lm-eval's Hugging Face model wrapper around the model object a cell trained, with its tokenizer seen
through the cell's sliced vocabulary where it has one, and two methods of its own. Why it is so:
docs/quality.md ("Evaluation numerics and budget").

With a TokenMap, every string is tokenized as the model's tokenizer does, then mapped to the model's rows
(sliced-away tokens spelled with their bytes); generated ids are mapped back before decoding, and the stop
sequences are looked for in the decoded text, not in raw ids, which would belong to the other vocabulary.

Log-likelihoods: the decoder's last hidden states go through the output layer in fp32, a chunk of positions at a
time and only at the continuation's positions, then fp32 log-softmax, summed in float64: no full
[positions, vocabulary] matrix (9 GiB in fp32 for a 16k-token text), no bf16 rounding of any log-probability.
Generation: greedy; prompts that share their preceding text (recall questions about one truncated context) are
prefilled once, and each is answered from that cache, cropped back after it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from harness.stack.token_map import TokenMap

# positions of the continuation scored through the output layer at once: 2,048 x 151,936 x 4 bytes = 1.2 GiB
LOGIT_CHUNK = 2048
# a prompt joins the previous group when they share at least this share of its tokens
SHARED_PREFIX = 0.5


def cell_lm(model: Any, tokenizer: Any, max_length: int, batch_size: int = 1,
            token_map: TokenMap | None = None) -> Any:
    """lm-eval's HFLM with CellLM's methods; lm-eval, which imports torch and transformers, is imported here."""
    return _with_hflm()(model, tokenizer, max_length, batch_size=batch_size, token_map=token_map)


@functools.cache
def _with_hflm() -> type:
    from lm_eval.models.huggingface import HFLM

    return type("CellLM", (CellLM, HFLM), {})


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def prefix_groups(prompts: list[list[int]]) -> list[tuple[int, list[int]]]:
    """Indices of `prompts` grouped by a shared start, each group with the length of the start all its members
    share (at least one token of each member is left after it): sorted by tokens, neighbours that share at least
    SHARED_PREFIX of the group's first prompt join it."""
    order = sorted(range(len(prompts)), key=lambda i: prompts[i])
    groups: list[tuple[int, list[int]]] = []
    for i in order:
        if groups:
            shared, members = groups[-1]
            first = prompts[members[0]]
            joined = min(shared, common_prefix(first, prompts[i]), len(prompts[i]) - 1)
            if joined >= SHARED_PREFIX * len(first):
                groups[-1] = (joined, [*members, i])
                continue
        groups.append((len(prompts[i]) - 1, [i]))
    return groups


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
        """Greedy generation of each request, prompts that share their start prefilled once."""
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
        model = self.model
        with torch.inference_mode():
            for shared, members in prefix_groups(prompts):
                start = torch.tensor([prompts[members[0]][:shared]], dtype=torch.long, device=self.device)
                cache = model(input_ids=start, use_cache=True, logits_to_keep=1).past_key_values
                for i in members:
                    generated = self._greedy(cache, prompts[i][shared:], budgets[i], stops[i])
                    cache.crop(-(cache.get_seq_length() - shared))  # back to the shared start (a negative crop)
                    text = postprocess_generated_text(generation=self.tok_decode(generated), stop=stops[i],
                                                      think_end_token=None)
                    answers[i] = text
                    self.cache_hook.add_partial("generate_until", requests[i].args, text)
        return answers

    def _greedy(self, cache: Any, rest: list[int], budget: int, stops: list[str]) -> list[int]:
        """Greedy tokens after `rest`, fed on top of `cache`, until a stop string, the end token or `budget`."""
        import torch

        feed = torch.tensor([rest], dtype=torch.long, device=self.device)
        generated: list[int] = []
        for _ in range(budget):
            logits = self.model(input_ids=feed, past_key_values=cache, use_cache=True, logits_to_keep=1).logits
            token = int(logits[0, -1].float().argmax())
            if token == self.eot_token_id:
                break
            generated.append(token)
            if any(stop in self.tok_decode(generated) for stop in stops):
                break
            feed = torch.tensor([[token]], dtype=torch.long, device=self.device)
        return generated
