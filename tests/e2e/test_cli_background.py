"""The background server the CLI starts for an index (server/background.py), as real processes.

``codesift`` runs as separate processes over a generated, indexed workspace (real
LanceDB, real tree-sitter): the first call answers itself and starts the server,
the next ones are answered through it; it stops on ``codesift stop``, after its
idle time, and is replaced after kill -9; one process owns a root's socket; it
never writes the index and never keeps ``codesift index`` waiting; it is off when
asked to be. Waits poll for a state with a generous limit; nothing asserts a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codesift.server.endpoint import address, lock_path, request_meta

from ..conftest import resident_kib, write_workspace
from .rawlsp import RawServer

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "codesift.server.cli"]
VIA_SERVER = "answered by the server"
STARTED = "started a background server"
WAIT_S = 90.0


def env(**changes: str | None) -> dict[str, str]:
    """The test's environment with background servers allowed (conftest turns them off)."""
    out = dict(os.environ)
    out["CODESIFT_BACKGROUND"] = "1"
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def cli(root: Path, *args: str, **changes: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "-vv", *args], cwd=root, env=env(**changes), capture_output=True, text=True, timeout=180
    )


def info(root: Path) -> dict[str, object] | None:
    reply = request_meta(address(root), "info")
    ok = reply.get("ok") if reply else None
    return ok if isinstance(ok, dict) else None


def wait_for_server(root: Path, not_pid: object = None) -> dict[str, object]:
    """The info of the server answering for ``root`` once there is one (other than ``not_pid``)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = info(root)
        if got is not None and got.get("pid") != not_pid:
            return got
        assert time.monotonic() < deadline, f"no server came up for {root}"
        time.sleep(0.1)


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # a child of this test process stays a zombie until reaped
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            if stat.read().split(") ", 1)[1].startswith("Z"):
                return
        assert time.monotonic() < deadline, f"pid {pid} is still running"
        time.sleep(0.1)


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file of ``folder`` with its size and mtime."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[Path]:
    """An indexed workspace; any server left answering for it is killed afterwards."""
    root = write_workspace(tmp_path / "ws").resolve()
    done = subprocess.run(
        [*CLI, "index", str(root), "--no-embed"], env=env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    yield root
    left = info(root)
    if left is not None and left.get("kind") == "background":
        os.kill(int(str(left["pid"])), signal.SIGKILL)


def serve_background(root: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "serve", "--background", str(root), *extra],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_first_call_answers_itself_and_starts_a_server_that_answers_the_next_until_stopped(
    indexed: Path,
) -> None:
    root = indexed
    before = snapshot(root / ".codesift")
    first = cli(root, "symbols", "AuthService")
    assert first.returncode == 0 and "AuthService" in first.stdout
    assert VIA_SERVER not in first.stderr and STARTED in first.stderr
    server = wait_for_server(root)
    assert server["kind"] == "background" and server["root"] == str(root)
    assert server["idle_timeout_s"] == 600.0  # cli.server_idle_s's default
    for question in (("symbols", "AuthService"), ("grep", "password"), ("search", "retry", "--mode", "bm25")):
        through = cli(root, *question)
        alone = cli(root, *question, CODESIFT_NO_SERVER="1")
        assert VIA_SERVER in through.stderr and STARTED not in through.stderr, question
        assert (through.returncode, through.stdout) == (alone.returncode, alone.stdout) == (0, through.stdout)
    status = cli(root, "status", "--json")
    assert json.loads(status.stdout)["server"]["pid"] == server["pid"]
    assert "background, pid" in cli(root, "status").stdout
    assert snapshot(root / ".codesift") == before  # answering never wrote the index

    stopped = cli(root, "stop")
    assert stopped.returncode == 0 and f"pid {server['pid']}" in stopped.stdout
    wait_gone(int(str(server["pid"])))
    assert not address(root).exists() and info(root) is None
    assert json.loads(cli(root, "status", "--json").stdout)["server"] is None
    again = cli(root, "stop")
    assert again.returncode == 1 and "no server" in again.stderr


def test_a_background_server_exits_after_its_idle_time(indexed: Path) -> None:
    proc = serve_background(indexed, "--idle", "1")
    server = wait_for_server(indexed)
    assert server["pid"] == proc.pid and server["idle_timeout_s"] == 1.0
    assert VIA_SERVER in cli(indexed, "grep", "password").stderr
    assert proc.wait(timeout=WAIT_S) == 0
    assert not address(indexed).exists()


def test_a_socket_left_by_kill_9_is_stepped_past_and_replaced_by_the_next_server(indexed: Path) -> None:
    proc = serve_background(indexed, "--idle", "600")
    old = wait_for_server(indexed)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert address(indexed).exists()  # nobody removed it
    after = cli(indexed, "symbols", "login")
    assert after.returncode == 0 and "login" in after.stdout
    assert VIA_SERVER not in after.stderr and STARTED in after.stderr
    new = wait_for_server(indexed, not_pid=old["pid"])
    assert new["kind"] == "background"
    assert VIA_SERVER in cli(indexed, "symbols", "login").stderr


def test_one_owner_per_root_the_second_background_server_loses_cleanly(indexed: Path) -> None:
    first = serve_background(indexed, "--idle", "600")
    owner = wait_for_server(indexed)
    second = serve_background(indexed, "--idle", "600")
    assert second.wait(timeout=WAIT_S) == 0  # lost: exits without touching the socket
    now = info(indexed)
    assert now is not None and {**now, "idle_s": None} == {**owner, "idle_s": None}  # the same owner
    assert first.poll() is None
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=WAIT_S) == 0
    assert not address(indexed).exists()


def test_an_editors_language_server_keeps_the_socket_and_codesift_stop_leaves_it(indexed: Path) -> None:
    editor = RawServer(indexed)
    editor.initialize(indexed)
    editor.wait_indexed()
    try:
        owner = wait_for_server(indexed)
        assert owner["kind"] == "language server" and owner["pid"] == editor.proc.pid
        late = serve_background(indexed, "--idle", "600")
        assert late.wait(timeout=WAIT_S) == 0
        answered = cli(indexed, "symbols", "AuthService")
        assert VIA_SERVER in answered.stderr and STARTED not in answered.stderr
        refused = cli(indexed, "stop")
        assert refused.returncode == 1 and "stops with the editor" in refused.stderr
        assert info(indexed) is not None
    finally:
        editor.close()


def test_codesift_index_runs_beside_a_background_server_whose_answers_follow_it(indexed: Path) -> None:
    proc = serve_background(indexed, "--idle", "600")
    wait_for_server(indexed)
    (indexed / "app" / "billing.py").write_text("def charge_customer(amount):\n    return amount\n")
    update = cli(indexed, "index", str(indexed), "--no-embed", "--no-wait")
    assert update.returncode == 0, update.stderr  # not 3: the server holds no lock on the index
    found = cli(indexed, "symbols", "charge_customer")
    assert VIA_SERVER in found.stderr and "app/billing.py" in found.stdout
    rebuilt = cli(indexed, "index", str(indexed), "--no-embed", "--no-wait", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    (indexed / "app" / "billing.py").write_text("def refund_customer(amount):\n    return -amount\n")
    assert cli(indexed, "index", str(indexed), "--no-embed", "--no-wait").returncode == 0
    after = cli(indexed, "symbols", "refund_customer")
    alone = cli(indexed, "symbols", "refund_customer", CODESIFT_NO_SERVER="1")
    assert VIA_SERVER in after.stderr and after.stdout == alone.stdout and "app/billing.py" in after.stdout
    assert proc.poll() is None


@pytest.mark.parametrize(
    "how",
    ["CODESIFT_BACKGROUND=0", "CI=true", "CODESIFT_NO_SERVER=1", "cli.background_server = false"],
)
def test_no_background_server_when_it_is_turned_off(indexed: Path, how: str) -> None:
    changes: dict[str, str | None] = {}
    if how.startswith("cli."):
        (indexed / ".codesift.toml").write_text("[cli]\nbackground_server = false\n")
    else:
        key, value = how.split("=")
        changes[key] = value
        if key == "CI":
            changes["CODESIFT_BACKGROUND"] = None
    run = cli(indexed, "symbols", "AuthService", **changes)
    assert run.returncode == 0 and "AuthService" in run.stdout
    assert STARTED not in run.stderr
    assert not lock_path(indexed).exists()


def test_grep_where_there_is_no_index_starts_no_server(tmp_path: Path) -> None:
    bare = write_workspace(tmp_path / "bare").resolve()
    run = cli(bare, "grep", "password", "--root", str(bare))
    assert run.returncode == 0 and "password" in run.stdout
    assert STARTED not in run.stderr
    assert not (bare / ".codesift").exists()


def test_the_background_server_unmaps_the_models_weights_once_questions_pause(tmp_path: Path) -> None:
    """Like the language server: after a pause, the bundled model's memory-mapped
    weights leave the process's memory, and the next search answers the same."""
    root = write_workspace(tmp_path / "ws").resolve()
    done = subprocess.run([*CLI, "index", str(root)], env=env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    server = serve_background(root, "--idle", "600")
    try:
        pid = int(str(wait_for_server(root)["pid"]))
        ask = ("search", "check a password against the stored hash", "--mode", "vector", "--json")
        first = cli(root, *ask)
        assert first.returncode == 0 and VIA_SERVER in first.stderr, first.stderr
        hits = [(h["path"], h["score"]) for h in json.loads(first.stdout)["hits"]]
        assert hits
        assert resident_kib(pid, "model.onnx.data")[0] > 0  # the model maps its weights file
        deadline = time.monotonic() + WAIT_S
        while resident_kib(pid, "model.onnx.data")[1] > 0:
            assert time.monotonic() < deadline, "the model's pages were never dropped"
            time.sleep(0.2)
        again = cli(root, *ask)
        assert again.returncode == 0 and VIA_SERVER in again.stderr
        assert [(h["path"], h["score"]) for h in json.loads(again.stdout)["hits"]] == hits
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=WAIT_S)
