"""Trackers: device memory, host memory, time and compute, run side by side over a cell's phases."""

from harness.run.trackers.base import Tracker, TrackerSet
from harness.run.trackers.compute import ComputeTracker
from harness.run.trackers.host import HostMemoryTracker
from harness.run.trackers.memory import DeviceMemoryProbe, DeviceMemoryTracker
from harness.run.trackers.timing import TimeTracker, summarize_steps

__all__ = ["ComputeTracker", "DeviceMemoryProbe", "DeviceMemoryTracker", "HostMemoryTracker", "TimeTracker",
           "Tracker", "TrackerSet", "summarize_steps"]
