"""Bounds on every number and glob a query accepts, checked before any work starts.

Hostile or mistyped input (``--limit 1000000000``, ``--context 1000000000``, a
100 KB include glob) must get a clear ``QueryError`` at once, never an
``OverflowError`` from Arrow, a DataFusion internal error or a two-minute grep.
The engine checks them, so the CLI, the language server and the MCP tools all
answer the same way. The limits are far above any useful value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..errors import QueryError

MAX_LIMIT = 10_000  # results of one search / symbol lookup
MAX_HOPS = 5  # multi-hop depth
MAX_CONTEXT = 1_000  # grep context lines either side of a match
MAX_MATCHES = 1_000_000  # grep matching lines
MAX_WEIGHT = 1_000.0  # an RRF weight
MAX_GLOBS = 256  # include / exclude globs of one query
MAX_GLOB_CHARS = 1_024  # one glob (a real path pattern is far shorter)
MAX_QUERY_CHARS = 10_000  # one query or pattern


def check_int(name: str, value: int, low: int, high: int) -> int:
    """``value`` when ``low ≤ value ≤ high``; else a QueryError naming the option and its range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise QueryError(f"{name} must be a whole number from {low} to {high:,}; got {value!r}")
    return value


def check_float(name: str, value: float | None, low: float, high: float) -> float | None:
    """``value`` (None passes) when finite and within ``low ≤ value ≤ high``; else a QueryError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QueryError(f"{name} must be a number from {low:g} to {high:g}; got {value!r}")
    if not math.isfinite(value) or not low <= value <= high:
        raise QueryError(f"{name} must be a number from {low:g} to {high:g}; got {value!r}")
    return float(value)


def check_globs(name: str, globs: Iterable[str]) -> None:
    """At most MAX_GLOBS globs, each non-empty, at most MAX_GLOB_CHARS long, with no NUL."""
    globs = list(globs)
    if len(globs) > MAX_GLOBS:
        raise QueryError(f"{name}: at most {MAX_GLOBS} globs; got {len(globs):,}")
    for glob in globs:
        if not isinstance(glob, str) or not glob.strip():
            raise QueryError(f"{name}: a glob must be a non-empty string; got {glob!r}")
        if len(glob) > MAX_GLOB_CHARS:
            raise QueryError(
                f"{name}: a glob may be at most {MAX_GLOB_CHARS:,} characters; got one of {len(glob):,}"
            )
        if "\x00" in glob:
            raise QueryError(f"{name}: a glob must not contain a NUL character")


def check_query(name: str, text: str) -> None:
    """A query or pattern of at most MAX_QUERY_CHARS characters."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"{name} may be at most {MAX_QUERY_CHARS:,} characters; got {len(text):,}")
