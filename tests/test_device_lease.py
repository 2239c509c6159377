"""Every GPU of a machine used, never two cells on one: device leases, on a machine without a GPU given four fake
ones (VRAMLAB_DEVICES=0,1,2,3). The processes here hold real leases (fcntl locks) and record when they held which
device; the workflow test runs cells through Snakemake and reads the device each result records."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from harness.core.devices import DEVICES_ENV, Device, machine_devices
from harness.process.device_lease import cell_lease, device_lease, slots_wanted
from harness.run.worker_status import LEASE_ENV, recorded_lease
from tests.conftest import REPO, TINY, write_matrix

FOUR = [Device(str(i), i, str(i)) for i in range(4)]


def _hold(folder: str, slots: int, seconds: float, out: multiprocessing.Queue) -> None:
    with device_lease(FOUR, slots, Path(folder)) as lease:
        start = time.monotonic()
        time.sleep(seconds)
        out.put((lease.device.entry, lease.slot, start, time.monotonic()))


def hold_at_once(folder: Path, processes: int, slots: int, seconds: float) -> list[tuple[str, int, float, float]]:
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    workers = [context.Process(target=_hold, args=(str(folder), slots, seconds, out)) for _ in range(processes)]
    for worker in workers:
        worker.start()
    held = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=10)
    return held


def one_after_another(spans: list[tuple[float, float]]) -> bool:
    """No two of these (start, end) spans overlap."""
    ordered = sorted(spans)
    return all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(ordered))


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    now = best = 0
    for _, step in events:
        now += step
        best = max(best, now)
    return best


@pytest.mark.slow
def test_eight_processes_on_four_devices_two_at_a_time_never_share_one(tmp_path):
    held = hold_at_once(tmp_path, processes=8, slots=1, seconds=1.0)
    assert {device for device, *_ in held} == {"0", "1", "2", "3"}
    for device in "0123":
        assert one_after_another([(start, end) for d, _, start, end in held if d == device]), device
    assert most_at_once([(start, end) for _, _, start, end in held]) == 4  # all four devices in use at once


@pytest.mark.slow
def test_with_two_slots_a_device_is_shared_only_once_every_device_has_a_cell(tmp_path):
    held = hold_at_once(tmp_path, processes=6, slots=2, seconds=1.5)
    assert most_at_once([(s, e) for *_, s, e in held]) == 6
    per_device = {d: sum(1 for dev, *_ in held if dev == d) for d in "0123"}
    assert sorted(per_device.values()) == [1, 1, 2, 2]  # slot 0 of every device before any slot 1
    assert sum(1 for _, slot, *_ in held if slot == 1) == 2


def test_a_killed_holder_leaves_its_device_free(tmp_path):
    code = ("import sys, time; from pathlib import Path; from harness.process.device_lease import device_lease; "
            "from harness.core.devices import Device\n"
            "with device_lease([Device('0', 0, '0')], 1, Path(sys.argv[1])):\n"
            "    print('held', flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    assert holder.stdout.readline().strip() == "held"
    told: list[list[str]] = []
    started = time.monotonic()

    def kill_soon(holders: list[str]) -> None:
        told.append(holders)
        os.kill(holder.pid, signal.SIGKILL)

    with device_lease([Device("0", 0, "0")], 1, tmp_path, waiting=kill_soon) as lease:
        assert lease.device.entry == "0" and lease.waited_seconds > 0
    holder.wait(timeout=10)
    assert told and f"pid {holder.pid}" in told[0][0]
    assert time.monotonic() - started < 30


def test_the_machines_devices(monkeypatch):
    assert [d.entry for d in machine_devices({DEVICES_ENV: "0, 1,2,3"})] == ["0", "1", "2", "3"]
    assert machine_devices({DEVICES_ENV: ""}) == []  # leasing off
    assert machine_devices({"CUDA_VISIBLE_DEVICES": "-1"}) == []
    if not Path("/proc/driver/nvidia/version").exists():
        assert machine_devices({}) == []
    assert Device("GPU-1/x", None, "GPU-1/x").file_key == "GPU-1_x"


def test_a_cpu_cell_takes_no_lease_and_the_lease_reaches_the_measuring_process(monkeypatch, tmp_path):
    monkeypatch.setenv(DEVICES_ENV, "0,1,2,3")
    monkeypatch.setenv("VRAMLAB_LEASES", str(tmp_path))
    with cell_lease({"device": "cpu"}) as lease:
        assert lease is None
    with cell_lease({"device": "auto"}) as first, cell_lease({"device": "cuda"}) as second:
        assert first.device.entry == "0" and second.device.entry == "1"
        env = second.env()
        assert env["CUDA_VISIBLE_DEVICES"] == "1"
        record = recorded_lease(env)
        assert record.pop("waited_seconds") < 5
        assert record == {"device": "1", "index": 1, "slot": 0, "slots": 1, "devices": ["0", "1", "2", "3"]}
    assert recorded_lease({LEASE_ENV: "not json"}) is None
    with pytest.raises(ValueError, match="at least 1"):
        slots_wanted(0)


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


@pytest.mark.slow
def test_six_cells_through_snakemake_on_four_fake_gpus_each_hold_a_device_of_their_own(tmp_path, cache_dir):
    """snakemake --cores 6 --resources gpu=6 on four devices: four cells at once, each on its own device, and the
    two others wait for a device to come free; the results record which device each ran on."""
    cells = "\n".join(f"  - {{name: c{i}, context: {32 + 8 * i}}}" for i in range(6))
    matrix = write_matrix(tmp_path, TINY.format(cells=cells).replace("device: cpu", "device: auto"))
    env = {**os.environ, "VRAMLAB_CACHE": str(cache_dir), "PYTHONPATH": str(REPO), DEVICES_ENV: "0,1,2,3",
           "VRAMLAB_LEASES": str(tmp_path / "leases")}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "--cores", "6", "--resources", "gpu=6", "--config", f"matrix={matrix}",
                           "warm_start=false"], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = [json.loads(p.read_text()) for p in sorted((tmp_path / "results" / "m").glob("*.json"))]
    assert len(results) == 6 and {r["status"] for r in results} == {"ok"}
    leases = [r["device_lease"] for r in results]
    assert {lease["device"] for lease in leases} == {"0", "1", "2", "3"}
    assert all(lease["slots"] == 1 and lease["devices"] == ["0", "1", "2", "3"] for lease in leases)
    spans = [(_seconds(r["started_at"]), _seconds(r["finished_at"])) for r in results]
    for device in "0123":
        assert one_after_another([span for span, lease in zip(spans, leases, strict=True)
                                  if lease["device"] == device]), device
    # the four devices were all in use at once (stamps are whole seconds: a cell that ended in the second another
    # started on its device is taken to have ended first)
    assert most_at_once([(start, end - 0.5) for start, end in spans]) == 4
    assert sum(lease["waited_seconds"] > 0 for lease in leases) >= 2  # two waited for a device
    assert "waits for a device" in proc.stderr + proc.stdout
