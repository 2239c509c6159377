"""A Hugging Face hub cache laid out by huggingface_hub itself, with no network: a loopback HTTP server answers
huggingface_hub's downloads as the hub's `resolve` endpoint does (the commit a revision names in X-Repo-Commit, the
file's ETag and size), and `hf_hub_download` writes the cache (blobs/, snapshots/<commit>/, refs/<revision>) into a
temporary HF_HOME as it would from huggingface.co. The cells under test then run with the hub switched off."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from tests.conftest import REPO


def commit_of(name: str) -> str:
    """A commit id (40 hex digits) named by a word, so tests can tell their commits apart."""
    return hashlib.sha1(name.encode()).hexdigest()


class Repository:
    """One model repository: its files at each commit, and the branches and tags that name a commit."""

    def __init__(self, repo_id: str) -> None:
        self.repo_id = repo_id
        self.files: dict[str, dict[str, bytes]] = {}
        self.refs: dict[str, str] = {}

    def commit(self, name: str, files: dict[str, bytes], *refs: str) -> str:
        commit = commit_of(name)
        self.files[commit] = files
        self.refs.update(dict.fromkeys(refs, commit))
        return commit


def _handler(repository: Repository) -> type[http.server.BaseHTTPRequestHandler]:
    class Resolve(http.server.BaseHTTPRequestHandler):
        def _answer(self, body: bool) -> None:
            prefix = f"/{repository.repo_id}/resolve/"
            path = unquote(self.path.split("?", 1)[0])
            revision, _, name = path.removeprefix(prefix).partition("/") if path.startswith(prefix) else ("", "", "")
            commit = repository.refs.get(revision, revision)
            content = repository.files.get(commit, {}).get(name)
            if content is None:
                self.send_response(404)
                code = "RevisionNotFound" if commit not in repository.files else "EntryNotFound"
                self.send_header("X-Error-Code", code)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("X-Repo-Commit", commit)
            self.send_header("ETag", f'"{hashlib.sha256(content).hexdigest()}"')
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            if body:
                self.wfile.write(content)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def log_message(self, *args: object) -> None:
            pass

    return Resolve


@contextlib.contextmanager
def loopback_hub(repository: Repository) -> Iterator[str]:
    """The endpoint (http://127.0.0.1:<port>) of a hub that serves `repository`, while the block runs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(repository))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


DOWNLOAD = """
import json, sys
from huggingface_hub import hf_hub_download
repo_id, revision, names = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for name in names:
    print(hf_hub_download(repo_id, name, revision=revision))
"""


def hub_env(hf_home: Path, endpoint: str | None = None) -> dict[str, str]:
    """This process's environment with the hub cache under `hf_home`, and the hub at `endpoint` (else switched off)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_HUB_CACHE", "HF_HOME")}
    env.update(HF_HOME=str(hf_home), PYTHONPATH=str(REPO), HF_HUB_DISABLE_TELEMETRY="1")
    if endpoint is None:
        env["HF_HUB_OFFLINE"] = "1"
    else:
        env["HF_ENDPOINT"] = endpoint
    return env


def download(hf_home: Path, endpoint: str, repository: Repository, revision: str) -> list[Path]:
    """huggingface_hub's own download of every file of `revision` into the cache under `hf_home`."""
    names = sorted(repository.files[repository.refs.get(revision, revision)])
    done = subprocess.run([sys.executable, "-c", DOWNLOAD, repository.repo_id, revision, json.dumps(names)],
                          env=hub_env(hf_home, endpoint), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [Path(line) for line in done.stdout.split()]


def tiny_model_files(folder: Path) -> dict[str, bytes]:
    """A tiny Llama with random weights and a word-level tokenizer, as save_pretrained writes them."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from harness.stack.models.presets import PRESETS
    from harness.stack.models.sources import make_placeholder_tokenizer

    fields = PRESETS["tiny-llama"]
    AutoModelForCausalLM.from_config(AutoConfig.for_model(**fields)).save_pretrained(folder)
    make_placeholder_tokenizer(fields["vocab_size"], fields).save_pretrained(folder)
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
