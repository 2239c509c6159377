"""What a cell keeps on the device per token for its backward: the tensors a decoder layer saves, by model path,
the gradients in flight at its peak, and the LM head's, listed one by one with the code that keeps them.

Widths of one token's vectors: h hidden, q = heads x head_dim, kv = kv_heads x head_dim, i intermediate,
r the LoRA rank. Activations are bf16 (2 bytes) unless a line says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.stack.models.facts import ModelFacts

BF16 = 2
FP32 = 4

# TRL's chunked LM head (trl/kernels/chunked_logprob.py): logits are computed on tiles of
# TOKEN_CHUNK_SIZE tokens x _CHUNKED_LOGPROB_CHUNK_SIZE vocabulary columns, in the autocast dtype
TRL_TOKEN_CHUNK = 4096
TRL_VOCAB_CHUNK = 32768
TRL_PER_TOKEN_FP32 = 8  # running max, sums, target logit, log Z, entropy, ...: fp32 values per token


@dataclass(frozen=True)
class Tensor:
    """One activation, per token: `width` is a sum of h, q, kv, i terms; `count` copies of it."""
    what: str
    width: str
    dtype_bytes: int = BF16
    count: int = 1
    per_shard: bool = False  # made for one shard of a tiled MLP at a time, not for the whole sequence
    bucketed: bool = False  # padded along the sequence to Unsloth's cuDNN length bucket

    def sizes(self, widths: dict[str, int], tokens: int, shard: int | None = None) -> list[int]:
        """The bytes of each tensor this line stands for (a term of the width is a tensor of its own)."""
        n = min(tokens, shard) if self.per_shard and shard else tokens
        n = cudnn_bucketed(n) if self.bucketed else n
        return [self.dtype_bytes * widths[term.strip()] * n for term in self.width.split("+")] * self.count

    def bytes_per_token(self, widths: dict[str, int]) -> int:
        return sum(self.sizes(widths, 1))


def token_widths(m: ModelFacts, settings: dict[str, Any]) -> dict[str, int]:
    """The widths a Tensor's terms name: h hidden, q = heads x head_dim, kv = kv_heads x head_dim,
    i intermediate, r the LoRA rank, heads and kv_heads (one value per head)."""
    return {"h": m.hidden_size, "q": m.heads * m.head_dim, "kv": m.kv_heads * m.head_dim,
            "i": m.intermediate_size, "r": settings["lora_rank"], "heads": m.heads, "kv_heads": m.kv_heads}


# --- what a decoder layer keeps for its backward, by model path (the `kernels` level) ----------------------
# The layer input is not listed: where it lives depends on checkpointing (see `estimate`). Qwen3 normalizes
# q and k per head (q_norm, k_norm); their rows are added where the model has them.

# Unsloth: fused LoRA kernels for QKV, O and the MLP save only their inputs (and gate/up, recomputing
# SwiGLU in backward); its RMSNorm saves its input; RoPE is applied in place.
UNSLOTH_QKV = Tensor("q, k after RoPE and v, saved by attention", "q + kv + kv")
UNSLOTH_ATTENTION_OUTPUT = Tensor("attention output, saved by attention and the fused LoRA O kernel", "q")
UNSLOTH_SAVED = (
    Tensor("input RMSNorm output, saved by the fused LoRA QKV kernel", "h"),
    UNSLOTH_QKV,
    UNSLOTH_ATTENTION_OUTPUT,
    Tensor("residual after attention, saved by the post-attention RMSNorm", "h"),
    Tensor("post-attention RMSNorm output, saved by the fused LoRA MLP kernel", "h"),
    Tensor("gate and up projections, saved by the fused LoRA MLP kernel", "i", count=2),
)
# the MLP backward: SwiGLU recomputed, the down projection's input gradient, the two ends' gradients
UNSLOTH_WORKING = (
    Tensor("gradient arriving at the MLP output", "h"),
    Tensor("SwiGLU output, recomputed in backward", "i"),
    Tensor("gradient of the down projection's input", "i"),
    Tensor("gradient of the MLP input", "h"),
)
# Unsloth on cuDNN attention (SDPA's choice on a Hopper GPU; the flash kernel where 'flash_attention_2'
# restricts SDPA to it): unsloth/utils/attention_dispatch.py (_cudnn_length_bucketed_sdpa) pads q, k and v
# along the sequence by 1 to 128 tokens, so that cuDNN builds one plan per bucket rather than per length, and
# slices the padded output. The slice is not contiguous in (tokens, heads x head_dim), so the reshape before
# the O projection copies it: attention keeps its padded output, the fused LoRA O kernel the copy. (The
# harness's probe records the padded shape: 2,176 tokens for a 2,048-token batch in quality-smollm2.)
UNSLOTH_CUDNN_BUCKET = 128
UNSLOTH_CUDNN_SAVED = {
    UNSLOTH_QKV:
        (Tensor("q, k after RoPE and v, padded to Unsloth's cuDNN length bucket, saved by attention",
                "q + kv + kv", bucketed=True),),
    UNSLOTH_ATTENTION_OUTPUT:
        (Tensor("attention output, padded, saved by cuDNN attention", "q", bucketed=True),
         Tensor("attention output sliced off the padding and copied by the reshape, saved by the fused LoRA O "
                "kernel", "q")),
}


def cudnn_bucketed(tokens: int) -> int:
    """Unsloth's padded length: always 1 to 128 tokens more, so a multiple of 128 gains a whole bucket."""
    return tokens + UNSLOTH_CUDNN_BUCKET - tokens % UNSLOTH_CUDNN_BUCKET


# Unsloth's tiled MLP (Arctic's scheme, unsloth_zoo/tiled_mlp.py) runs the fused LoRA MLP under no_grad in
# shards of hidden-size tokens and keeps only the MLP's input, which is the post-attention RMSNorm output
# listed above; its backward recomputes one shard with gradients and accumulates the input's gradient
UNSLOTH_TILED_DROPPED = "gate and up projections, saved by the fused LoRA MLP kernel"
UNSLOTH_TILED_WORKING = (
    Tensor("gradient arriving at the MLP output", "h"),
    Tensor("gradient of the MLP input, accumulated over the shards", "h"),
    Tensor("one shard's gate and up projections, recomputed", "i", count=2, per_shard=True),
    Tensor("one shard's SwiGLU output, recomputed in its backward", "i", per_shard=True),
    Tensor("one shard's gradient of the down projection's input", "i", per_shard=True),
)
# With the MLP tiled, the peak moves to the attention's backward in the first layer the backward reaches (the
# last decoder layer): the LM-head kernel's gradient of the final hidden states is still alive there, and of
# the adapter's gradients only that layer's MLP and O projection ones exist. What is alive then, read allocation
# by allocation from `run-cell --memory-history` of Qwen3-8B at 32,768 and 49,152 tokens (Unsloth 2026.10.9,
# offloaded checkpointing, FlashAttention-2; results/memory-history/), the same list at both lengths:
UNSLOTH_TILED_ATTENTION_PEAK = (
    Tensor("the layer's input brought back from the host: unsloth_zoo's offloaded checkpointing double-buffers "
           "it in two device buffers (it does when more than 512 MiB are free, as on the H200)", "h", count=2),
    Tensor("the embedding output the first layer reads", "h"),
    Tensor("the two RMSNorm outputs and the residual after attention, recomputed", "h", count=3),
    Tensor("q from the fused LoRA QKV kernel, and q after the fused QK-norm and RoPE", "q", count=2),
    Tensor("k and v from the fused LoRA QKV kernel, and k after the QK-norm and RoPE", "kv", count=3),
    Tensor("attention output", "q"),
    Tensor("fp32 rows per head: attention's log-sum-exp and its backward's softmax_d for each query head, the "
           "QK-norm's 1/rms for each query and key head", "heads + heads + heads + kv_heads", FP32),
    Tensor("gradient of the final hidden states, made by unsloth_zoo's fused LM-head kernel, until this "
           "layer's backward", "h"),
    Tensor("FlashAttention's backward: dq accumulated in fp32", "q", FP32),
    Tensor("FlashAttention's backward: dq", "q"),
    Tensor("FlashAttention's backward: dk and dv", "kv", count=2),
    Tensor("the offloaded checkpoint's backward: gradients of the residual stream and the attention", "h", count=3),
    Tensor("gradient of the QKV input from the fused LoRA kernel", "h"),
)
# (The list once came from a probe at 81,920 tokens, which ran out of memory before its peak and so missed
# a quarter of these. Not listed, as they do not grow with the context: Unsloth's 32 MiB LoRA matmul buffer
# and 20 MiB of RoPE tables.)
# Liger on the Hugging Face path: RMSNorm saves its input (and fp32 1/rms per row), SiLU-mul saves gate
# and up and writes their gradients into them in place. What peft's LoRA keeps is in LORA_INPUTS.
LIGER_SAVED = (
    Tensor("q, k after RoPE and v, saved by attention", "q + kv + kv"),
    Tensor("attention output, saved by attention", "q"),
    Tensor("residual after attention, saved by the post-attention RMSNorm", "h"),
    Tensor("gate and up projections, saved by Liger's SiLU-mul", "i", count=2),
)
# the peak is down_proj's backward: its input gradient comes once through the frozen weight and once
# through LoRA A, and both exist until autograd adds the second into the first
LIGER_WORKING = (
    Tensor("gradient arriving at the MLP output", "h"),
    Tensor("gradient of the down projection's input, through the frozen weight and through LoRA A", "i",
           count=2),
)
# Plain Hugging Face modules: RMSNorm upcasts its input to fp32 and that copy is what pow and mul save;
# SiLU saves gate, the product saves SiLU(gate) and up.
NONE_SAVED = (
    Tensor("input RMSNorm: its input upcast to fp32, saved by pow and mul", "h", FP32),
    Tensor("q, k after RoPE and v, saved by attention", "q + kv + kv"),
    Tensor("attention output, saved by attention", "q"),
    Tensor("post-attention RMSNorm: its input upcast to fp32", "h", FP32),
    Tensor("gate, saved by SiLU", "i"),
    Tensor("SiLU(gate) and up, saved by their product", "i", count=2),
)
# the peak is the product's backward: down_proj's saved input is freed by then (LAYER_FREED_AT_PEAK), and
# three i-wide gradients exist at once (the product's, and SiLU(gate)'s and up's it makes)
NONE_WORKING = (
    Tensor("gradient arriving at the MLP output", "h"),
    Tensor("gradients of the SwiGLU output, SiLU(gate) and up", "i", count=3),
)
QK_NORM_SAVED = {
    "unsloth": Tensor("q and k before their per-head RMSNorm, saved by it", "q + kv"),
    "liger": Tensor("q and k before their per-head RMSNorm, saved by it", "q + kv"),
    "none": Tensor("q and k upcast to fp32 by their per-head RMSNorm", "q + kv", FP32),
}
LAYER_SAVED = {"unsloth": UNSLOTH_SAVED, "liger": LIGER_SAVED, "none": NONE_SAVED}
LAYER_WORKING = {"unsloth": UNSLOTH_WORKING, "liger": LIGER_WORKING, "none": NONE_WORKING}
QK_NORM_FAMILIES = ("qwen3",)

# peft's LoRA on the Hugging Face path (Liger and plain modules): LoRA A keeps the input it multiplies.
# On a bitsandbytes 4-bit layer under bf16 autocast peft passes the layer's input on as it is (its bnb
# layer casts only without autocast), so layers reading one input share it, and the attention output is
# the tensor attention saves anyway. On a plain bf16 nn.Linear peft casts the input to the adapter's fp32
# and autocast casts it back to bf16: every adapted layer keeps its own copy, and the frozen base matmul
# none. (The committed data agree: quality-smollm2's bf16 cells hold 4 hidden-widths per layer and token
# more than its NF4 cell, which is the copies' count less the tensors they replace.)
# (what, the layers reading it, width, whether attention keeps it already)
LORA_INPUTS = (
    ("input RMSNorm output", ("q_proj", "k_proj", "v_proj"), "h", False),
    ("attention output", ("o_proj",), "q", True),
    ("post-attention RMSNorm output", ("gate_proj", "up_proj"), "h", False),
    ("SwiGLU output", ("down_proj",), "i", False),
)
# on the plain path, the peak (the SwiGLU product's backward) comes after down_proj's backward
LAYER_FREED_AT_PEAK = {"none": ("down_proj",)}

LAYER_INPUT = Tensor("a decoder layer's input", "h")

# TRL's chunked LM head: its backward holds the final hidden states, the masked copy it was given, and
# the gradient of that copy accumulated in fp32 and cast back
LM_HEAD_TENSORS = (
    Tensor("last decoder output, saved by the final RMSNorm", "h"),
    Tensor("final hidden states gathered by the label mask, saved by the chunked log-prob", "h"),
    Tensor("their gradient, accumulated in fp32", "h", FP32),
    Tensor("the same gradient cast back to bf16", "h"),
)


def lora_inputs(settings: dict[str, Any], layers: tuple[str, ...] | None = None) -> tuple[Tensor, ...]:
    """What peft's LoRA A matmuls keep on the Hugging Face path, for the adapted layers (among `layers`)."""
    targets = set(settings["lora_targets"]) & set(layers or settings["lora_targets"])
    shared = settings["quantization"] == "nf4"
    kept = []
    for what, readers, width, attention_keeps_it in LORA_INPUTS:
        adapted = [name for name in readers if name in targets]
        if not adapted:
            continue
        if shared and not attention_keeps_it:
            kept.append(Tensor(f"{what}, saved by the LoRA A of {', '.join(adapted)}", width))
        elif not shared:
            kept.append(Tensor(f"{what}: a bf16 copy for the LoRA A of each of {', '.join(adapted)}", width,
                               count=len(adapted)))
        kept.append(Tensor(f"LoRA A's output (rank wide) of each of {', '.join(adapted)}, saved by LoRA B", "r",
                           count=len(adapted)))
    return tuple(kept)


def tiled(settings: dict[str, Any]) -> bool:
    return settings.get("tiled_mlp", "off") != "off"


def layer_saved(m: ModelFacts, settings: dict[str, Any], attention: str) -> tuple[Tensor, ...]:
    """`attention`: the kernel SDPA runs (harness/estimate/outside.py: attention_kernel)."""
    kernels = settings["kernels"]
    saved = LAYER_SAVED[kernels] + (() if kernels == "unsloth" else lora_inputs(settings))
    if kernels == "unsloth" and attention == "cudnn":
        saved = tuple(n for t in saved for n in UNSLOTH_CUDNN_SAVED.get(t, (t,)))
    if tiled(settings):
        saved = tuple(t for t in saved if t.what != UNSLOTH_TILED_DROPPED)
    return (*saved, QK_NORM_SAVED[kernels]) if m.model_type in QK_NORM_FAMILIES else saved


def one_layer(m: ModelFacts, settings: dict[str, Any], tokens: int, attention: str) -> list[int]:
    """The bytes of each tensor one decoder layer keeps for its backward, its input included."""
    w = token_widths(m, settings)
    return [*LAYER_INPUT.sizes(w, tokens), *(n for t in layer_saved(m, settings, attention)
                                             for n in t.sizes(w, tokens))]


def layer_freed_at_peak(settings: dict[str, Any]) -> tuple[Tensor, ...]:
    layers = LAYER_FREED_AT_PEAK.get(settings["kernels"])
    return lora_inputs(settings, layers) if layers else ()


def per_token(tensors: tuple[Tensor, ...], widths: dict[str, int]) -> int:
    return sum(t.bytes_per_token(widths) for t in tensors)


def eager_scores(m: ModelFacts, settings: dict[str, Any]) -> int:
    """Eager attention materializes heads x T x T scores per sequence and layer; SDPA's fused kernels none.
    Saved: the softmax in fp32 (by its backward) and its bf16 cast (by the product with v); in backward,
    the bf16 gradient and its fp32 upcast."""
    return settings["batch_size"] * m.heads * settings["context"] ** 2 if settings["attention"] == "eager" else 0


@dataclass(frozen=True)
class Moment:
    """What the allocator holds for activations at one moment of the backward pass."""
    name: str
    activations: int
    activations_detail: str
    working: int
    working_detail: str
    adapter_gradients: float  # the share of the adapter's gradients that exists: 0, one layer's, or 1
    sizes: list[int] = field(default_factory=list)  # every tensor held, for the allocator's packing

    @property
    def total(self) -> int:
        return self.activations + self.working


def layer_moment(m: ModelFacts, settings: dict[str, Any], tokens: int, attention: str) -> Moment:
    """The backward through a decoder layer. Without checkpointing every layer keeps its input and its
    activations until its own backward; with it, one layer is recomputed at a time and its output exists
    while backward runs through it, its input brought back from the host (offload) or kept with every
    other layer's on the device (on). All adapter gradients exist by the last layer processed, the first."""
    w = token_widths(m, settings)
    if tiled(settings) and settings["checkpointing"] == "offload":
        return tiled_attention_moment(m, settings, tokens, w)
    layer = one_layer(m, settings, tokens, attention)
    scores = eager_scores(m, settings) * (FP32 + BF16)
    mode = settings["checkpointing"]
    if mode == "off":
        held, scores_held = layer * m.layers, scores * m.layers
        detail = f"{m.layers} layers' inputs and activations (no checkpointing)"
    else:
        inputs = m.layers if mode == "on" else 1
        held, scores_held = LAYER_INPUT.sizes(w, tokens) * inputs + layer, scores
        where = "on the device" if mode == "on" else "brought back from host memory (the others wait there)"
        detail = f"{inputs} layer input(s) {where}, one layer recomputed with its output"
    working_tensors = UNSLOTH_TILED_WORKING if tiled(settings) else LAYER_WORKING[settings["kernels"]]
    working_sizes = [n for t in working_tensors for n in t.sizes(w, tokens, shard=m.hidden_size)]
    working = max(sum(working_sizes), scores)
    working_detail = "gradients in flight in the MLP's backward"
    if settings["quantization"] == "nf4":
        # bitsandbytes and Unsloth dequantize a whole weight to bf16 for each matmul, one at a time
        working += BF16 * max(a * b for a, b in m.linear_shapes().values())
        working_detail += ", the dequantized weight"
    activations = sum(held) - per_token(layer_freed_at_peak(settings), w) * tokens + scores_held
    return Moment("backward through a decoder layer", activations, detail, working, working_detail, 1.0,
                  held + working_sizes)


def tiled_attention_moment(m: ModelFacts, settings: dict[str, Any], tokens: int, w: dict[str, int]) -> Moment:
    held = [n for t in UNSLOTH_TILED_ATTENTION_PEAK for n in t.sizes(w, tokens)]
    working = BF16 * max(a * b for a, b in m.linear_shapes().values()) if settings["quantization"] == "nf4" else 0
    return Moment("backward through a decoder layer's attention (the MLP tiled)", sum(held),
                  "the recomputed layer's attention tensors, the gradients of the offloaded checkpoint's backward",
                  working, "the dequantized weight", 1 / m.layers, held)


def head_moment(m: ModelFacts, settings: dict[str, Any], tokens: int, vocab: int, attention: str) -> Moment:
    """The backward through the LM head and the loss, which comes before any layer's: the layers' inputs (on)
    or all their activations (off) still held. The fused paths make their gradients during the forward, with
    the same tensors held. The adapter's gradients exist already from the second micro-batch of a step on:
    the Trainer adds each micro-batch's into them and frees them only after the optimizer step."""
    w = token_widths(m, settings)
    mode = settings["checkpointing"]
    if mode == "off":
        layer = one_layer(m, settings, tokens, attention)
        held, scores = layer * m.layers, m.layers * eager_scores(m, settings) * (FP32 + BF16)
        detail = f"{m.layers} layers' inputs and activations (no checkpointing)"
    else:
        held, scores = (LAYER_INPUT.sizes(w, tokens) * m.layers if mode == "on" else []), 0
        detail = f"{m.layers} layer inputs kept on the device" if mode == "on" else "none on the device"
    path = settings["loss_path"]
    working = LOSS_PATH_WORKING[path]
    if path == "trl-chunked" and settings["kernels"] == "unsloth":
        working = unsloth_logprob_working  # TRL's LM head, Unsloth's kernel in it
    head, head_detail = working(m, tokens, vocab, w)
    return Moment(f"backward through the LM head and loss ({path})", sum(held) + scores, detail, sum(head),
                  head_detail, float(settings["grad_accum"] > 1), held + head)


def trl_chunked_working(m: ModelFacts, tokens: int, vocab: int, w: dict[str, int]) -> tuple[list[int], str]:
    tile = min(tokens, TRL_TOKEN_CHUNK) * TRL_VOCAB_CHUNK * BF16
    head = [n for t in LM_HEAD_TENSORS for n in t.sizes(w, tokens)] + [FP32 * TRL_PER_TOKEN_FP32 * tokens, tile]
    return head, (f"final hidden states, their fp32 gradient, a {min(tokens, TRL_TOKEN_CHUNK):,} x "
                  f"{TRL_VOCAB_CHUNK:,} logits tile")


def full_logits_working(m: ModelFacts, tokens: int, vocab: int, w: dict[str, int]) -> tuple[list[int], str]:
    # transformers' ForCausalLMLoss upcasts the bf16 logits to fp32 and cross_entropy's log_softmax saves its
    # fp32 output; the backward makes the fp32 gradient of it and casts it to bf16 for the LM head's matmul
    logits = tokens * vocab
    head = [BF16 * w["h"] * tokens, BF16 * logits, FP32 * logits, FP32 * logits]
    return head, f"the whole {tokens:,} x {vocab:,} logits: bf16, their fp32 upcast and its gradient"


def liger_flce_working(m: ModelFacts, tokens: int, vocab: int, w: dict[str, int]) -> tuple[list[int], str]:
    # liger_kernel/ops/fused_linear_cross_entropy.py: chunks of next_power_of_2(T / ceil(V / H)) tokens; the
    # gradient of the input (bf16, all tokens) and an fp32 loss per token are made in the forward; each chunk's
    # logits are bf16 and overwritten in place by their gradient
    chunk = min(tokens, next_power_of_2(-(-tokens // -(-vocab // w["h"]))))
    head = [BF16 * w["h"] * tokens, BF16 * w["h"] * tokens, FP32 * tokens, BF16 * chunk * vocab]
    return head, f"the input's bf16 gradient, a {chunk:,} x {vocab:,} bf16 logits chunk"


UNSLOTH_MIN_LOGITS = 512 * 151936  # unsloth_zoo/fused_losses/fused_linear.py: _MIN_LOGITS, _MAX_ROWS, _CHUNK_GB
UNSLOTH_MAX_ROWS = 4096
UNSLOTH_CHUNK_BYTES = 2 * 2**30


def unsloth_chunk_rows(tokens: int, hidden: int, vocab: int) -> int:
    """unsloth_zoo's fused linear kernels' chunk (fused_linear_rows): the largest power of two at or below
    T x H / V tokens, at least about _MIN_LOGITS / V and at most 4,096, and within 2 GiB of fp32 logits."""
    rows = _power_of_2_at_most(tokens * hidden / vocab)
    floor = _power_of_2_at_most(UNSLOTH_MIN_LOGITS / vocab)
    rows = min(max(rows, min(max(floor, 512), UNSLOTH_MAX_ROWS)), UNSLOTH_MAX_ROWS)
    return max(min(rows, UNSLOTH_CHUNK_BYTES // (vocab * FP32), tokens), 1)


def unsloth_fused_ce_working(m: ModelFacts, tokens: int, vocab: int, w: dict[str, int]) -> tuple[list[int], str]:
    # unsloth_zoo's fused linear cross-entropy: fp32 logits of a chunk and their gradient, the input's gradient
    # accumulated in fp32 and cast back
    rows = unsloth_chunk_rows(tokens, w["h"], vocab)
    head = [BF16 * w["h"] * tokens, FP32 * w["h"] * tokens, BF16 * w["h"] * tokens, FP32 * tokens,
            FP32 * rows * vocab, FP32 * rows * vocab]
    return head, f"the input's fp32 gradient, a {rows:,} x {vocab:,} fp32 logits chunk and its gradient"


def unsloth_logprob_working(m: ModelFacts, tokens: int, vocab: int, w: dict[str, int]) -> tuple[list[int], str]:
    # On the Unsloth path TRL's LM head does not run TRL's kernel: importing Unsloth puts unsloth_zoo's fused
    # linear log-probs in its slot (unsloth/models/rl.py: patch_trl_fused_lm_head_kernel). One fp32 logits
    # buffer of a chunk, padded to a multiple of 8 columns, serves every chunk and takes each chunk's gradient
    # in place; the hidden states' gradient is made during the forward, in their dtype (fused_linear.py:
    # _Buffers, want_u). Its peak is that forward: the final RMSNorm's input and output, TRL's masked copy of
    # the output and its gradient, the logits buffer, the per-token statistics.
    rows = unsloth_chunk_rows(tokens, w["h"], vocab)
    columns = -(-vocab // 8) * 8
    head = [BF16 * w["h"] * tokens] * 4 + [FP32 * rows * columns, FP32 * TRL_PER_TOKEN_FP32 * tokens]
    return head, (f"the hidden states, their gradient made in the forward, a {rows:,} x {vocab:,} fp32 logits "
                  "chunk (unsloth_zoo's kernel in TRL's slot)")


def next_power_of_2(x: int) -> int:
    """The smallest power of two at or above x (Triton's next_power_of_2; PyTorch's pinned allocator's size)."""
    return 1 << max(int(x) - 1, 0).bit_length()


def _power_of_2_at_most(x: float) -> int:
    return 1 << max(int(x), 1).bit_length() - 1


LOSS_PATH_WORKING = {"trl-chunked": trl_chunked_working, "full-logits": full_logits_working,
                     "liger-flce": liger_flce_working, "unsloth-fused-ce": unsloth_fused_ce_working}
