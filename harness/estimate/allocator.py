"""What the caching allocator and cuBLAS add to the tensors: workspaces, and memory reserved but not allocated."""

from __future__ import annotations

MIB = 2**20

# torch's default cuBLAS workspace per handle (CUBLAS_WORKSPACE_CONFIG unset): ":4096:8" = 32 MiB on
# Hopper and newer, ":4096:2:16:8" = 8.125 MiB before. It is taken from the caching allocator, one per
# handle; training uses two handles, the main thread's and the autograd engine's.
CUBLAS_WORKSPACE = {True: 32 * MIB, False: 4096 * 1024 * 2 + 16 * 1024 * 8}
CUBLAS_HANDLES = 2
# PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): a request up to 1 MiB comes from
# 2 MiB segments of the small pool; one under 10 MiB is cut from a 20 MiB segment of the large pool; a
# larger one gets a segment of its own, rounded up to 2 MiB.
SMALL_REQUEST = 1 * MIB
LARGE_SEGMENT = 20 * MIB
OWN_SEGMENT = 10 * MIB
ROUND_LARGE = 2 * MIB


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
