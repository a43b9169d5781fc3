"""A raw JSON-RPC client over a real ``codesift serve`` process: the bytes as sent.

pytest-lsp parses frames for us and would hide a broken stream; these helpers
keep every byte the server wrote, so a test can check each frame on its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

SERVER = [sys.executable, "-m", "codesift.server.cli", "serve"]


class FrameError(AssertionError):
    """The byte stream from the server is not a sequence of whole JSON-RPC frames."""


def frame(message: object) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def parse_frames(data: bytes) -> Iterator[dict[str, object]]:
    """Every frame in ``data``, strictly: a header block, then exactly Content-Length bytes of JSON."""
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            raise FrameError(f"unterminated header at byte {pos}: {data[pos : pos + 80]!r}")
        length = None
        for line in data[pos:end].split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
            elif name.strip().lower() != b"content-type":
                raise FrameError(f"not a header at byte {pos}: {line[:80]!r}")
        if length is None:
            raise FrameError(f"no Content-Length at byte {pos}")
        body = data[end + 4 : end + 4 + length]
        if len(body) < length:
            raise FrameError(f"frame at byte {pos} is cut short")
        try:
            message = json.loads(body)
        except ValueError as exc:
            raise FrameError(f"frame at byte {pos} is not JSON: {exc}: …{body[-120:]!r}") from exc
        if not isinstance(message, dict):
            raise FrameError(f"frame at byte {pos} is not a JSON object")
        yield message
        pos = end + 4 + length


class RawServer:
    """``codesift serve`` on pipes; a reader thread keeps every byte (optionally slowly)."""

    def __init__(self, cwd: Path, *, read_delay: float = 0.0, chunk: int = 65536) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            SERVER, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.data = bytearray()
        self.stderr = bytearray()
        self.read_delay = read_delay
        self.chunk = chunk
        self._lock = threading.Lock()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            got = os.read(fd, self.chunk)
            if not got:
                return
            with self._lock:
                self.data += got
            if self.read_delay:
                time.sleep(self.read_delay)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr += line

    def send(self, message: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(message))
        self.proc.stdin.flush()

    def request(self, method: str, params: object = None, *, msg_id: object = None) -> object:
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        message: dict[str, object] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params: object = None) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def messages(self) -> list[dict[str, object]]:
        """Every whole frame so far (a frame still arriving is left for later)."""
        with self._lock:
            data = bytes(self.data)
        out: list[dict[str, object]] = []
        pos = 0
        while True:
            end = data.find(b"\r\n\r\n", pos)
            if end < 0:
                break
            header = data[pos:end]
            fields = (h.partition(b":") for h in header.split(b"\r\n"))
            length = next((int(v) for n, _, v in fields if n.lower() == b"content-length"), None)
            if length is None or end + 4 + length > len(data):
                break
            pos = end + 4 + length
        out.extend(parse_frames(data[:pos]))
        return out

    def response(self, msg_id: object, timeout: float = 60.0) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in self.messages():
                if m.get("id") == msg_id and "method" not in m:
                    return m
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited {self.proc.returncode}: {bytes(self.stderr[-2000:])!r}")
            time.sleep(0.02)
        raise AssertionError(f"no response to {msg_id!r} in {timeout} s")

    def answer_server_requests(self) -> None:
        """Reply null to every request the server sent (progress create, registrations, configuration)."""
        answered: set[object] = getattr(self, "_answered", set())
        for m in self.messages():
            if "method" in m and "id" in m and m["id"] not in answered:
                answered.add(m["id"])
                result: object = [None] if m["method"] == "workspace/configuration" else None
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
        self._answered = answered

    def initialize(self, root: Path, options: object = None) -> dict[str, object]:
        msg_id = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options,
            },
        )
        got = self.response(msg_id)
        self.notify("initialized", {})
        return got

    def wait_indexed(self, timeout: float = 120.0) -> None:
        """Until the first index run's progress ends."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.answer_server_requests()
            for m in self.messages():
                if m.get("method") == "$/progress":
                    value = m.get("params", {}).get("value", {})  # type: ignore[union-attr]
                    if isinstance(value, dict) and value.get("kind") == "end":
                        return
            time.sleep(0.05)
        raise AssertionError("indexing did not finish")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.request("shutdown")
                self.notify("exit")
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
