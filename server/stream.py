"""The one writer of the JSON-RPC stream to the client.

pygls writes a message from whichever thread produced it: a handler running in a
worker thread (``@server.thread()``) writes its own response. Two large responses
written at once to a slow reader interleave — the pipe takes part of one frame,
the other thread's frame lands inside it, and the client's session is lost
(8 concurrent 75 KB searches to a slow reader: 4 of 4 runs broken). Here every
message goes, whole, through one queue to one writer: a thread of its own for a
blocking stream (stdio), the event loop for an asyncio transport (TCP,
WebSocket), which only that loop may touch.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import queue
import threading
from typing import Any

log = logging.getLogger(__name__)

# How long ``close()`` waits for queued messages (the shutdown response among
# them) to reach a client that is still reading.
DRAIN_S = 5.0


class ThreadWriter:
    """A blocking stream written by one thread, one whole message at a time, in order."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self._queue: queue.SimpleQueue[bytes | threading.Event | None] = queue.SimpleQueue()
        self._broken = False
        self._thread = threading.Thread(target=self._run, name="codesift-jsonrpc-writer", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        """Queue one whole message; never blocks, whatever the reader's pace."""
        if not self._broken:
            self._queue.put(bytes(data))

    def drain(self, timeout: float = DRAIN_S) -> bool:
        """Wait until every message queued so far is written; False on timeout."""
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            if isinstance(data, threading.Event):
                data.set()
                continue
            try:
                self._writer.write(data)
            except (OSError, ValueError) as exc:  # the client went away: drop what is left
                self._broken = True
                log.info("the client stopped reading (%s); dropping what is left to send", exc)
                return

    def close(self) -> None:
        """Send what is queued (for at most ``DRAIN_S``), then close the stream."""
        self._queue.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(DRAIN_S)
        with contextlib.suppress(OSError, ValueError):
            self._writer.close()


class LoopWriter:
    """An asyncio transport: every write is handed to its event loop, whole, in order."""

    def __init__(self, writer: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._writer = writer
        self._loop = loop
        self._sending: set[asyncio.Future[Any]] = set()  # kept until done (the loop holds weak refs)

    def write(self, data: bytes) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._write(data)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._write, bytes(data))

    def _write(self, data: bytes) -> None:
        res = self._writer.write(data)
        if inspect.isawaitable(res):
            future = asyncio.ensure_future(res)
            self._sending.add(future)
            future.add_done_callback(self._sending.discard)

    def close(self) -> Any:
        return self._writer.close()


def single_writer(writer: Any) -> ThreadWriter | LoopWriter:
    """``writer`` behind one writer: the running loop's, else a thread of its own."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return ThreadWriter(writer)
    return LoopWriter(writer, loop)
