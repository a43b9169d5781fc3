"""Filters as SQL for LanceDB pre-filtering, and as predicates for in-memory paths."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..errors import QueryError
from .bounds import check_globs
from .results import Filters


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@lru_cache(maxsize=256)
def glob_regex(glob: str) -> str:
    """A gitignore-style glob as an anchored regex over a workspace-relative path.

    A directory pattern (``tests/``) matches everything beneath it.
    """
    from pathspec.patterns.gitignore import GitIgnorePatternError  # only when globs are given
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    glob = glob.strip()
    if not glob:
        raise QueryError("empty glob")
    try:
        regex, include = GitIgnoreSpecPattern.pattern_to_regex(glob)
    except (GitIgnorePatternError, ValueError) as exc:
        raise QueryError(f"invalid glob {glob!r}: {exc}") from exc
    if regex is None or include is None:
        raise QueryError(f"invalid glob {glob!r}")
    # pathspec's regex uses named groups ((?P<ps_d>…)) which DataFusion rejects.
    return re.sub(r"\(\?P<[a-z_]+>", "(", regex)


def _any_glob(column: str, globs: Sequence[str]) -> str:
    return "(" + " OR ".join(f"regexp_like({column}, {_sql_str(glob_regex(g))})" for g in globs) + ")"


def filters_sql(filters: Filters, column_prefix: str = "") -> str | None:
    """The WHERE clause for a chunks query, or None when nothing filters.

    Raises QueryError for globs past the bounds (``bounds.check_globs``).
    """
    check_globs("include", filters.include)
    check_globs("exclude", filters.exclude)
    c = column_prefix
    parts: list[str] = []
    if filters.include:
        parts.append(_any_glob(f"{c}path", filters.include))
    if filters.exclude:
        parts.append("NOT " + _any_glob(f"{c}path", filters.exclude))
    if filters.languages:
        parts.append(f"{c}language IN ({', '.join(_sql_str(x) for x in filters.languages)})")
    if filters.kinds:
        parts.append(f"{c}kind IN ({', '.join(_sql_str(str(k)) for k in filters.kinds)})")
    if filters.projects:
        parts.append(f"{c}project IN ({', '.join(_sql_str(x) for x in filters.projects)})")
    return " AND ".join(parts) if parts else None


def path_allowed(path: str, filters: Filters) -> bool:
    """The include / exclude part of the filters, for paths outside the store (grep)."""
    if filters.include and not any(re.match(glob_regex(g), path) for g in filters.include):
        return False
    return not (filters.exclude and any(re.match(glob_regex(g), path) for g in filters.exclude))


def and_where(*clauses: str | None) -> str | None:
    kept = [f"({c})" for c in clauses if c]
    return " AND ".join(kept) if kept else None
