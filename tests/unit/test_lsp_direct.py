"""Requests answered directly from their JSON: the frames pygls would send, every copy
answered once its shared computation is done, cancelling one copy leaves the others."""

from __future__ import annotations

import json
from concurrent.futures import Future
from typing import Any

from lsprotocol import types as lsp

from codesift.server.features.workspace_symbol import _query_of
from codesift.server.lsp import create_server
from codesift.server.protocol import Direct, Part, Serialized

from .test_lsp_serialized import _Raw


class _Capture(_Raw):
    """Collects what the protocol writes (a fake transport: unit test only), as messages."""

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(f.split(b"\r\n\r\n", 1)[1]) for f in self.frames]


def _request(msg_id: object, query: object, **extra: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "test/direct", "params": {"query": query, **extra}}


def _protocol(serve: Any) -> tuple[Any, _Capture]:
    protocol = create_server().protocol
    out = _Capture()
    protocol.set_writer(out)
    protocol._initialize_seen = True
    protocol.answer_directly("test/direct", Direct(_query_of, serve))
    return protocol, out


def _send(protocol: Any, message: dict[str, object]) -> None:
    protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))


def test_copies_are_answered_together_once_computed_and_a_cancelled_copy_alone_is_refused() -> None:
    shared: Future[Serialized] = Future()
    calls: list[str] = []

    def serve(query: str) -> list[Part]:
        calls.append(query)
        return [Serialized('[{"name": "a"}]'), shared]

    protocol, out = _protocol(serve)
    for msg_id in (1, "two", 3):
        _send(protocol, _request(msg_id, "q"))
    assert calls == ["q", "q", "q"] and out.frames == []
    assert set(protocol._request_futures) == {1, "two", 3}
    protocol._handle_cancel_notification("two")
    protocol.writer.drain()
    assert out.messages() == [
        {
            "id": "two",
            "error": {"code": -32800, "message": 'Request with id "two" is canceled'},
            "jsonrpc": "2.0",
        }
    ]
    shared.set_result(Serialized('[{"name": "b"}]'))  # no event loop here: answered at once
    protocol.writer.drain()
    answers = out.messages()[1:]
    assert [m["id"] for m in answers] == [1, 3]
    assert all(m["result"] == [{"name": "a"}, {"name": "b"}] for m in answers)
    assert protocol._request_futures == {} and protocol._waiting == {}
    # each frame is whole and counted in bytes, as pygls frames it
    for frame in out.frames:
        header, body = frame.split(b"\r\n\r\n", 1)
        assert header.startswith(b"Content-Length: %d\r\n" % len(body))


def test_a_direct_answer_is_the_frame_pygls_sends_for_the_same_result() -> None:
    text = '[{"name": "x", "kind": 12}]'
    protocol, out = _protocol(lambda query: [Serialized(text)])
    _send(protocol, _request(5, "x"))
    protocol._result_types[6] = lsp.WorkspaceSymbolResponse
    protocol._send_response(6, result=Serialized(text))  # the path a pygls handler's Serialized takes
    protocol.writer.drain()
    first, second = out.frames
    assert first == second.replace(b'"id": 6', b'"id": 5')


def test_a_failed_computation_is_answered_as_a_failed_handler_is() -> None:
    shared: Future[Serialized] = Future()
    protocol, out = _protocol(lambda query: [shared])
    _send(protocol, _request(1, "q"))
    shared.set_exception(RuntimeError("boom"))
    protocol.writer.drain()
    (answer,) = out.messages()
    assert answer["id"] == 1 and answer["error"]["code"] == -32603 and "boom" in answer["error"]["message"]


def test_a_cancelled_computation_is_answered_request_cancelled() -> None:
    shared: Future[Serialized] = Future()
    protocol, out = _protocol(lambda query: [shared])
    _send(protocol, _request(1, "q"))
    shared.cancel()
    protocol.writer.drain()
    (answer,) = out.messages()
    assert answer["id"] == 1 and answer["error"]["code"] == -32800


def test_what_the_direct_path_does_not_read_goes_the_pygls_way() -> None:
    protocol = create_server().protocol
    assert lsp.WORKSPACE_SYMBOL in protocol._direct  # workspace/symbol is answered directly

    def made(message: dict[str, object]) -> str:
        return type(json.loads(json.dumps(message), object_hook=protocol.structure_message)).__name__

    symbol = {"jsonrpc": "2.0", "id": 1, "method": lsp.WORKSPACE_SYMBOL}
    assert made({**symbol, "params": {"query": "x"}}) == "_DirectRequest"
    assert made({**symbol, "params": {"query": "x", "partialResultToken": "t"}}) == "_DirectRequest"
    for params in ({"query": 5}, {}, [1], {"query": "x", "other": 1}, {"query": "x", "workDoneToken": [1]}):
        assert made({**symbol, "params": params}) != "_DirectRequest", params
    assert made({**symbol, "id": [1], "params": {"query": "x"}}) != "_DirectRequest"
    assert made({**symbol, "jsonrpc": "1.0", "params": {"query": "x"}}) != "_DirectRequest"
