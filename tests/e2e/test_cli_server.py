"""The CLI answers through a real running ``codesift serve`` and prints what it prints alone.

A server process over a generated workspace publishes its CLI socket; ``codesift
search / grep / symbols`` run as separate processes, once through the server and
once with ``CODESIFT_NO_SERVER=1`` (in-process), and must print the same bytes,
exit with the same codes, and fall back when the server is killed with -9.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codesift.server.endpoint import NO_SERVER_ENV, address
from codesift.server.thin import FAST_EXIT_ENV, THIN_ENV

from ..conftest import write_workspace
from .rawlsp import RawServer

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "codesift.server.cli"]
VIA_SERVER = "answered by the server"


def cli(root: Path, *args: str, server: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if not server:
        env[NO_SERVER_ENV] = "1"
    return subprocess.run(
        [*CLI, "-vv", *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def started(root: Path) -> RawServer:
    server = RawServer(root)
    server.initialize(root)
    server.wait_indexed()
    deadline = time.monotonic() + 30
    while not address(root.resolve()).exists():
        assert time.monotonic() < deadline, "the server published no CLI socket"
        time.sleep(0.05)
    return server


def without_timings(value: object) -> object:
    """A JSON answer minus its wall-clock figures (they differ between any two runs)."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k != "millis"}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


QUESTIONS = [
    ("search", "check the password of a user"),
    ("search", "retry upload", "--mode", "bm25", "--limit", "3"),
    ("search", "parse config", "--files"),
    ("grep", "password"),
    ("grep", "def \\w+", "--regex", "-C", "2"),
    ("symbols", "AuthService"),
    ("symbols", "login"),
]


def test_cli_answers_through_a_running_server_exactly_as_in_process(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    server = started(root)
    try:
        for question in QUESTIONS:
            remote, local = cli(root, *question), cli(root, *question, server=False)
            assert VIA_SERVER in remote.stderr, (question, remote.stderr[-2000:])
            assert VIA_SERVER not in local.stderr
            assert (remote.returncode, remote.stdout) == (local.returncode, local.stdout), question
            assert remote.returncode == 0 and remote.stdout, question
            remote_json, local_json = (
                cli(root, *question, "--json"),
                cli(root, *question, "--json", server=False),
            )
            assert VIA_SERVER in remote_json.stderr
            assert without_timings(json.loads(remote_json.stdout)) == without_timings(
                json.loads(local_json.stdout)
            )
    finally:
        server.close()


def test_errors_and_empty_answers_through_the_server_end_the_cli_as_in_process(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    server = started(root)
    try:
        for question in (
            ("symbols", "NoSuchNameAnywhere"),  # nothing found: exit 1
            ("grep", "no-such-text-anywhere"),
            ("search", "x", "--kind", "nonsense"),  # a usage error: exit 2
            ("search", "x", "--limit", "100000000"),  # out of bounds: exit 2 with the engine's reason
            ("grep", "(", "--regex"),  # a bad pattern
        ):
            remote, local = cli(root, *question), cli(root, *question, server=False)
            assert VIA_SERVER in remote.stderr, question
            assert remote.returncode == local.returncode != 0, (question, remote.stderr[-1500:])
            assert remote.stdout == local.stdout
            last = [line for line in local.stderr.splitlines() if not line.startswith("DEBUG")][-1]
            assert last in remote.stderr, (question, last)
    finally:
        server.close()


def test_a_killed_server_leaves_a_stale_socket_the_cli_steps_past_and_the_next_server_replaces(
    tmp_path: Path,
) -> None:
    root = write_workspace(tmp_path / "ws")
    first = started(root)
    expected = cli(root, "symbols", "AuthService", server=False)
    os.kill(first.proc.pid, signal.SIGKILL)
    first.proc.wait()
    assert address(root.resolve()).exists()  # nobody removed it
    after = cli(root, "symbols", "AuthService")
    assert VIA_SERVER not in after.stderr
    assert (after.returncode, after.stdout) == (0, expected.stdout)
    second = started(root)
    try:
        again = cli(root, "symbols", "AuthService")
        assert VIA_SERVER in again.stderr
        assert again.stdout == expected.stdout
    finally:
        second.close()
    assert not address(root.resolve()).exists()  # a clean exit removes it


def entry(root: Path, *args: str, thin: bool) -> tuple[subprocess.CompletedProcess[str], bool]:
    """``codesift ARGS`` through the installed entry point (server/thin.py), the thin path
    on or off (``CODESIFT_THIN=0``: the click command); also whether click was imported."""
    code = (
        "import sys\nfrom codesift.server.thin import main\n"
        f"sys.argv = ['codesift', *{list(args)!r}]\n"
        "try:\n    main()\nfinally:\n    sys.stderr.write('\\nCLICK=%s' % ('click' in sys.modules))"
    )
    env = {**os.environ, THIN_ENV: "1" if thin else "0", FAST_EXIT_ENV: "0"}  # `finally` runs
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    stderr, _, flag = run.stderr.rpartition("\nCLICK=")
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout, stderr), flag == "True"


def without_millis(stderr: str) -> str:
    """stderr minus the tally's time (it differs between any two answers)."""
    return re.sub(r"; \d+ ms$", "", stderr, flags=re.MULTILINE)


def test_the_thin_path_prints_what_the_click_command_prints_without_importing_click(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    server = started(root)
    try:
        for question in [
            *QUESTIONS,
            *[(*q, "--json") for q in QUESTIONS],
            ("symbols", "NoSuchNameAnywhere"),  # nothing found: exit 1
            ("grep", "no-such-text-anywhere"),
            ("grep", "(", "--regex"),  # the engine's error: exit 2
            ("search", "x", "--limit", "100000000"),
        ]:
            thin, thin_click = entry(root, *question, thin=True)
            full, full_click = entry(root, *question, thin=False)
            assert not thin_click and full_click, question
            assert thin.returncode == full.returncode, question
            if "--json" in question:  # the same bytes, timings aside
                assert json.dumps(without_timings(json.loads(thin.stdout)), indent=2) == json.dumps(
                    without_timings(json.loads(full.stdout)), indent=2
                )
                assert thin.stdout.count("\n") == full.stdout.count("\n")
                continue
            assert thin.stdout == full.stdout, question
            assert without_millis(thin.stderr) == without_millis(full.stderr), question
        for question in (
            ("grep", "password", "--no-such-option"),  # click's "No such option", exit 2
            ("search", "x", "--kind", "nonsense"),  # a usage error the server reports
            ("symbols", "--help"),
            ("symbols", "AuthService", "--root", str(root / "no-such-folder")),
        ):
            thin, thin_click = entry(root, *question, thin=True)
            full, _ = entry(root, *question, thin=False)
            assert thin_click, f"{question} falls back to the click command"
            assert (thin.returncode, thin.stdout, thin.stderr) == (full.returncode, full.stdout, full.stderr)
    finally:
        server.close()
