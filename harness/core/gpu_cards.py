"""Real cards a budget can be named after (`budget: rtx4080`, or `budget: {card: rtx4080, display_reserve: 0.5GiB}`).

A "16 GB" card does not give a process 16 GiB: it reports a little less total memory than its label, the
driver keeps part of that for itself, and a desktop's display takes its share. Each card below carries the
total memory it reports, as nvidia-smi's memory.total shows it in MiB, from a published capture of that card;
a card without a reported figure is left out rather than guessed (the RTX 4060 Ti 16GB, RTX 4070 Ti SUPER
and RTX 5080 are missing for that reason). Where the capture also shows the driver's reservation (NVML's
"Reserved", which no process can allocate), it is kept as well, and the budget leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Card:
    name: str  # as nvidia-smi names it
    total_mib: int  # memory.total as nvidia-smi reports it
    capability: tuple[int, int]  # CUDA compute capability (decides torch's cuBLAS workspace, harness/estimate)
    source: str
    reserved_mib: int = 0  # what the driver reserves, where the source reports it

    @property
    def usable_bytes(self) -> int:
        return (self.total_mib - self.reserved_mib) * 2**20


_EXPORTER_4080S = ("nvidia-smi -q of an RTX 4080 SUPER (driver 595.71.05, KDE Plasma desktop): FB Memory Usage "
                   "Total 16376 MiB, Reserved 434 MiB; github.com/utkuozdemir/nvidia_gpu_exporter, "
                   "internal/captures/linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05.txt (commit 0eee0d3)")

CARDS: dict[str, Card] = {
    # the seed's card: AD103 with the same 16 GB of GDDR6X as the 4080 SUPER, whose capture gives the exact
    # total and the reservation used here; a PyTorch OOM message on an RTX 4080 reports "15.99 GiB total
    # capacity", the same to its two decimals (github.com/aigc-apps/sd-webui-EasyPhoto/issues/281)
    "rtx4080": Card("NVIDIA GeForce RTX 4080", 16376, (8, 9), _EXPORTER_4080S, reserved_mib=434),
    "rtx4080super": Card("NVIDIA GeForce RTX 4080 SUPER", 16376, (8, 9), _EXPORTER_4080S, reserved_mib=434),
    "rtx3090": Card("NVIDIA GeForce RTX 3090", 24576, (8, 6),
                    "nvidia-smi table of an RTX 3090 (driver 580.142): 24576MiB; "
                    "github.com/noonghunna/club-3090/issues/390"),
    "rtx4090": Card("NVIDIA GeForce RTX 4090", 24564, (8, 9),
                    "nvidia-smi table of two RTX 4090s (driver 550.163.01): 24564MiB; "
                    "github.com/RLinf/RLinf/issues/255"),
    "rtx5090": Card("NVIDIA GeForce RTX 5090", 32607, (12, 0),
                    "nvidia-smi table of two RTX 5090s (driver 610.57.04): 32607MiB; "
                    "github.com/noonghunna/club-3090/issues/1261"),
}
