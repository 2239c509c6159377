"""Predicted whole-process device memory of a cell, by component, from its settings and its model's shapes.
Why it is so: docs/estimate.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.budget import budget_bytes, budget_card
from harness.core.paged_optimizer_state import PAGED_MIN_ELEMENTS
from harness.estimate.activations import (
    BF16,
    FP32,
    LAYER_SAVED,
    QK_NORM_FAMILIES,
    Moment,
    eager_scores,
    head_moment,
    layer_moment,
    next_power_of_2,
    tiled,
)
from harness.estimate.allocator import CUBLAS_HANDLES, CUBLAS_WORKSPACE, packing_loss
from harness.estimate.outside import UNSLOTH_PINNED_AT_LOAD_MIB, attention_kernel, outside_bytes
from harness.estimate.unsloth_plan import embedding_leaves_device
from harness.stack.models.facts import ModelFacts

GIB = 2**30
MIB = 2**20

# bitsandbytes NF4 (Linear4bit's defaults): 4 bits per weight, one absmax per block of 64 weights; with
# double quantization that absmax is stored as 1 byte, with one fp32 absmax per 256 of those blocks.
NF4_BLOCK = 64
NF4_SECOND_BLOCK = 256
# bitsandbytes 8-bit Adam: two 1-byte states per parameter, one fp32 absmax per block of 256 of each
ADAM8_BLOCK = 256


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

def nf4_bytes(n: int) -> float:
    return n / 2 + n / NF4_BLOCK + FP32 * n / (NF4_BLOCK * NF4_SECOND_BLOCK)


def decoder_weight_bytes(m: ModelFacts, quantization: str) -> tuple[float, float]:
    """(linear layers, norms) of all decoder layers. Norms stay bf16 under NF4: only nn.Linear is quantized."""
    n = m.layers * sum(a * b for a, b in m.linear_shapes().values())
    linear = nf4_bytes(n) if quantization == "nf4" else BF16 * n
    per_layer_norms = 2 * m.hidden_size + (2 * m.head_dim if m.model_type in QK_NORM_FAMILIES else 0)
    norms = BF16 * (m.layers * per_layer_norms + m.hidden_size)
    return linear, norms


def vocabulary_rows(m: ModelFacts, settings: dict[str, Any]) -> int:
    """The rows kept; `counted` keeps as many as its text holds, known only once it is tokenized: the native
    size bounds it from above."""
    if isinstance(settings["vocabulary"], int):
        return settings["vocabulary"]
    if m.vocab_size is None:
        raise ValueError("the model's vocabulary size is not known, so its embedding and head cannot be sized")
    return m.vocab_size


def embedding_bytes(m: ModelFacts, settings: dict[str, Any]) -> float:
    """Embedding and LM head stay bf16 (bitsandbytes skips the LM head, and nn.Embedding is not Linear);
    vocabulary slicing keeps `vocabulary` rows of each; a tied model has one matrix for both."""
    return BF16 * vocabulary_rows(m, settings) * m.hidden_size * (1 if m.tied_embeddings else 2)


def adapter_tensors(m: ModelFacts, settings: dict[str, Any]) -> list[int]:
    """The element count of each LoRA matrix: A (r x in) and B (out x r) on every targeted linear layer of every
    decoder layer."""
    shapes = m.linear_shapes()
    one_layer = [settings["lora_rank"] * n for t in settings["lora_targets"] if t in shapes for n in shapes[t]]
    return one_layer * m.layers


def adapter_parameters(m: ModelFacts, settings: dict[str, Any]) -> int:
    return sum(adapter_tensors(m, settings))


# bitsandbytes pages a state only when its parameter has at least PAGED_MIN_ELEMENTS elements; a smaller one's
# state is an ordinary device tensor, as are every block absmax (harness/core/paged_optimizer_state.py)


def optimizer_device_bytes(tensors: list[int], optimizer: str) -> tuple[float, str]:
    params = sum(tensors)
    if optimizer == "adamw_torch":
        return 2 * FP32 * params, "exp_avg and exp_avg_sq in fp32"
    absmax = 2 * FP32 * sum(-(-n // ADAM8_BLOCK) for n in tensors)
    state = 2 * params + absmax
    if optimizer == "adamw_8bit":
        return state, "two 8-bit states and their block absmax"
    # cudaMallocManaged memory: the committed cells with and without it hold the same device memory outside
    # the allocator at their peak (seed-16gb: adamw-not-paged-8bit against seed-stack), so NVML's process
    # figure does not count it; the budget lowers the allocator cap by it all the same
    small = [n for n in tensors if n < PAGED_MIN_ELEMENTS]
    on_device = 2 * sum(small) + absmax
    return on_device, (f"the 8-bit states of the {len(small):,} LoRA matrices under {PAGED_MIN_ELEMENTS:,} "
                       f"elements, which bitsandbytes does not page, and every block absmax; "
                       f"{(state - on_device) / MIB:.0f} MiB more in unified memory, not in the process's "
                       "device figure")


def offloaded_inputs_bytes(m: ModelFacts, tokens: int) -> tuple[int, str]:
    """Offloaded checkpointing copies every layer's input to pinned host memory. PyTorch's pinned (host)
    caching allocator rounds each request up to a power of two, so a 160 MiB input takes 256 MiB."""
    one = BF16 * m.hidden_size * tokens
    held = next_power_of_2(one)
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
    if settings["vocabulary"] == "counted" and m.vocab_size is not None:  # counted once the cell reads its text
        est.notes.append(f"vocabulary: counted keeps the tokens its training text uses, known only once the cell "
                         f"tokenizes it; the embedding and LM head are sized at the full {m.vocab_size:,} rows, an "
                         "upper bound")
    tokens = settings["batch_size"] * settings["context"]
    mode = settings["checkpointing"]
    # a budget named after a card is that card's GPU; a plain size is emulated on the H200 that measured
    card = budget_card(settings["budget"])
    hopper = card is None or card.capability >= (9, 0)
    if card is not None:
        est.notes.append(f"the CUDA context is the H200's as measured; on an {card.name} it differs")
    if card is not None and settings["device"] == "cpu":  # the fit is against a card the cell never runs on
        est.notes.append(f"the budget names a GPU ({card.name}) but this cell runs on the CPU: it fits or not against "
                         "that card's memory, not the host's")

    # memory that lives through training
    context, detail = outside_bytes(settings, hopper)
    est.add(OUTSIDE, context, detail)
    linear, norms = decoder_weight_bytes(m, settings["quantization"])
    what = "NF4 with double quantization" if settings["quantization"] == "nf4" else "bf16"
    est.add("decoder weights", linear + norms, f"{m.layers} layers of linear weights in {what}, norms in bf16")
    rows = vocabulary_rows(m, settings)
    params = adapter_parameters(m, settings)
    # the budget caps the allocator at the budget less what lives outside it (harness/core/budget.py)
    cap = budget_bytes(settings["budget"]) - context
    moved = embedding_leaves_device(settings, m, cap, int(linear + norms + embedding_bytes(m, settings)), params,
                                    rows)
    if moved:
        est.add("embedding and LM head", embedding_bytes(m, settings) / 2,
                f"the LM head, {rows:,} rows x {m.hidden_size} in bf16; {moved}")
    else:
        est.add("embedding and LM head", embedding_bytes(m, settings),
                f"{rows:,} rows x {m.hidden_size} in bf16, {'tied' if m.tied_embeddings else 'two matrices'}")
    # peft keeps adapter weights in fp32 (autocast_adapter_dtype), and their gradients are fp32 too
    est.add("adapter weights", FP32 * params, f"{params:,} LoRA parameters in fp32")
    state, state_detail = optimizer_device_bytes(adapter_tensors(m, settings), settings["optimizer"])
    est.add("optimizer state on the device", state, state_detail)
    est.add("cuBLAS workspaces", CUBLAS_HANDLES * CUBLAS_WORKSPACE[hopper],
            f"{CUBLAS_HANDLES} handles x {CUBLAS_WORKSPACE[hopper] / MIB:g} MiB (torch's default)")

    # the peak moment: a decoder layer's backward, or the LM head's
    attention = attention_kernel(settings, hopper)
    layer = layer_moment(m, settings, tokens, attention)
    head = head_moment(m, settings, tokens, vocabulary_rows(m, settings), attention)
    gradients = FP32 * params

    def with_gradients(moment: Moment) -> float:
        return moment.total + gradients * moment.adapter_gradients

    peak = layer if with_gradients(layer) >= with_gradients(head) else head
    est.peak_moment = peak.name
    if not peak.adapter_gradients:
        held = "none made yet"
    elif peak is head:
        held = f"fp32, kept from the step's earlier micro-batches ({settings['grad_accum']} accumulated)"
    elif peak.adapter_gradients < 1:
        held = "fp32, only the last decoder layer's: the peak comes in the first layer the backward reaches"
    else:
        held = "fp32, all of them by the first layer's backward"
    est.add("adapter gradients", int(gradients * peak.adapter_gradients), held)
    est.add("activations", peak.activations, peak.activations_detail)
    est.add("working tensors at the peak", peak.working, peak.working_detail)

    # the caching allocator keeps freed blocks and splits them for smaller requests; the recomputation and
    # the backward ask for the largest activation blocks in another order than they were freed, so one
    # block of the largest size is typically taken from a new segment; and its segments hold more than the
    # tensors in them (packing_loss)
    # (a tiled MLP makes its intermediate-size tensors one shard long; then FlashAttention's fp32 dq accumulator is)
    widest = max(m.hidden_size, m.heads * m.head_dim, 0 if tiled(settings) else m.intermediate_size)
    largest = max(BF16 * widest * tokens, FP32 * eager_scores(m, settings),
                  FP32 * m.heads * m.head_dim * tokens if tiled(settings) else 0)
    packing = packing_loss(peak.sizes)
    est.add(FRAGMENTATION, largest + packing, f"one free block of the largest activation ({largest / MIB:,.0f} "
                                              f"MiB) and segments' packing ({packing / MIB:,.0f} MiB)")
    if settings["optimizer"] == "paged_adamw_8bit":
        est.notes.append("the paged optimizer state of the larger LoRA matrices lives in unified memory and is not "
                         "counted")
    if mode == "offload":
        est.host_pinned_bytes, est.host_detail = offloaded_inputs_bytes(m, tokens)
    if kernels == "unsloth":
        est.host_pinned_bytes += UNSLOTH_PINNED_AT_LOAD_MIB * MIB
        est.host_detail += f"{', ' if est.host_detail else ''}Unsloth's {UNSLOTH_PINNED_AT_LOAD_MIB} MiB pinned at load"
    return est
