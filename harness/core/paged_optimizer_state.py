"""Which part of bitsandbytes' paged 8-bit AdamW state is paged (unified memory, outside PyTorch's allocator)
and which part is an ordinary device tensor (inside the allocator, so inside the budget's cap), as bitsandbytes
0.50.2 has it; the estimate (harness/estimate/memory_model.py) and the budget (harness/core/budget.py) both read
these rules from here. Where in bitsandbytes they were read: docs/measurement.md.
"""

from __future__ import annotations

from collections.abc import Iterable

PAGED_MIN_ELEMENTS = 100_000  # get_state_buffer: `p.numel() < 1e5` is not paged
MIN_8BIT_SIZE = 4096  # Optimizer8bit's min_8bit_size default: smaller parameters keep fp32 states
STATES = 2  # AdamW: exp_avg and exp_avg_sq
BLOCK = 256  # elements per fp32 absmax of an 8-bit state
FP32 = 4


def paged_bytes(numels: Iterable[int]) -> int:
    """Bytes of paged 8-bit AdamW state in unified memory for trainable parameters of these sizes."""
    return sum(STATES * n for n in numels if n >= PAGED_MIN_ELEMENTS)


def unpaged_bytes(numels: Iterable[int]) -> int:
    """Bytes of paged 8-bit AdamW state that are ordinary device tensors: the states of parameters under
    PAGED_MIN_ELEMENTS (fp32 under MIN_8BIT_SIZE, else 8-bit) and every 8-bit state's block absmax."""
    total = 0
    for n in numels:
        if n < MIN_8BIT_SIZE:
            total += STATES * FP32 * n
            continue
        total += STATES * FP32 * -(-n // BLOCK)
        if n < PAGED_MIN_ELEMENTS:
            total += STATES * n
    return total
