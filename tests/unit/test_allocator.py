"""When ``codesift serve`` replaces itself to run on glibc's malloc (server/allocator.py)."""

from __future__ import annotations

import os

import pytest

from codesift.server import allocator
from codesift.server.allocator import MARK, system_malloc_argv

SERVE = ["/venv/bin/codesift", "serve"]
ORIG = ["/venv/bin/python3", "/venv/bin/codesift", "serve"]


def test_a_server_started_as_codesift_serve_on_linux_runs_again_with_its_own_command_line() -> None:
    assert system_malloc_argv({}, SERVE, ORIG, "linux") == ORIG
    assert system_malloc_argv({}, ["/venv/bin/codesift", "-v", "serve"], ORIG, "linux") == ORIG
    as_module = ["/src/server/cli.py", "serve", "--tcp", "127.0.0.1:9000"]
    orig = ["python", "-m", "codesift.server.cli", "serve", "--tcp", "127.0.0.1:9000"]
    assert system_malloc_argv({}, as_module, orig, "linux") == orig


@pytest.mark.parametrize(
    ("environ", "argv", "platform"),
    [
        ({MARK: "1"}, SERVE, "linux"),  # already replaced: never loops
        ({"PYTHONMALLOC": "pymalloc"}, SERVE, "linux"),  # the user chose an allocator
        ({}, SERVE, "darwin"),
        ({}, ["/venv/bin/codesift", "search", "serve"], "linux"),  # not the server
        ({}, ["/venv/bin/pytest", "-k", "serve"], "linux"),  # a test calling serve in-process
    ],
)
def test_no_replacement_when_already_done_chosen_elsewhere_or_not_a_server(
    environ: dict[str, str], argv: list[str], platform: str
) -> None:
    assert system_malloc_argv(environ, argv, ORIG, platform) is None


def test_the_replaced_server_keeps_pythonmalloc_from_its_children(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MARK, "1")
    monkeypatch.setenv("PYTHONMALLOC", "malloc")
    monkeypatch.setattr(allocator.os, "execve", lambda *a: pytest.fail("replaced twice"))
    allocator.use_system_malloc()
    assert MARK not in os.environ and "PYTHONMALLOC" not in os.environ
