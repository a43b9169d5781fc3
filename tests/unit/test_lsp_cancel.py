"""$/cancelRequest for a request already running in a worker thread is answered at once."""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from codesift.server.lsp import create_server


class _Capture:
    """Collects what the protocol writes (a fake transport: unit test only)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, object]] = []

    def write(self, data: bytes) -> None:
        body = data.decode().split("\r\n\r\n", 1)[-1]
        self.messages.append(json.loads(body))

    def close(self) -> None:
        return None


def test_cancel_of_a_running_request_answers_request_cancelled_at_once_and_drops_the_late_result() -> None:
    server = create_server()
    protocol = server.protocol
    out = _Capture()
    protocol.set_writer(out)
    release = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        running: Future[object] = pool.submit(lambda: release.wait(10) and {"late": True})
        while not running.running():
            pass
        protocol._request_futures[7] = running
        running.add_done_callback(lambda f: protocol._send_handler_result(f, msg_id=7))
        protocol._handle_cancel_notification(7)
        protocol.writer.drain()
        assert [m["error"]["code"] for m in out.messages] == [-32800]  # type: ignore[index]
        release.set()
    protocol.writer.drain()
    assert len(out.messages) == 1  # the late result was not sent


def test_cancel_of_a_request_not_yet_started_is_left_to_pygls() -> None:
    server = create_server()
    protocol = server.protocol
    out = _Capture()
    protocol.set_writer(out)
    pending: Future[object] = Future()
    protocol._request_futures[8] = pending
    pending.add_done_callback(lambda f: protocol._send_handler_result(f, msg_id=8))
    protocol._handle_cancel_notification(8)
    protocol.writer.drain()
    assert pending.cancelled()
    assert [m["error"]["code"] for m in out.messages] == [-32800]  # type: ignore[index]
