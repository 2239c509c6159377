"""Which part of bitsandbytes' paged 8-bit AdamW state is paged (unified memory, outside PyTorch's allocator)
and which part is an ordinary device tensor (inside the allocator, so inside the budget's cap).

Read in bitsandbytes 0.50.2 (bitsandbytes/optim/optimizer.py), the version the GPU results ran with:
- `Optimizer8bit.get_state_buffer`: `if not self.is_paged or p.numel() < 1e5: return torch.zeros_like(...)`,
  else `F.get_paged(...)`: only the states of a parameter of 100,000 elements or more are paged;
- `Optimizer2State.init_state`: a parameter under `min_8bit_size` elements (4,096 by default) gets two fp32
  states, else two uint8 states (`state1`, `state2`), and in the 8-bit case two fp32 block absmax vectors
  (`absmax1`, `absmax2`, one value per block of 256) made with `torch.zeros(..., device=p.device)`: never
  paged.
So the paged part is two bytes per element of each trainable parameter of 100,000 elements or more; everything
else the optimizer holds is allocated as any tensor is. The memory estimate (harness/estimate/memory_model.py)
and the budget (harness/budget.py) both read these rules from here.
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
