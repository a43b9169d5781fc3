"""When ``codesift serve`` replaces itself to run on glibc's malloc (server/allocator.py)."""

from __future__ import annotations

import os

import pytest

from codesift.server import allocator
from codesift.server.allocator import ARROW_POOL, MARK, system_malloc_argv

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


def test_the_replaced_server_keeps_what_was_added_for_it_from_its_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MARK, "PYTHONMALLOC,MALLOC_ARENA_MAX")
    monkeypatch.setenv("PYTHONMALLOC", "malloc")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    monkeypatch.setattr(allocator.os, "execve", lambda *a: pytest.fail("replaced twice"))
    allocator.use_system_malloc()
    assert not {MARK, "PYTHONMALLOC", "MALLOC_ARENA_MAX"} & set(os.environ)


@pytest.mark.parametrize("chosen", [None, "jemalloc"])
def test_the_replaced_server_runs_arrow_on_the_pool_it_was_given_and_its_children_do_not_inherit_it(
    chosen: str | None,
) -> None:
    """pyarrow reads ARROW_DEFAULT_MEMORY_POOL when imported: the replaced server imports it
    before taking what was added for it out of its environment (its index runs keep
    mimalloc); a user's own choice stays in the environment."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in (MARK, ARROW_POOL)}
    env |= {MARK: ARROW_POOL, ARROW_POOL: "system"} if chosen is None else {ARROW_POOL: chosen}
    code = (
        "import os; from codesift.server import allocator; allocator.use_system_malloc(); "
        "import pyarrow as pa; "
        "print(pa.default_memory_pool().backend_name, os.environ.get(allocator.ARROW_POOL))"
    )
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    pool, inherited = got.stdout.split()
    assert (pool, inherited) == (("system", "None") if chosen is None else (chosen, chosen))


@pytest.mark.parametrize(("arenas", "pool"), [(None, None), ("8", "mimalloc")])
def test_the_replacement_adds_glibc_malloc_one_arena_and_arrow_on_it_unless_the_user_set_them(
    monkeypatch: pytest.MonkeyPatch, arenas: str | None, pool: str | None
) -> None:
    for name in (MARK, "PYTHONMALLOC", "MALLOC_ARENA_MAX", "ARROW_DEFAULT_MEMORY_POOL"):
        monkeypatch.delenv(name, raising=False)
    if arenas is not None:
        monkeypatch.setenv("MALLOC_ARENA_MAX", arenas)
    if pool is not None:
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", pool)
    monkeypatch.setattr(allocator.sys, "argv", SERVE)
    monkeypatch.setattr(allocator.sys, "orig_argv", ORIG)
    monkeypatch.setattr(allocator.sys, "platform", "linux")
    seen: list[tuple[str, list[str], dict[str, str]]] = []
    monkeypatch.setattr(allocator.os, "execve", lambda path, argv, env: seen.append((path, argv, env)))
    allocator.use_system_malloc()
    [(path, argv, env)] = seen
    assert path == allocator.sys.executable and argv == ORIG and env["PYTHONMALLOC"] == "malloc"
    assert env["MALLOC_ARENA_MAX"] == (arenas or "1")
    assert env["ARROW_DEFAULT_MEMORY_POOL"] == (pool or "system")
    assert env[MARK] == (
        "PYTHONMALLOC" if arenas else "PYTHONMALLOC,MALLOC_ARENA_MAX,ARROW_DEFAULT_MEMORY_POOL"
    )
