"""Debian's Chromium, headless, driven over the DevTools protocol through its pipe (`--remote-debugging-pipe`:
commands in on file descriptor 3, answers out on 4, each a JSON message ended by a NUL byte), so that a test can
open a page, click in it as a reader would, and take a screenshot with nothing beyond the standard library."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# the flags the machine notes give for a headless Chromium that reaches nothing outside it
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--window-size=1400,1000", "--hide-scrollbars"]


def chromium() -> str | None:
    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


class DevToolsError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with a fresh profile; `page` commands go to its one tab."""

    def __init__(self, binary: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="vramlab-chromium-")
        to_browser, self._to_browser = os.pipe()  # the browser reads commands on its fd 3
        self._from_browser, from_browser = os.pipe()  # and writes answers on its fd 4

        def descriptors() -> None:
            # in the child: its 3 and 4, which what it runs inherits (dup2 makes them so); copied first, since either
            # pipe end may itself be 3 or 4 (a dup2 onto itself would leave it closed on exec)
            reads, writes = os.dup(to_browser), os.dup(from_browser)
            os.dup2(reads, 3)
            os.dup2(writes, 4)

        # close_fds would close 3 and 4 after descriptors() made them; this process's own descriptors are all made
        # non-inheritable by Python, so none but those two reaches Chromium
        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=descriptors)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=target["targetId"], flatten=True)["sessionId"]

    def _message(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise DevToolsError(f"no answer from Chromium within {self.timeout:g} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise DevToolsError("Chromium closed its end of the pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(text)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._message()
            if answer.get("id") != self._next_id:
                self.events.append(answer)
                continue
            if "error" in answer:
                raise DevToolsError(f"{method}: {answer['error']}")
            return answer.get("result", {})

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.send(method, session=self.session, **params)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is waited for)."""
        found = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in found:
            raise DevToolsError(f"{expression[:80]}: {found['exceptionDetails'].get('text')}")
        return found["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 30.0) -> Any:
        """Evaluate `expression` until it is truthy; its value."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise DevToolsError(f"waited {seconds:g} s for: {expression}")

    def open(self, path: Path) -> None:
        self.page("Page.enable")
        self.page("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("document.readyState === 'complete'")

    def screenshot(self, path: Path) -> Path:
        data = self.page("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(DevToolsError):  # it may close the pipe before it answers
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
