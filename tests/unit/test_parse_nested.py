"""Definitions inside module- and class-level blocks (if / try / with / for / while) are symbols."""

from __future__ import annotations

import textwrap

from codesift.indexer.model import ChunkKind, SymbolKind
from codesift.indexer.parse import parse_file
from codesift.indexer.settings import ChunkSettings

SOURCE = textwrap.dedent(
    """
    import sys

    if sys.platform == "win32":
        def spawnlp(mode, file, *args):
            return spawn(mode, file, args)
    elif sys.platform == "darwin":
        def spawn_darwin():
            return 1
    else:
        class UnixStreamServer:
            def serve(self):
                return spawnlp(0, "x")

    try:
        from _ctypes import find_library
    except ImportError:
        def find_library(name):
            return None
    finally:
        TRIED = True

    with open(__file__) as fh:
        HEADER = fh.readline()

    for _name in ("a", "b"):
        def helper():
            return _name

    while False:
        def never():
            pass

    class Holder:
        if sys.version_info >= (3, 12):
            def modern(self):
                return 1
    """
).lstrip()


def test_module_level_definitions_inside_if_try_with_for_while_are_symbols_chunks_and_callers() -> None:
    result = parse_file("nested.py", SOURCE, "python", project="p", settings=ChunkSettings())
    symbols = {s.qualified_name: s.kind for s in result.symbols}
    assert symbols["spawnlp"] is SymbolKind.FUNCTION
    assert symbols["spawn_darwin"] is SymbolKind.FUNCTION
    assert symbols["UnixStreamServer"] is SymbolKind.CLASS
    assert symbols["UnixStreamServer.serve"] is SymbolKind.METHOD
    assert symbols["find_library"] is SymbolKind.FUNCTION
    assert symbols["TRIED"] is SymbolKind.CONSTANT and symbols["HEADER"] is SymbolKind.CONSTANT
    assert symbols["helper"] is SymbolKind.FUNCTION and symbols["never"] is SymbolKind.FUNCTION
    assert symbols["Holder.modern"] is SymbolKind.METHOD
    functions = {c.symbol for c in result.chunks if c.kind is ChunkKind.FUNCTION}
    assert {"spawnlp", "find_library", "helper"} <= functions
    # The call inside the nested class is credited to its method, not to the module.
    calls = {(e.from_symbol, e.to_name) for e in result.edges if e.kind.value == "call"}
    assert ("UnixStreamServer.serve", "spawnlp") in calls and ("spawnlp", "spawn") in calls
