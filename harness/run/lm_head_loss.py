"""The per-token log-probabilities behind TRL's SFT loss, where TRL's own kernel cannot run.

TRL 1.15's SFTTrainer always computes its loss through a fused LM head that never materializes the
full [tokens x vocabulary] logits; the work is done by a Triton kernel (`trl.kernels.ChunkedLogProbFunction`).
Triton has no CPU backend, so on a CPU-only torch TRL leaves that kernel as None and training fails.
This module provides the same function in plain torch (same inputs, same outputs, token chunks
recomputed in backward through checkpointing, so the logits of only one chunk live at a time), and
installs it only where TRL's is missing. Results record which one ran.
"""

from __future__ import annotations

from typing import Any

TOKEN_CHUNK = 1024
OPTIONAL = ("entropy", "log_sum_sq_probs", "mean_logits", "is_top1")


def _chunk_stats(hidden, weight, bias, targets, inv_t: float, softcap: float | None, scale: float):
    import torch

    y = hidden.float() @ weight.float().t()
    if bias is not None:
        y = y + bias.float()
    y = y * scale
    z = softcap * torch.tanh(y / softcap) * inv_t if softcap else y * inv_t
    log_p = torch.log_softmax(z, dim=-1)
    target_log_p = log_p.gather(1, targets[:, None]).squeeze(1)
    entropy = -(log_p.exp() * log_p).sum(-1)
    log_sum_sq = torch.logsumexp(2 * log_p, dim=-1)
    mean_logits = z.mean(-1)
    is_top1 = z.argmax(-1) == targets
    return target_log_p, entropy, log_sum_sq, mean_logits, is_top1


class TorchChunkedLogProb:
    """Drop-in for `ChunkedLogProbFunction.apply(...)`."""

    @staticmethod
    def apply(hidden, weight, bias, targets, temperature: float, chunk_size: int,
              final_logit_softcapping: float | None = None, logit_scale: float = 1.0,
              outputs: tuple[str, ...] = OPTIONAL) -> tuple[Any, ...]:
        import torch
        from torch.utils.checkpoint import checkpoint

        pieces = []
        for start in range(0, hidden.shape[0], TOKEN_CHUNK):
            end = min(start + TOKEN_CHUNK, hidden.shape[0])
            pieces.append(checkpoint(_chunk_stats, hidden[start:end], weight, bias, targets[start:end],
                                     1.0 / temperature, final_logit_softcapping, logit_scale, use_reentrant=False))
        if not pieces:
            empty = hidden.new_zeros((0,), dtype=torch.float32)
            pieces = [(empty, empty, empty, empty, empty.bool())]
        joined = [torch.cat(parts) for parts in zip(*pieces, strict=True)]
        log_probs, rest = joined[0], dict(zip(OPTIONAL, joined[1:], strict=True))
        return (log_probs, *(rest[name] if name in outputs else None for name in OPTIONAL))


def ensure_lm_head_loss() -> str:
    """Install the torch port where TRL's Triton kernel is unavailable; say which one runs."""
    from trl.trainer import utils as trl_utils

    kernel = getattr(trl_utils, "_ChunkedLogProbFunction", None)
    if getattr(kernel, "_unsloth_fused_linear", False):
        # importing Unsloth wraps TRL's kernel (unsloth/models/rl.py: patch_trl_fused_lm_head_kernel); the
        # wrapper runs unsloth_zoo's fused linear log-probs and hands TRL's kernel only the calls it cannot serve
        return "unsloth_zoo fused_linear_logprobs (Unsloth's kernel in TRL's slot)"
    if kernel is not None:
        return "trl ChunkedLogProbFunction (Triton)"
    trl_utils._ChunkedLogProbFunction = TorchChunkedLogProb
    return "vramlab TorchChunkedLogProb (torch port; Triton unavailable)"
