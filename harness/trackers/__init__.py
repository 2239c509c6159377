"""Trackers: device memory, host memory, time and compute, run side by side over a cell's phases."""

from harness.trackers.base import Tracker, TrackerSet
from harness.trackers.compute import ComputeTracker
from harness.trackers.host import HostMemoryTracker
from harness.trackers.memory import DeviceMemoryProbe, DeviceMemoryTracker
from harness.trackers.timing import TimeTracker, summarize_steps

__all__ = ["ComputeTracker", "DeviceMemoryProbe", "DeviceMemoryTracker", "HostMemoryTracker", "TimeTracker",
           "Tracker", "TrackerSet", "summarize_steps"]
