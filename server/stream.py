"""The one writer of the JSON-RPC stream to the client, and its reader.

pygls writes a message from whichever thread produced it: a handler running in a
worker thread (``@server.thread()``) writes its own response. Two large responses
written at once to a slow reader interleave — the pipe takes part of one frame,
the other thread's frame lands inside it, and the client's session is lost
(8 concurrent 75 KB searches to a slow reader: 4 of 4 runs broken). Here every
message goes, whole, through one queue to one writer: a thread of its own for a
blocking stream (stdio), the event loop for an asyncio transport (TCP,
WebSocket), which only that loop may touch.

pygls reads stdin one header line (and one body) per call, each a hop through the
worker pool that also runs the handlers: a request waited for a free worker just to
be read, behind the slow questions of a burst. ``StdinReader`` reads whatever has
arrived in one ``read(2)`` on a thread of its own and serves lines and bodies from
that buffer on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import queue
import threading
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

# One read(2) takes at most this much of what the client has sent.
READ_BYTES = 1 << 20

# At most this much of what is queued goes out in one write (whole messages, in order).
WRITE_BYTES = 1 << 20

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
        # Whatever is queued when the writer is free goes out in one write: each write
        # gives up the GIL and takes it back after, and while a burst's questions are
        # computed in worker threads, taking it back waited up to a switch interval
        # (5 ms) per message.
        queued = self._queue
        while (data := queued.get()) is not None:
            if isinstance(data, threading.Event):
                data.set()
                continue
            batch, size = [data], len(data)
            after: bytes | threading.Event | None = b""  # what stopped the batch: b"" when nothing did
            while size < WRITE_BYTES:
                try:
                    more = queued.get_nowait()
                except queue.Empty:
                    break
                if more is None or isinstance(more, threading.Event):
                    after = more  # the end, or a drain: once what came before it is written
                    break
                batch.append(more)
                size += len(more)
            try:
                self._writer.write(batch[0] if len(batch) == 1 else b"".join(batch))
            except (OSError, ValueError) as exc:  # the client went away: drop what is left
                self._broken = True
                log.info("the client stopped reading (%s); dropping what is left to send", exc)
                return
            if after is None:
                return
            if isinstance(after, threading.Event):
                after.set()

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


class StdinReader:
    """The client's stream for pygls' message loop (``readline`` / ``readexactly``).

    A daemon thread blocks in ``read(2)`` and hands each arrival, whole, to the
    event loop; the loop serves lines and bodies from it without a thread hop. At
    the end of the stream a read returns what is left (``b""`` once all is read),
    as ``BinaryIO.readline`` / ``read`` do, which is how pygls' loop sees the end.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream  # held: its file descriptor closes with it
        self._fd = stream.fileno()
        self._started: asyncio.StreamReader | None = None

    @property
    def _buffer(self) -> asyncio.StreamReader:
        """The buffer, made on first use: it belongs to the loop that reads it."""
        if self._started is None:
            self._started = asyncio.StreamReader(limit=READ_BYTES)
            loop = asyncio.get_running_loop()
            threading.Thread(
                target=self._run, args=(loop, self._started), name="codesift-jsonrpc-reader", daemon=True
            ).start()
        return self._started

    def _run(self, loop: asyncio.AbstractEventLoop, buffer: asyncio.StreamReader) -> None:
        while True:
            try:
                data = os.read(self._fd, READ_BYTES)
            except OSError as exc:
                log.info("reading from the client failed (%s); ending the session", exc)
                data = b""
            try:
                if not data:
                    loop.call_soon_threadsafe(buffer.feed_eof)
                    return
                loop.call_soon_threadsafe(buffer.feed_data, data)
            except RuntimeError:  # the loop is closed: the server is gone
                return

    async def readline(self) -> bytes:
        try:
            return await self._buffer.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError:  # no line end in a megabyte: junk; pass it on
            return await self._buffer.read(READ_BYTES)

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._buffer.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial
