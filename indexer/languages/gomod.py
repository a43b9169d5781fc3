"""``go.mod``: the module path its ``module`` line declares, as a symbol of the file.

The reference graph reads it to find which folder an import path names: in a module
``github.com/go-chi/chi/v5`` at the workspace's root, ``import
"github.com/go-chi/chi/v5/middleware"`` is the folder ``middleware`` and the module
path itself is the root folder — no suffix of the import path names either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import Chunk, Position, Span, Symbol, SymbolKind

_MODULE = re.compile(r'^\s*module\s+("?)([^\s"]+)\1\s*(?://.*)?$')


def module_symbols(path: str, lines: Sequence[str], chunks: Sequence[Chunk]) -> tuple[Symbol, ...]:
    """The module a ``go.mod`` declares (its first ``module`` line), or none."""
    for i, line in enumerate(lines):
        m = _MODULE.match(line)
        if m is None:
            continue
        row = i + 1
        chunk = next((c for c in chunks if c.start_line <= row <= c.end_line), None)
        if chunk is None:
            return ()
        name = m.group(2)
        where = Span(Position(row, m.start(2)), Position(row, m.end(2)))
        line_span = Span(Position(row, 0), Position(row, len(line)))
        return (Symbol(name, name, SymbolKind.MODULE, path, "gomod", line_span, where, "", chunk.id),)
    return ()
