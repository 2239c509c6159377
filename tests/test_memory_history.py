"""The allocator-history summary finds the allocated peak and names what is alive then; NVML reads the GPU
CUDA_VISIBLE_DEVICES gives the process."""

from __future__ import annotations

from types import SimpleNamespace

from harness.core.device_memory import nvml_handle
from harness.run.memory_history import format_summary, peak_summary

MIB = 2**20


def frames(library_file: str) -> list[dict]:
    # innermost first, as torch records them: torch's own frame, then the library that asked
    return [{"filename": "/usr/lib/python3/site-packages/torch/nn/functional.py", "line": 1, "name": "linear"},
            {"filename": f"/tmp/site/{library_file}", "line": 42, "name": "forward"}]


def test_the_peak_is_where_the_running_total_is_largest_and_lists_what_is_alive_then():
    events = [
        {"action": "alloc", "addr": 1, "size": 100 * MIB, "frames": frames("unsloth/kernels/fast_lora.py")},
        {"action": "alloc", "addr": 2, "size": 300 * MIB, "frames": frames("peft/tuners/lora/layer.py")},
        {"action": "alloc", "addr": 3, "size": 50 * MIB, "frames": frames("unsloth/kernels/fast_lora.py")},
        {"action": "free_completed", "addr": 2, "size": 300 * MIB},
        # freed by the step, made before the recording started: it lowers the total, it was never listed
        {"action": "free_completed", "addr": 99, "size": 20 * MIB},
        {"action": "alloc", "addr": 4, "size": 200 * MIB, "frames": frames("transformers/trainer.py")},
    ]
    summary = peak_summary({"device_traces": [events]}, allocated_before=1000 * MIB)
    assert summary["peak_allocated_bytes"] == 1450 * MIB and summary["peak_event_index"] == 2
    owners = {g["owner"]: g for g in summary["groups"]}
    assert owners["unsloth/kernels/fast_lora.py:42 forward"]["bytes"] == 150 * MIB
    assert owners["unsloth/kernels/fast_lora.py:42 forward"]["count"] == 2
    assert owners["peft/tuners/lora/layer.py:42 forward"]["bytes"] == 300 * MIB
    assert not any("trainer" in owner for owner in owners)  # made after the peak
    assert summary["groups"][0]["owner"].startswith("peft/")  # largest first
    assert "allocated peak 1.416 GiB" in format_summary(summary)


def test_nvml_reads_the_gpu_that_cuda_visible_devices_names(monkeypatch):
    calls = []
    fake = SimpleNamespace(nvmlDeviceGetHandleByIndex=lambda i: calls.append(("index", i)) or i,
                           nvmlDeviceGetHandleByUUID=lambda u: calls.append(("uuid", u)) or u)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert nvml_handle(fake, 0) == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert nvml_handle(fake, 0) == 1  # CUDA's device 0 is the machine's second GPU
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3, GPU-8f2c")
    assert nvml_handle(fake, 1) == "GPU-8f2c"
    assert calls == [("index", 0), ("index", 1), ("uuid", "GPU-8f2c")]
