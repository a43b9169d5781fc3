"""The LSP lifecycle the specification fixes, over a real server process and raw bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from .rawlsp import RawServer

pytestmark = pytest.mark.slow

SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "auth.py").write_text("def login(user):\n    return user\n")
    return root


def error_code(answer: dict[str, object]) -> object:
    error = answer.get("error")
    return error.get("code") if isinstance(error, dict) else None


def test_requests_before_initialize_get_server_not_initialized_and_initialize_still_works(ws: Path) -> None:
    server = RawServer(ws)
    try:
        assert error_code(server.response(server.request("workspace/symbol", {"query": "login"}))) == (
            SERVER_NOT_INITIALIZED
        )
        assert error_code(server.response(server.request("shutdown"))) == SERVER_NOT_INITIALIZED
        server.notify("workspace/didChangeConfiguration", {"settings": {}})  # dropped, no answer
        answer = server.initialize(ws)
        assert "capabilities" in answer["result"]  # type: ignore[operator]
    finally:
        server.close()


def test_a_second_initialize_gets_invalid_request(ws: Path) -> None:
    server = RawServer(ws)
    try:
        server.initialize(ws)
        again = server.request("initialize", {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}})
        assert error_code(server.response(again)) == INVALID_REQUEST
        assert "result" in server.response(server.request("workspace/symbol", {"query": "login"}))
    finally:
        server.close()


def test_requests_after_shutdown_get_invalid_request_and_exit_ends_the_process(ws: Path) -> None:
    server = RawServer(ws)
    server.initialize(ws)
    running = [server.request("workspace/symbol", {"query": f"login{i}"}) for i in range(20)]
    answer = server.response(server.request("shutdown"))
    assert "result" in answer and answer["result"] is None, answer  # while requests still run
    late = server.request("workspace/symbol", {"query": "login"})
    assert error_code(server.response(late)) == INVALID_REQUEST
    for msg_id in running:
        server.response(msg_id)  # each answered: a result, or RequestCancelled
    server.notify("exit")
    assert server.proc.wait(timeout=20) == 0
    assert b"Traceback" not in server.stderr


def test_malformed_cancel_requests_and_junk_notifications_leave_no_traceback(ws: Path) -> None:
    server = RawServer(ws)
    try:
        server.initialize(ws)
        for params in ({"id": [1, 2]}, {"id": {"x": 1}}, {"idx": 3}, None, [1], "x"):
            server.notify("$/cancelRequest", params)
        server.notify("textDocument/didOpen", {"textDocument": 5})
        server.send({"jsonrpc": "2.0", "id": [7], "method": "workspace/symbol", "params": {"query": "x"}})
        server.send({"jsonrpc": "2.0", "method": "no/such/notification", "params": {}})
        for body in ({}, [1], 7, None, "x", {"method": "initialized"}):  # not JSON-RPC 2.0 at all
            server.send(body)
        assert "result" in server.response(server.request("workspace/symbol", {"query": "login"}))
    finally:
        server.close()
    assert b"Traceback" not in server.stderr, bytes(server.stderr[-3000:])


OUT_OF_RANGE = [
    ("codesift.search", {"query": "login", "limit": 1e9}),
    ("codesift.search", {"query": "login", "limit": 1_000_000_000}),
    ("codesift.search", {"query": "login", "limit": 2**70}),
    ("codesift.search", {"query": "login", "limit": -1}),
    ("codesift.search", {"query": "login", "hops": 1_000_000}),
    ("codesift.grep", {"pattern": "login", "context": 1_000_000_000}),
    ("codesift.grep", {"pattern": "login", "maxMatches": 2**70}),
    ("codesift.symbols", {"query": "login", "limit": 2**40}),
    ("codesift.symbols", {"query": "login", "limit": 1_000_000}),
    ("codesift.research", {"question": "what calls login", "depth": 1_000_000_000}),
]


def test_out_of_range_options_get_invalid_params(ws: Path) -> None:
    server = RawServer(ws)
    try:
        server.initialize(ws)
        server.wait_indexed()
        for command, options in OUT_OF_RANGE:
            request = server.request("workspace/executeCommand", {"command": command, "arguments": [options]})
            assert error_code(server.response(request)) == INVALID_PARAMS, (command, options)
    finally:
        server.close()
    assert b"Traceback" not in server.stderr, bytes(server.stderr[-3000:])
