"""Where a cell computes and in which precision, resolved once and handed to everything that asks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class NoDevice(Exception):
    """The cell asks for a device this machine does not have; the cell is skipped with this reason."""


@dataclass(frozen=True)
class Runtime:
    device: str  # "cuda" or "cpu"
    dtype_name: str  # "bfloat16" or "float32"

    @property
    def cuda(self) -> bool:
        return self.device == "cuda"

    @property
    def dtype(self) -> Any:
        import torch

        return getattr(torch, self.dtype_name)

    @classmethod
    def resolve(cls, settings: dict[str, Any]) -> Runtime:
        """'auto' becomes cuda where a GPU is present; the dtype follows the device unless the cell names one."""
        import torch

        device = settings["device"]
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise NoDevice("the cell asks for device 'cuda' and no CUDA GPU is present")
        dtype = settings["dtype"]
        if dtype == "auto":
            dtype = "bfloat16" if device == "cuda" else "float32"
        return cls(device=device, dtype_name=dtype)
