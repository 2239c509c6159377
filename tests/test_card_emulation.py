"""While a budgeted cell runs, torch.cuda answers mem_get_info, get_device_properties and the per-process fraction
as the emulated card would. No CUDA here: torch.cuda's functions are replaced by a fake 140 GiB device first, and
the budget's answers must come through torch.cuda (both of its names for them) on top of that fake."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from harness.core.budget import Budget
from harness.core.card_emulation import ENV
from harness.results.model import BudgetRecord

GIB, MIB = 2**30, 2**20
DEVICE = 140 * GIB


class FakeDevice:
    """What torch.cuda says about a 140 GiB GPU with `reserved` bytes in this process's allocator."""

    def __init__(self, free: int = 130 * GIB) -> None:
        self.free, self.reserved, self.allocated, self.fraction = free, 0, 0, 1.0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        props = SimpleNamespace(total_memory=DEVICE, name="NVIDIA H200", major=9, minor=0, multi_processor_count=132)
        for module in (torch.cuda, torch.cuda.memory):
            monkeypatch.setattr(module, "mem_get_info", lambda device=None: (self.free, DEVICE))
            monkeypatch.setattr(module, "memory_reserved", lambda device=None: self.reserved)
            monkeypatch.setattr(module, "memory_allocated", lambda device=None: self.allocated)
            monkeypatch.setattr(module, "set_per_process_memory_fraction", self._set_fraction)
            monkeypatch.setattr(module, "get_per_process_memory_fraction", lambda device=None: self.fraction)
        monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)

    def _set_fraction(self, fraction: float, device: object = None) -> None:
        self.fraction = fraction


@pytest.fixture
def device(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    fake = FakeDevice()
    fake.install(monkeypatch)
    return fake


def applied(budget: str | dict, outside: int = 600 * MIB) -> Budget:
    budget_ = Budget.from_settings({"budget": budget}, cuda=True)
    budget_.apply(outside_bytes=outside)
    return budget_


def test_free_is_the_budget_less_what_the_process_holds_and_total_is_the_card(device):
    budget = applied("16GiB")
    device.reserved = 9 * GIB
    for mem_get_info in (torch.cuda.mem_get_info, torch.cuda.memory.mem_get_info):
        assert mem_get_info() == (16 * GIB - 9 * GIB - 600 * MIB, 16 * GIB)
        assert mem_get_info(0) == mem_get_info("cuda:0")
    props = torch.cuda.get_device_properties(0)
    assert props.total_memory == 16 * GIB
    assert props.name == "NVIDIA H200" and props.multi_processor_count == 132  # the rest is the device's
    assert budget.device_total_bytes == DEVICE  # the cap is a share of the real device


def test_the_paged_optimizer_state_and_later_recaps_count_as_held(device):
    budget = applied("16GiB")
    device.reserved = 8 * GIB
    budget.paged_optimizer_bytes = 80 * MIB
    budget.observe(device_bytes=8 * GIB + 900 * MIB, reserved_bytes=8 * GIB)  # the context grew to 900 MiB
    assert torch.cuda.mem_get_info()[0] == 16 * GIB - 8 * GIB - 900 * MIB - 80 * MIB


def test_near_the_budget_free_falls_under_unsloths_512_mib_headroom(device):
    """unsloth_zoo's offloaded checkpointing keeps its second staging buffer only with more than 512 MiB free:
    on the H200 it always had 130 GiB; on the card it does not once the allocator holds nearly all of the cap."""
    budget = applied("16GiB")
    device.reserved = budget.allocator_cap_bytes - 100 * MIB
    free = torch.cuda.mem_get_info()[0]
    assert free == 100 * MIB < 512 * MIB
    device.reserved = budget.allocator_cap_bytes + 200 * MIB  # never below nothing
    assert torch.cuda.mem_get_info()[0] == 0
    assert budget.as_dict()["card_emulation"]["lowest_free_bytes"] == 0


def test_total_times_fraction_is_still_the_cap(device):
    """Unsloth's usable_cuda_bytes: free + reserved - allocated, within total x the per-process fraction."""
    budget = applied("16GiB")
    device.reserved, device.allocated = 10 * GIB, 9 * GIB
    free, total = torch.cuda.mem_get_info(0)
    fraction = torch.cuda.get_per_process_memory_fraction(0)
    usable = min(free + device.reserved - device.allocated, int(total * fraction) - device.allocated)
    assert usable == pytest.approx(budget.allocator_cap_bytes - device.allocated, abs=1)
    assert torch.cuda.memory.get_per_process_memory_fraction() == fraction


def test_a_card_reports_its_total_and_its_usable_memory_is_what_is_free(device):
    budget = applied({"card": "rtx4080", "display_reserve": "512MiB"})
    assert torch.cuda.get_device_properties(0).total_memory == 16376 * MIB  # as a real RTX 4080 reports it
    assert torch.cuda.mem_get_info()[0] == (16376 - 434 - 512) * MIB - 600 * MIB == budget.limit_bytes - 600 * MIB


def test_free_is_never_more_than_the_device_has(device):
    applied("16GiB")
    device.free = 2 * GIB  # others fill the real device
    assert torch.cuda.mem_get_info()[0] == 2 * GIB


def test_the_result_records_the_emulation_and_the_device_answers_again_after_the_cell(device):
    budget = applied("16GiB")
    torch.cuda.mem_get_info()
    torch.cuda.get_device_properties(0)
    budget.release()
    assert torch.cuda.mem_get_info() == (130 * GIB, DEVICE)
    assert torch.cuda.get_device_properties(0).total_memory == DEVICE
    record = BudgetRecord.model_validate(budget.as_dict()).card_emulation
    assert record.on and record.total_bytes == 16 * GIB
    assert record.calls["mem_get_info"] == 1 and record.calls["get_device_properties"] == 1


def test_switched_off_or_a_budget_past_the_device_leaves_the_device_answering(device, monkeypatch):
    monkeypatch.setenv(ENV, "0")
    budget = applied("16GiB")
    assert torch.cuda.mem_get_info() == (130 * GIB, DEVICE)
    assert budget.as_dict()["card_emulation"] == {"on": False, "why_not": f"{ENV}=0"}
    monkeypatch.delenv(ENV)
    budget = applied("200GiB")
    assert budget.allocator_cap_bytes is None and torch.cuda.get_device_properties(0).total_memory == DEVICE
    assert not BudgetRecord.model_validate(budget.as_dict()).card_emulation.on


def test_a_cpu_cell_has_no_emulation():
    budget = Budget.from_settings({"budget": "16GiB"}, cuda=False)
    budget.apply(outside_bytes=0)
    assert budget.as_dict()["card_emulation"] is None
