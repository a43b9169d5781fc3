"""A raw JSON-RPC client for ``codesift serve``: frames timed as they arrive, not structured.

The pygls client turns every response into attrs objects before the awaiting
request sees it (~1.7 ms per 100-symbol answer), so in a burst of 200 its own
parsing queues into the measured latency. This client stamps each frame the
moment its last byte is read; a response whose frame starts ``{"id": N, "result":``
(how pygls and codesift write one) is decoded only when its result is asked
for, so one answer's decoding does not delay the next one's stamp: what it
measures is the server plus the pipe. It answers what the server asks
(progress tokens, configuration) and can cancel the vectors job as the pygls
client in ``server_probe`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

_RESPONSE = re.compile(rb'\{"id": (\d+), "result": ')


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process, pause_vectors: bool) -> None:
        self.proc = proc
        self.pause_vectors = pause_vectors
        self._next = 0
        self._waiting: dict[object, asyncio.Future[tuple[float, bytes]]] = {}
        self._paused: set[object] = set()
        self._reader = asyncio.ensure_future(self._read())

    def _send(self, message: dict[str, object]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := await out.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if not line:
                return
            body = await out.readexactly(length)
            arrived = time.perf_counter()  # before any decoding
            fast = _RESPONSE.match(body)
            future = self._waiting.pop(int(fast.group(1)), None) if fast else None
            if future is not None:
                future.set_result((arrived, body))  # decoded by the asker
            else:
                self._dispatch(arrived, json.loads(body))

    def _dispatch(self, arrived: float, m: dict[str, Any]) -> None:
        method = m.get("method")
        if method is not None and "id" in m:  # the server asks: configuration, progress tokens
            items = (m.get("params") or {}).get("items")
            self._send({"jsonrpc": "2.0", "id": m["id"], "result": [None] * len(items) if items else None})
        elif method == "$/progress":
            p = m["params"]
            message = str((p.get("value") or {}).get("message") or "")
            if self.pause_vectors and "embed" in message and p["token"] not in self._paused:
                self._paused.add(p["token"])
                self.notify("window/workDoneProgress/cancel", {"token": p["token"]})
        elif method is None:
            future = self._waiting.pop(m.get("id"), None)
            if future is not None and not future.done():
                future.set_result((arrived, json.dumps({"result": m.get("result")}).encode()))

    def notify(self, method: str, params: object) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method: str, params: object) -> asyncio.Future[tuple[float, bytes]]:
        """Send now; the future gives (arrival time, the response's undecoded body)."""
        self._next += 1
        future: asyncio.Future[tuple[float, bytes]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return future

    async def request(self, method: str, params: object) -> Any:
        _, body = await self.send_request(method, params)
        return json.loads(body).get("result")

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 5)
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()


async def started_raw(root: Path, *, pause_vectors: bool = False, idle_s: float = 900) -> RawClient:
    """A raw client on a real ``codesift serve`` for ``root``, initialised and idle."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "codesift.server.cli",
        "serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 24,
    )
    client = RawClient(proc, pause_vectors)
    try:
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            },
        )
        client.notify("initialized", {})
        await asyncio.sleep(1.0)
        deadline = time.monotonic() + idle_s
        while True:
            res = await client.request(
                "workspace/executeCommand", {"command": "codesift.status", "arguments": [{}]}
            )
            projects = (res or {}).get("projects") or []
            if projects and projects[0].get("activity") == "idle" and projects[0].get("exists"):
                return client
            if time.monotonic() > deadline:
                raise TimeoutError("the server did not become idle")
            await asyncio.sleep(0.5)
    except BaseException:
        await client.stop()
        raise
