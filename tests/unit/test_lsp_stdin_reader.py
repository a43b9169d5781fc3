"""The server's stdin reader: lines and bodies served from what arrived, whatever its pieces."""

from __future__ import annotations

import asyncio
import os
import threading
import time

from codesift.server.stream import StdinReader


def _feed(fd: int, pieces: list[bytes]) -> threading.Thread:
    def run() -> None:
        for piece in pieces:
            os.write(fd, piece)
            time.sleep(0.01)  # separate read(2)s: a frame split across arrivals
        os.close(fd)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_frames_split_across_reads_are_read_whole_and_the_end_reads_empty() -> None:
    rfd, wfd = os.pipe()
    body = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'
    stream = b"Content-Length: %d\r\n\r\n" % len(body) + body
    pieces = [stream[:9], stream[9:25], stream[25:40], stream[40:] + stream[:20], stream[20:]]

    async def read_all() -> list[bytes]:
        reader = StdinReader(os.fdopen(rfd, "rb"))
        got = []
        for _ in range(2):
            got += [await reader.readline(), await reader.readline()]
            got.append(await reader.readexactly(len(body)))
        got.append(await reader.readline())
        return got

    feeder = _feed(wfd, pieces)
    got = asyncio.run(read_all())
    feeder.join()
    frame = [b"Content-Length: %d\r\n" % len(body), b"\r\n", body]
    assert got == frame + frame + [b""]


def test_a_stream_cut_mid_body_returns_what_arrived() -> None:
    rfd, wfd = os.pipe()

    async def read() -> tuple[bytes, bytes, bytes]:
        reader = StdinReader(os.fdopen(rfd, "rb"))
        return await reader.readline(), await reader.readexactly(100), await reader.readline()

    feeder = _feed(wfd, [b"Content-Length: 100\r\n", b'{"jsonrpc"'])
    line, body, end = asyncio.run(read())
    feeder.join()
    assert (line, body, end) == (b"Content-Length: 100\r\n", b'{"jsonrpc"', b"")
