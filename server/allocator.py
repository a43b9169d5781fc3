"""The server process runs its Python objects on glibc's malloc, not Python's own.

Python's allocator (pymalloc) takes memory in 1 MiB arenas and hands an arena back only
when every object in it is gone. The server's symbol index and graph are millions of
small objects; when it drops them after idling, the few objects made meanwhile (answers,
lines, settings) pin most arenas: on the 102k-chunk stdlib index ~100 MiB of pymalloc
arenas stayed resident with ~45 MiB of live objects in them. On glibc's malloc the same
objects cost a little more while held (a 16-byte header each: +16-27 MiB with both
indexes loaded) and building them ~15-25% more CPU, but ``malloc_trim`` hands back every
free page: in the probe an idle server kept 515 -> 441-477 MiB, and with at most two malloc
arenas 421 (docs/DECISIONS.md, "language server memory"; one arena since session 20).
Only ``codesift serve`` does this: the CLI's short commands and the index runs it starts
keep pymalloc.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: set for the re-executed server: the variables added for it, which it takes out of its
#: environment again (its children, e.g. index runs, keep pymalloc and glibc's defaults)
MARK = "CODESIFT_SYSTEM_MALLOC"
#: glibc's malloc arenas of an index run (its default is 8 a core): each of LanceDB's
#: runtime threads allocating in an arena of its own left free memory in one that another
#: could not reuse
ARENAS = 2
#: ...and of the re-executed server: one. With two, the server's threads (pygls workers,
#: LanceDB's runtime) moved between them as they met the other's lock, and what a probe
#: of every request type left resident varied by ~25 MiB from run to run (378-403 MiB on
#: the stdlib); with one, 377-378 in three runs, and hybrid over LSP as fast (p50 28-37
#: against 31-38 ms, server CPU per search the same; docs/DECISIONS.md, session 20)
SERVER_ARENAS = 1
#: Arrow's pool for the re-executed server, unless the user chose one: glibc's heap, which
#: ``malloc_trim`` hands back. Arrow's default, mimalloc, kept a 4 MiB segment resident of
#: buffers long freed (the server's Arrow buffers are LanceDB's answers, a few rows each;
#: docs/DECISIONS.md, session 20). pyarrow reads the variable when it is imported, so the
#: replaced server imports it before taking the variable out of its children's environment
#: (setting the pool after the import was too late: the import had started mimalloc).
ARROW_POOL = "ARROW_DEFAULT_MEMORY_POOL"


def limit_arenas_for_index_run() -> None:
    """At most ``ARENAS`` malloc arenas for the rest of this process (``mallopt``, before
    LanceDB's threads start), unless the user set ``MALLOC_ARENA_MAX``: an index run's
    vectors phase left freed memory in arenas of their own (stdlib peak 1,217 → 915 MiB;
    docs/DECISIONS.md, "index memory"). For ``codesift index`` and the server's child run."""
    from codesift.indexer.heap import limit_malloc_arenas

    if "MALLOC_ARENA_MAX" not in os.environ:  # the user's choice stands
        limit_malloc_arenas(ARENAS)


def system_malloc_argv(
    environ: Mapping[str, str], argv: Sequence[str], orig_argv: Sequence[str], platform: str
) -> list[str] | None:
    """The command line that runs this server again on glibc's malloc, or None: not on
    Linux, already re-executed, the user chose an allocator (``PYTHONMALLOC`` set; ``pymalloc``
    keeps Python's), or this process was not started as ``codesift serve`` (a test calling
    the command in-process must never be replaced)."""
    if not platform.startswith("linux") or MARK in environ or "PYTHONMALLOC" in environ:
        return None
    command = next((a for a in argv[1:] if not a.startswith("-")), None)
    started_as_server = bool(argv) and Path(argv[0]).name in ("codesift", "cli.py") and command == "serve"
    if not started_as_server or not orig_argv:
        return None
    return list(orig_argv)


def use_system_malloc() -> None:
    """Replace this process (same pid, same stdin and stdout) by itself on glibc's malloc,
    with at most ``SERVER_ARENAS`` malloc arenas unless the user set ``MALLOC_ARENA_MAX`` and Arrow
    on the same heap unless the user chose its pool (``ARROW_DEFAULT_MEMORY_POOL``), when
    ``system_malloc_argv`` says so; in the replaced process, keep what was set out of what
    its children inherit. Returns only when no replacement happens."""
    was_set = os.environ.pop(MARK, None)
    if was_set is not None:
        names = was_set.split(",")
        if ARROW_POOL in names:
            import pyarrow  # noqa: F401  (reads it now; the server imports it with LanceDB anyway)
        for name in names:
            os.environ.pop(name, None)
        return
    argv = system_malloc_argv(os.environ, sys.argv, sys.orig_argv, sys.platform)
    if argv is None:
        return
    added = {"PYTHONMALLOC": "malloc"}
    if "MALLOC_ARENA_MAX" not in os.environ:
        added["MALLOC_ARENA_MAX"] = str(SERVER_ARENAS)
    if ARROW_POOL not in os.environ:
        added[ARROW_POOL] = "system"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, {**os.environ, **added, MARK: ",".join(added)})
