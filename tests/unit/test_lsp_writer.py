"""The one writer sends what is queued while it writes in one write: whole messages, in order."""

from __future__ import annotations

import threading

from codesift.server.stream import ThreadWriter


class _Slow:
    """A stream whose first write waits for ``release`` (a client not reading yet)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.release = threading.Event()
        self.closed = False

    def write(self, data: bytes) -> None:
        if not self.writes:
            self.writes.append(bytes(data))
            self.release.wait(10)
            return
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True


def test_messages_queued_during_a_write_go_out_together_whole_and_in_order() -> None:
    stream = _Slow()
    writer = ThreadWriter(stream)
    messages = [f"message {i} ".encode() * (i + 1) for i in range(50)]
    writer.write(messages[0])
    while not stream.writes:  # the first write is under way and blocked
        threading.Event().wait(0.001)
    for m in messages[1:]:
        writer.write(m)
    stream.release.set()
    assert writer.drain(5)
    assert stream.writes == [messages[0], b"".join(messages[1:])]
    writer.write(b"last")
    writer.close()
    assert stream.writes[-1] == b"last" and stream.closed
