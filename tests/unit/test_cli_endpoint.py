"""The CLI's socket to a running server (server/endpoint.py), in one process: a listener
thread stands in for the server; tests/e2e/test_cli_server.py runs a real one."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from codesift.indexer.model import SymbolKind
from codesift.indexer.search.names import SymbolMatch
from codesift.server import endpoint
from codesift.server.cli_print import MEMBER_MATCH, SYMBOL_KINDS
from codesift.server.endpoint import Endpoint, address, ask


def echo(command: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"ok": {"command": command, "args": args, "thread": threading.current_thread().name}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder.resolve()


def test_the_cli_printing_tables_match_the_engine_enums() -> None:
    assert SymbolMatch.MEMBER == MEMBER_MATCH
    assert [k.name.lower() for k in sorted(SymbolKind)] == SYMBOL_KINDS
    assert [k.value for k in sorted(SymbolKind)] == list(range(1, len(SYMBOL_KINDS) + 1))


def test_a_published_socket_answers_and_is_private_to_its_user(root: Path) -> None:
    server = Endpoint(root, echo)
    assert server.open()
    try:
        path = address(root)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        reply = ask(root, "search", {"query": "x", "include": ["a/**"]})
        assert reply is not None
        assert reply["ok"]["command"] == "search"
        assert reply["ok"]["args"] == {"query": "x", "include": ["a/**"]}
    finally:
        server.close()
    assert not address(root).exists()
    assert ask(root, "search", {}) is None


def test_no_server_means_none_and_the_cli_answers_itself(root: Path) -> None:
    assert ask(root, "grep", {"pattern": "x"}) is None


def test_a_stale_socket_is_refused_quietly_and_replaced_by_the_next_server(root: Path) -> None:
    path = address(root)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))  # a server killed with -9 leaves its file behind
    dead.close()
    assert path.exists()
    assert ask(root, "symbols", {"name": "x"}) is None
    server = Endpoint(root, echo)
    assert server.open()
    try:
        assert ask(root, "symbols", {"name": "x"}) is not None
    finally:
        server.close()


def test_a_second_server_leaves_a_live_socket_to_the_first(root: Path) -> None:
    first, second = Endpoint(root, echo), Endpoint(root, lambda c, a: {"ok": "second"})
    assert first.open()
    try:
        assert not second.open()
        second.close()  # must not remove the first one's socket
        reply = ask(root, "grep", {})
        assert reply is not None and reply["ok"]["command"] == "grep"
    finally:
        first.close()


def test_a_server_running_other_code_refuses_and_the_cli_answers_itself(root: Path) -> None:
    server = Endpoint(root, echo)
    server._version = "some-other-build"
    assert server.open()
    try:
        assert ask(root, "search", {"query": "x"}) is None
        assert server._answer(b'{"protocol": 1, "version": "x", "args": {}}')["refused"].startswith(
            "this server is codesift some-other-build"
        )
    finally:
        server.close()


def test_a_server_for_another_root_or_junk_is_refused(root: Path) -> None:
    server = Endpoint(root, echo)
    request = {"protocol": endpoint.PROTOCOL, "version": server._version, "root": "/elsewhere", "args": {}}
    assert "answers for" in server._answer(json.dumps(request).encode())["refused"]
    assert server._answer(b"not json")["refused"] == "not JSON"
    assert server._answer(b"[1, 2]")["refused"] == "not a request"


def test_a_folder_others_can_enter_is_never_used(root: Path) -> None:
    folder = address(root).parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    server = Endpoint(root, echo)
    assert not server.open()
    assert ask(root, "search", {}) is None


def test_concurrent_cli_calls_are_each_answered(root: Path) -> None:
    server = Endpoint(root, echo)
    assert server.open()
    replies: list[dict[str, Any] | None] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        got = ask(root, "grep", {"pattern": f"p{i}"})
        with lock:
            replies.append(got)

    try:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.close()
    assert len(replies) == 40 and all(r is not None for r in replies)
    assert sorted(r["ok"]["args"]["pattern"] for r in replies if r) == sorted(f"p{i}" for i in range(40))


def test_codesift_no_server_skips_a_running_server(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Endpoint(root, echo)
    assert server.open()
    try:
        monkeypatch.setenv(endpoint.NO_SERVER_ENV, "1")
        assert ask(root, "search", {}) is None
    finally:
        server.close()


def test_an_answer_from_a_server_loads_neither_the_engine_nor_rich(root: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    payload = {
        "index_root": str(root),
        "symbols": [
            {
                "symbol": {
                    "qualified_name": "Auth.login",
                    "kind": 6,
                    "path": "app/auth.py",
                    "selection_range": {"start": {"line": 3, "column": 4}, "end": {"line": 3, "column": 9}},
                },
                "match": MEMBER_MATCH,
                "score": 1.0,
            }
        ],
    }
    server = Endpoint(root, lambda command, args: {"ok": payload})
    assert server.open()
    modules = tmp_path / "modules.txt"
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(modules)!r}, 'w').write('\\n'.join(sys.modules)))\n"
        "from codesift.server.cli import main\n"
        f"sys.argv = ['codesift', 'symbols', 'login', '--root', {str(root)!r}]\n"
        "main()\n"
    )
    try:
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    finally:
        server.close()
    assert run.returncode == 0, run.stderr
    assert run.stdout == "    Auth.login method app/auth.py:3\n"
    loaded = set(modules.read_text().split())
    assert (
        not {"rich", "lancedb", "pyarrow", "numpy", "codesift.indexer.store", "codesift.indexer.model"}
        & loaded
    )


def test_the_lock_not_the_socket_file_decides_the_owner(root: Path) -> None:
    first = Endpoint(root, echo)
    assert first.open()
    try:
        address(root).unlink()  # even with its file gone, the owner keeps the root
        second = Endpoint(root, echo)
        assert not second.open()
        second.close()
    finally:
        first.close()
    third = Endpoint(root, echo)
    assert third.open()  # the lock went with the first
    third.close()


def test_info_and_stop_answer_whatever_the_code_version(root: Path) -> None:
    stopped = threading.Event()
    server = Endpoint(root, echo, kind=endpoint.BACKGROUND, idle_timeout_s=5.0, on_stop=stopped.set)
    server._version = "some-other-build"
    assert server.open()
    try:
        about = endpoint.request_meta(address(root), "info")
        assert about is not None and about["ok"]["kind"] == "background"
        assert about["ok"]["pid"] == os.getpid() and about["ok"]["idle_timeout_s"] == 5.0
        assert not stopped.is_set()
        reply = endpoint.request_meta(address(root), "stop")
        assert reply is not None and reply["stopping"] is True
        assert stopped.wait(30)  # called once the reply is out
    finally:
        server.close()


def test_an_editors_server_refuses_to_stop(root: Path) -> None:
    server = Endpoint(root, echo)
    assert server.open()
    try:
        reply = endpoint.request_meta(address(root), "stop")
        assert reply is not None and "stops with the editor" in reply["refused"]
        assert ask(root, "grep", {}) is not None  # still answering
    finally:
        server.close()


def test_a_background_server_whose_code_changed_on_disk_says_so_and_stops(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = threading.Event()
    server = Endpoint(root, echo, kind=endpoint.BACKGROUND, on_stop=stopped.set)
    assert server.open()
    try:
        monkeypatch.setattr(endpoint, "version", lambda: "the-new-build")  # the CLI's and the disk's
        reply, outcome = endpoint.consult(root, "grep", {})
        assert reply is None and outcome == "absent"  # the CLI may start a new one
        assert stopped.wait(30)
    finally:
        server.close()


def test_consult_tells_no_server_from_a_refusal(root: Path) -> None:
    assert endpoint.consult(root, "grep", {}) == (None, "absent")
    server = Endpoint(root, lambda c, a: {"refused": "not this"})
    assert server.open()
    try:
        assert endpoint.consult(root, "grep", {}) == (None, "refused")
    finally:
        server.close()
    assert endpoint.consult(root, "grep", {}) == (None, "absent")


def test_grep_json_is_the_grep_result_field_by_field() -> None:
    from codesift.indexer.search.passages import GrepResult, Passage
    from codesift.server.cli_common import to_jsonable
    from codesift.server.cli_search import grep_json

    passage = Passage("a/b.py", 1, 3, (2,), "x\nneedle\ny", ((2, 8),))
    result = GrepResult((passage,), files=1, matches=1, truncated=True, reason="why", millis=1.5)
    assert grep_json(result) == to_jsonable(result)
