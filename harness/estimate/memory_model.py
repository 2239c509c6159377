"""Predicted whole-process device memory of a cell, by component, from its settings and its model's shapes.

No GPU and no weights: shapes come from harness/model_info.py. The peak a cell is judged on is the
whole process's device memory (harness/budget.py), and it is made up as

    device peak = outside the allocator   CUDA context and libraries' kernels (harness/estimate/outside.py)
                + fragmentation           reserved by the caching allocator but not allocated at the peak
                + allocated at the peak   = what lives through training (weights, adapter, optimizer state,
                                            cuBLAS workspaces) + the tensors of the peak moment

The peak moment is the larger of two: the backward pass through one decoder layer (its activations,
recomputed where checkpointing is on, and its gradients in flight), or the backward pass through the LM
head and loss. Activations are listed tensor by tensor for each model path, per token, as the code of
that path keeps them for backward; a tensor is named once even where two operations save it.

Widths of one token's vectors: h hidden, q = heads x head_dim, kv = kv_heads x head_dim, i intermediate.
Activations are bf16 (2 bytes) unless a line says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.budget import budget_card
from harness.estimate.outside import UNSLOTH_PINNED_AT_LOAD_MIB, outside_bytes
from harness.model_info import ModelFacts

GIB = 2**30
MIB = 2**20
BF16 = 2
FP32 = 4

# bitsandbytes NF4 (Linear4bit's defaults): 4 bits per weight, one absmax per block of 64 weights; with
# double quantization that absmax is stored as 1 byte, with one fp32 absmax per 256 of those blocks.
NF4_BLOCK = 64
NF4_SECOND_BLOCK = 256
# bitsandbytes 8-bit Adam: two 1-byte states per parameter, one fp32 absmax per block of 256 of each
ADAM8_BLOCK = 256
# torch's default cuBLAS workspace per handle (CUBLAS_WORKSPACE_CONFIG unset): ":4096:8" = 32 MiB on
# Hopper and newer, ":4096:2:16:8" = 8.125 MiB before. It is taken from the caching allocator, one per
# handle; training uses two handles, the main thread's and the autograd engine's.
CUBLAS_WORKSPACE = {True: 32 * MIB, False: 4096 * 1024 * 2 + 16 * 1024 * 8}
CUBLAS_HANDLES = 2
# TRL's chunked LM head (trl/kernels/chunked_logprob.py): logits are computed on tiles of
# TOKEN_CHUNK_SIZE tokens x _CHUNKED_LOGPROB_CHUNK_SIZE vocabulary columns, in the autocast dtype
TRL_TOKEN_CHUNK = 4096
TRL_VOCAB_CHUNK = 32768
TRL_PER_TOKEN_FP32 = 8  # running max, sums, target logit, log Z, entropy, ...: fp32 values per token


# PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): a request up to 1 MiB comes from
# 2 MiB segments of the small pool; one under 10 MiB is cut from a 20 MiB segment of the large pool; a
# larger one gets a segment of its own, rounded up to 2 MiB.
SMALL_REQUEST = 1 * MIB
LARGE_SEGMENT = 20 * MIB
OWN_SEGMENT = 10 * MIB
ROUND_LARGE = 2 * MIB


@dataclass(frozen=True)
class Tensor:
    """One activation, per token: `width` is a sum of h, q, kv, i terms; `count` copies of it."""
    what: str
    width: str
    dtype_bytes: int = BF16
    count: int = 1

    def sizes(self, widths: dict[str, int], tokens: int) -> list[int]:
        """The bytes of each tensor this line stands for (a term of the width is a tensor of its own)."""
        return [self.dtype_bytes * widths[term.strip()] * tokens for term in self.width.split("+")] * self.count

    def bytes_per_token(self, widths: dict[str, int]) -> int:
        return sum(self.sizes(widths, 1))


def token_widths(m: ModelFacts, settings: dict[str, Any]) -> dict[str, int]:
    """The widths a Tensor's terms name: h hidden, q = heads x head_dim, kv = kv_heads x head_dim,
    i intermediate, r the LoRA rank."""
    return {"h": m.hidden_size, "q": m.heads * m.head_dim, "kv": m.kv_heads * m.head_dim,
            "i": m.intermediate_size, "r": settings["lora_rank"]}


# --- what a decoder layer keeps for its backward, by model path (the `kernels` level) ----------------------
# The layer input is not listed: where it lives depends on checkpointing (see `estimate`). Qwen3 normalizes
# q and k per head (q_norm, k_norm); their rows are added where the model has them.

# Unsloth: fused LoRA kernels for QKV, O and the MLP save only their inputs (and gate/up, recomputing
# SwiGLU in backward); its RMSNorm saves its input; RoPE is applied in place.
UNSLOTH_SAVED = (
    Tensor("input RMSNorm output, saved by the fused LoRA QKV kernel", "h"),
    Tensor("q, k after RoPE and v, saved by attention", "q + kv + kv"),
    Tensor("attention output, saved by attention and the fused LoRA O kernel", "q"),
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

# TRL's chunked LM head: its backward holds the final hidden states, the masked copy it was given, and
# the gradient of that copy accumulated in fp32 and cast back
LM_HEAD_TENSORS = (
    Tensor("last decoder output, saved by the final RMSNorm", "h"),
    Tensor("final hidden states gathered by the label mask, saved by the chunked log-prob", "h"),
    Tensor("their gradient, accumulated in fp32", "h", FP32),
    Tensor("the same gradient cast back to bf16", "h"),
)


@dataclass(frozen=True)
class Component:
    name: str
    bytes: int
    detail: str


@dataclass
class Estimate:
    components: list[Component] = field(default_factory=list)
    peak_moment: str = ""
    notes: list[str] = field(default_factory=list)
    host_pinned_bytes: int = 0  # offloaded layer inputs in pinned host memory, beside the device figure
    host_detail: str = ""

    def add(self, name: str, size: float, detail: str) -> None:
        self.components.append(Component(name, int(size), detail))

    @property
    def total_bytes(self) -> int:
        return sum(c.bytes for c in self.components)

    @property
    def allocated_bytes(self) -> int:
        """The allocator's allocated peak: everything but fragmentation and what lives outside it."""
        return sum(c.bytes for c in self.components if c.name not in (OUTSIDE, FRAGMENTATION))

    def as_dict(self) -> dict[str, Any]:
        return {"total_bytes": self.total_bytes, "allocated_bytes": self.allocated_bytes,
                "peak_moment": self.peak_moment, "notes": self.notes, "host_pinned_bytes": self.host_pinned_bytes,
                "components": [{"name": c.name, "bytes": c.bytes, "detail": c.detail} for c in self.components]}


OUTSIDE = "CUDA context and kernels"
FRAGMENTATION = "allocator fragmentation"


class ShapesUnknown(ValueError):
    """The cell's model does not tell its shapes here (a hub id not on this machine)."""


# --- weights ---------------------------------------------------------------------------------------------

def linear_shapes(m: ModelFacts) -> dict[str, tuple[int, int]]:
    """(in, out) of each linear layer of one decoder layer."""
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    h, i = m.hidden_size, m.intermediate_size
    return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
            "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}


def nf4_bytes(n: int) -> float:
    return n / 2 + n / NF4_BLOCK + FP32 * n / (NF4_BLOCK * NF4_SECOND_BLOCK)


def decoder_weight_bytes(m: ModelFacts, quantization: str) -> tuple[float, float]:
    """(linear layers, norms) of all decoder layers. Norms stay bf16 under NF4: only nn.Linear is quantized."""
    n = m.layers * sum(a * b for a, b in linear_shapes(m).values())
    linear = nf4_bytes(n) if quantization == "nf4" else BF16 * n
    per_layer_norms = 2 * m.hidden_size + (2 * m.head_dim if m.model_type in QK_NORM_FAMILIES else 0)
    norms = BF16 * (m.layers * per_layer_norms + m.hidden_size)
    return linear, norms


def vocabulary_rows(m: ModelFacts, settings: dict[str, Any]) -> int:
    return m.vocab_size if settings["vocabulary"] == "native" else settings["vocabulary"]


def embedding_bytes(m: ModelFacts, settings: dict[str, Any]) -> float:
    """Embedding and LM head stay bf16 (bitsandbytes skips the LM head, and nn.Embedding is not Linear);
    vocabulary slicing keeps `vocabulary` rows of each; a tied model has one matrix for both."""
    return BF16 * vocabulary_rows(m, settings) * m.hidden_size * (1 if m.tied_embeddings else 2)


def adapter_parameters(m: ModelFacts, settings: dict[str, Any]) -> int:
    """LoRA A (r x in) and B (out x r) on every targeted linear layer of every decoder layer."""
    shapes = linear_shapes(m)
    return m.layers * settings["lora_rank"] * sum(sum(shapes[t]) for t in settings["lora_targets"] if t in shapes)


def optimizer_device_bytes(params: int, optimizer: str) -> tuple[float, str]:
    if optimizer == "adamw_torch":
        return 2 * FP32 * params, "exp_avg and exp_avg_sq in fp32"
    state = 2 * (params + FP32 * params / ADAM8_BLOCK)
    if optimizer == "adamw_8bit":
        return state, "two 8-bit states and their block absmax"
    # cudaMallocManaged memory: the committed cells with and without it hold the same device memory outside
    # the allocator at their peak (seed-16gb: adamw-not-paged-8bit against seed-stack), so NVML's process
    # figure does not count it; the budget lowers the allocator cap by it all the same
    return 0, f"{state / MIB:.0f} MiB of 8-bit state in unified memory, not in the process's device figure"


# --- activations -----------------------------------------------------------------------------------------

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


def layer_saved(m: ModelFacts, settings: dict[str, Any]) -> tuple[Tensor, ...]:
    kernels = settings["kernels"]
    saved = LAYER_SAVED[kernels] + (() if kernels == "unsloth" else lora_inputs(settings))
    return (*saved, QK_NORM_SAVED[kernels]) if m.model_type in QK_NORM_FAMILIES else saved


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


def packing_loss(sizes: list[int]) -> int:
    """What the allocator's segments hold beyond the tensors in them: a 20 MiB segment takes as many tensors
    of one size as fit and the rest of it waits for a smaller request; an own segment rounds up to 2 MiB.
    Negligible for the 8B models' 64+ MiB activations, a tenth of them for a small model's 1-10 MiB ones."""
    lost = 0
    for size in sizes:
        if SMALL_REQUEST < size < OWN_SEGMENT:
            per_segment = LARGE_SEGMENT // size
            lost += (LARGE_SEGMENT - per_segment * size) / per_segment
        elif size >= OWN_SEGMENT:
            lost += -size % ROUND_LARGE
    return int(lost)


def offloaded_inputs_bytes(m: ModelFacts, tokens: int) -> tuple[int, str]:
    """Offloaded checkpointing copies every layer's input to pinned host memory. PyTorch's pinned (host)
    caching allocator rounds each request up to a power of two, so a 160 MiB input takes 256 MiB."""
    one = BF16 * m.hidden_size * tokens
    held = 1 << (one - 1).bit_length()
    return m.layers * held, f"{m.layers} layer inputs of {one / MIB:,.0f} MiB, each held as {held / MIB:,.0f} MiB"


def estimate(settings: dict[str, Any], m: ModelFacts) -> Estimate:
    if not m.has_shapes:
        raise ShapesUnknown(f"the shapes of {settings['model']} are not known here (a hub id that is not "
                            "downloaded); give a local folder with config.json, a GGUF file or an arch: preset")
    kernels = settings["kernels"]
    if kernels not in LAYER_SAVED:
        raise ValueError(f"no memory model for kernels {kernels!r} (a declared conflict never runs)")
    est = Estimate()
    if settings["dtype"] == "float32" or settings["device"] == "cpu":
        est.notes.append("the formulas are for a GPU computing in bf16; this cell computes otherwise "
                         "(a CPU cell is judged on its resident set)")
    tokens = settings["batch_size"] * settings["context"]
    mode = settings["checkpointing"]
    # a budget named after a card is that card's GPU; a plain size is emulated on the H200 that measured
    card = budget_card(settings["budget"])
    hopper = card is None or card.capability >= (9, 0)
    if card is not None:
        est.notes.append(f"the CUDA context is the H200's as measured; on an {card.name} it differs")

    # memory that lives through training
    context, detail = outside_bytes(settings, hopper)
    est.add(OUTSIDE, context, detail)
    linear, norms = decoder_weight_bytes(m, settings["quantization"])
    what = "NF4 with double quantization" if settings["quantization"] == "nf4" else "bf16"
    est.add("decoder weights", linear + norms, f"{m.layers} layers of linear weights in {what}, norms in bf16")
    rows = vocabulary_rows(m, settings)
    est.add("embedding and LM head", embedding_bytes(m, settings),
            f"{rows:,} rows x {m.hidden_size} in bf16, {'tied' if m.tied_embeddings else 'two matrices'}")
    params = adapter_parameters(m, settings)
    # peft keeps adapter weights in fp32 (autocast_adapter_dtype), and their gradients are fp32 too
    est.add("adapter weights", FP32 * params, f"{params:,} LoRA parameters in fp32")
    state, state_detail = optimizer_device_bytes(params, settings["optimizer"])
    est.add("optimizer state on the device", state, state_detail)
    est.add("cuBLAS workspaces", CUBLAS_HANDLES * CUBLAS_WORKSPACE[hopper],
            f"{CUBLAS_HANDLES} handles x {CUBLAS_WORKSPACE[hopper] / MIB:g} MiB (torch's default)")

    # the peak moment: a decoder layer's backward, or the LM head's
    w = token_widths(m, settings)
    layer_input = Tensor("layer input", "h")
    saved = layer_saved(m, settings)
    freed = layer_freed_at_peak(settings)
    layer_working = LAYER_WORKING[kernels]
    scores = eager_scores(m, settings)
    scores_saved = scores_working = scores * (FP32 + BF16)
    if mode == "off":
        # every layer keeps its input and its activations until its own backward
        per_layer = [*layer_input.sizes(w, tokens), *(n for t in saved for n in t.sizes(w, tokens))]
        at_head = per_layer * m.layers
        at_layer = at_head  # less what the current layer has freed, subtracted below
        held_detail = head_detail = f"{m.layers} layers' inputs and activations (no checkpointing)"
        scores_held = m.layers * scores_saved
    else:
        # checkpointing recomputes one layer at a time; its output exists while backward runs through it
        inputs = m.layers if mode == "on" else 1
        at_layer = layer_input.sizes(w, tokens) * (inputs + 1) + [n for t in saved for n in t.sizes(w, tokens)]
        at_head = layer_input.sizes(w, tokens) * m.layers if mode == "on" else []
        where = "on the device" if mode == "on" else "brought back from host memory (the others wait there)"
        held_detail = f"{inputs} layer input(s) {where}, one layer recomputed with its output"
        head_detail = f"{m.layers} layer inputs kept on the device" if mode == "on" else "none on the device"
        scores_held = scores_saved
    held = sum(at_layer) - per_token(freed, w) * tokens + scores_held
    held_at_head = sum(at_head) + (scores_held if mode == "off" else 0)
    working_sizes = [n for t in layer_working for n in t.sizes(w, tokens)]
    working = max(sum(working_sizes), scores_working)
    if settings["quantization"] == "nf4":
        # bitsandbytes and Unsloth dequantize a whole weight to bf16 for each matmul, one at a time
        working += BF16 * max(a * b for a, b in linear_shapes(m).values())
    head_tile = min(tokens, TRL_TOKEN_CHUNK) * TRL_VOCAB_CHUNK * BF16
    head_sizes = [n for t in LM_HEAD_TENSORS for n in t.sizes(w, tokens)] + [FP32 * TRL_PER_TOKEN_FP32 * tokens,
                                                                            head_tile]
    head = sum(head_sizes)
    # all adapter gradients exist in the backward of the last layer to be processed (the first), none yet
    # in the LM head's backward, which comes before any layer's
    gradients = FP32 * params
    if held + working + gradients >= held_at_head + head:
        est.peak_moment = "backward through a decoder layer"
        est.add("adapter gradients", gradients, "fp32, all of them by the first layer's backward")
        est.add("activations", held, held_detail)
        est.add("working tensors at the peak", working, "gradients in flight in the MLP's backward"
                + (", the dequantized weight" if settings["quantization"] == "nf4" else ""))
        held_sizes = at_layer + working_sizes
    else:
        est.peak_moment = "backward through the LM head and loss (TRL's chunked log-prob)"
        est.add("adapter gradients", 0, "none made yet at this moment")
        est.add("activations", held_at_head, head_detail)
        est.add("working tensors at the peak", head,
                f"final hidden states, their fp32 gradient, a {min(tokens, TRL_TOKEN_CHUNK):,} x "
                f"{TRL_VOCAB_CHUNK:,} logits tile")
        held_sizes = at_head + head_sizes

    # the caching allocator keeps freed blocks and splits them for smaller requests; the recomputation and
    # the backward ask for the largest activation blocks in another order than they were freed, so one
    # block of the largest size is typically taken from a new segment; and its segments hold more than the
    # tensors in them (packing_loss)
    widest = max(m.hidden_size, m.heads * m.head_dim, m.intermediate_size)
    largest = max(BF16 * widest * tokens, FP32 * scores)
    packing = packing_loss(held_sizes)
    est.add(FRAGMENTATION, largest + packing, f"one free block of the largest activation ({largest / MIB:,.0f} "
                                              f"MiB) and segments' packing ({packing / MIB:,.0f} MiB)")
    if settings["optimizer"] == "paged_adamw_8bit":
        est.notes.append("paged optimizer state lives in unified memory and is not counted")
    if mode == "offload":
        est.host_pinned_bytes, est.host_detail = offloaded_inputs_bytes(m, tokens)
    if kernels == "unsloth":
        est.host_pinned_bytes += UNSLOTH_PINNED_AT_LOAD_MIB * MIB
        est.host_detail += f"{', ' if est.host_detail else ''}Unsloth's {UNSLOTH_PINNED_AT_LOAD_MIB} MiB pinned at load"
    return est
