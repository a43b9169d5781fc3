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


class _Answer(dict):  # type: ignore[type-arg]
    """A command's answer that a weak reference can watch (a plain dict cannot)."""


def test_a_commands_future_and_answer_are_forgotten_once_it_is_answered() -> None:
    # workspace/executeCommand is a generator handler: pygls ran the command under a
    # fresh id in _request_futures and never removed it, so every answer stayed.
    import weakref

    from lsprotocol import types as lsp

    server = create_server()
    protocol = server.protocol
    out = _Capture()
    protocol.set_writer(out)
    protocol._initialize_seen = True  # type: ignore[attr-defined]
    answers: list[weakref.ref[_Answer]] = []

    @server.command("test.answer")
    @server.thread()
    def answer(ls: object, *args: object) -> _Answer:
        a = _Answer(lines=["x" * 100] * 1000)
        answers.append(weakref.ref(a))
        return a

    for msg_id in (1, 2, 3):
        protocol.handle_message(
            protocol.structure_message(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "method": lsp.WORKSPACE_EXECUTE_COMMAND,
                    "params": {"command": "test.answer", "arguments": []},
                }
            )
        )
        for _ in range(500):
            protocol.writer.drain()
            if any(m.get("id") == msg_id for m in out.messages):
                break
            threading.Event().wait(0.01)
    assert [m["id"] for m in out.messages] == [1, 2, 3]
    assert all(len(m["result"]["lines"]) == 1000 for m in out.messages)  # type: ignore[index]
    assert protocol._request_futures == {}
    assert len(answers) == 3 and all(ref() is None for ref in answers)
