"""Hybrid's exact-match source, answered from the index instead of a disk walk.

Inside hybrid, grep's job is to say which chunks hold a keyword exactly and to
rank them by BM25 (whole-index statistics). A ripgrep walk of the workspace per
query costs 100-300 ms on the standard library and grows with the tree; here the
BM25 run over-fetches a candidate pool, the keyword pattern is matched against
those chunks' text, and unsaved buffers are searched in memory as grep does. The
``grep`` mode itself still walks the disk with ripgrep and never drops a match.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..rows import in_filters
from ..settings import IndexSettings
from ..store import CHUNKS, Store
from .filters import and_where, path_allowed
from .grep_memory import OverlayFilter, TextMatcher, normalise_overlay_path, search_overlay
from .keyword import KeywordHit
from .passages import is_case_sensitive
from .results import Filters

# BM25 candidates per wanted result: the exact source looks this much deeper than
# the BM25 source ranks, so an exact match BM25 puts low still counts. A long query
# (an issue's text: dozens of words) spreads BM25 thin, and an identifier it names
# may sit deep: it looks 4× deeper; a question or a name 2× (see DECISIONS, "the
# exact source's pool").
POOL = 4
SHORT_POOL = 2


def exact_chunks(
    pattern: str,
    pool: Sequence[KeywordHit],
    *,
    store: Store,
    root: Path,
    filters: Filters,
    where: str | None,
    index_settings: IndexSettings,
    overlay: Mapping[str, str] | None,
    timeout_s: float,
) -> list[str]:
    """Ids of chunks matching ``pattern`` (a keyword alternation; smart case): the BM25
    ``pool`` in its order, then chunks of unsaved buffers with a match, by path and line.
    Chunks of paths with an unsaved buffer are judged by the buffer, not the index."""
    if not pattern:
        return []
    sensitive = is_case_sensitive(pattern, regex=True, case="smart")
    deadline = time.monotonic() + timeout_s
    matcher = TextMatcher(pattern, regex=True, case_sensitive=sensitive, deadline=deadline)
    buffers = {p: t for k, t in (overlay or {}).items() if (p := normalise_overlay_path(k)) is not None}
    out = [h.chunk_id for h in pool if h.chunk.path not in buffers and matcher.found_in(h.chunk.text)]
    if buffers:
        allowed = OverlayFilter(
            root,
            include=(index_settings.include, filters.include),
            exclude=(*index_settings.exclude, *filters.exclude),
            respect_gitignore=index_settings.respect_gitignore,
        )
        lines: dict[str, set[int]] = {}
        try:
            for path, hits in search_overlay(buffers, matcher, allowed, index_settings, deadline):
                if path_allowed(path, filters):
                    lines[path] = set(hits.matches)
        except TimeoutError:
            pass  # the pool's matches stand; the buffers took too long
        out += chunks_at_lines(store, lines, where)
    return list(dict.fromkeys(out))


def chunks_at_lines(store: Store, lines: Mapping[str, set[int]], where: str | None) -> list[str]:
    """Ids of the indexed chunks covering any of these (path → line numbers), by path and line."""
    ordered: list[str] = []
    for flt in in_filters("path", sorted(lines)):
        rows = (
            store.table(CHUNKS)
            .search()
            .where(and_where(flt, where) or flt)
            .select(["id", "path", "start_line", "end_line"])
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        rows.sort(key=lambda r: (r["path"], r["start_line"]))
        for r in rows:
            if any(r["start_line"] <= n <= r["end_line"] for n in lines[r["path"]]):
                ordered.append(str(r["id"]))
    return list(dict.fromkeys(ordered))
