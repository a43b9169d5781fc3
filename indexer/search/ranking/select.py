"""Selection: fold declarations into what they declare, apply file-role priors, and
keep one file from filling the page."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...model import Chunk, ChunkKind
from .roles import FileRole, file_role, role_prior, superseded

# Each further chunk of a file already on the page keeps this share of its score.
DIVERSITY_DECAY = 0.75
# Chunks of one file on the page before the decay starts.
DIVERSITY_FREE = 1

_OVERLOAD = re.compile(r"^\s*@(?:typing\.|t\.)?overload\b", re.MULTILINE)
_BRACE_LANGUAGES = frozenset(
    {
        "c",
        "cpp",
        "java",
        "csharp",
        "typescript",
        "tsx",
        "javascript",
        "kotlin",
        "scala",
        "swift",
        "go",
        "rust",
    }
)
_DEFINITION_KINDS = frozenset({ChunkKind.FUNCTION, ChunkKind.METHOD})
# A wrapper: a function or method of at most this many lines that calls another
# candidate of its file by name. It answers after what it wraps.
WRAPPER_LINES = 5
# A wrapper keeps this share of its score; the wrapped function gets the rest of it.
WRAPPER_SHARE = 0.9


def is_declaration(chunk: Chunk) -> bool:
    """An ``@overload`` stub or a body-less signature (a prototype, a TypeScript overload)."""
    if chunk.kind not in _DEFINITION_KINDS or not chunk.symbol:
        return False
    if chunk.language == "python":  # the regex only where the word is (~0.5 ms a search)
        return "overload" in chunk.text and _OVERLOAD.search(chunk.text) is not None
    if chunk.language in _BRACE_LANGUAGES:
        body = chunk.text.strip()
        return "{" not in body and body.endswith(";")
    return False


def fold_declarations(scores: dict[str, float], chunks: Mapping[str, Chunk]) -> None:
    """A declaration among the candidates gives its score to the definition it declares
    (same file and symbol first, else the same symbol anywhere) and leaves the page."""
    definitions: dict[tuple[str, str], str] = {}
    by_symbol: dict[str, str] = {}
    stubs: list[str] = []
    for cid in scores:
        c = chunks[cid]
        if is_declaration(c):
            stubs.append(cid)
        elif c.symbol and c.kind in _DEFINITION_KINDS:
            key = (c.path, c.symbol)
            if key not in definitions or scores[cid] > scores[definitions[key]]:
                definitions[key] = cid
            by_symbol.setdefault(c.symbol, cid)
    for cid in stubs:
        c = chunks[cid]
        target = definitions.get((c.path, c.symbol)) or by_symbol.get(c.symbol)
        if target is None:
            continue
        scores[target] = max(scores[target], scores[cid])
        del scores[cid]


def fold_wrappers(scores: dict[str, float], chunks: Mapping[str, Chunk]) -> None:
    """A short function that calls another candidate of its file (``__enter__`` calling
    ``self.render_progress()``) gives its score to the function it calls, and keeps
    ``WRAPPER_SHARE`` of it: the implementing code answers first, the wrapper next."""
    by_file: dict[str, dict[str, str]] = {}
    for cid in scores:
        c = chunks[cid]
        if c.kind in _DEFINITION_KINDS and c.symbol:
            by_file.setdefault(c.path, {})[c.symbol.rsplit(".", 1)[-1]] = cid
    calls: dict[str, re.Pattern[str]] = {}  # per file: a call of any of its candidates' names
    for cid in list(scores):
        c = chunks[cid]
        named = by_file.get(c.path)
        if not named or c.kind not in _DEFINITION_KINDS or c.end_line - c.start_line >= WRAPPER_LINES:
            continue
        own = c.symbol.rsplit(".", 1)[-1]
        body = c.text.split("\n", 1)[-1]
        pattern = calls.get(c.path)
        if pattern is None:
            names = "|".join(re.escape(name) for name in named)
            pattern = calls[c.path] = re.compile(rf"(?<![\w$])({names})\s*\(")
        called = set(pattern.findall(body))
        for name, target in named.items():
            if target != cid and name != own and name in called:
                scores[target] = max(scores[target], scores[cid])
                scores[cid] *= WRAPPER_SHARE
                break


def apply_role_priors(
    scores: dict[str, float], chunks: Mapping[str, Chunk], asked: frozenset[FileRole], query: str = ""
) -> dict[str, FileRole]:
    """Multiply each score by its file's role prior; returns the roles seen. A file in
    an older version's folder, when a newer version is among the candidates, is a
    legacy copy (``FileRole.COMPAT``) unless the query names its version."""
    roles: dict[str, FileRole] = {}
    older = () if FileRole.COMPAT in asked else superseded({chunks[cid].path for cid in scores}, query)
    for cid in scores:
        c = chunks[cid]
        role = roles.get(c.path)
        if role is None:
            role = file_role(c.path, c.language)
            if role is FileRole.SOURCE and c.path in older:
                role = FileRole.COMPAT
            roles[c.path] = role
        scores[cid] *= role_prior(role, asked)
    return roles


def diversify(scores: Mapping[str, float], chunks: Mapping[str, Chunk]) -> list[tuple[str, float]]:
    """Best first; past a file's first ``DIVERSITY_FREE`` chunks on the page, each further
    one decays by another ``DIVERSITY_DECAY`` (a decayed chunk may still beat another
    file's first)."""
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    seen: dict[str, int] = {}
    out: list[tuple[str, float]] = []
    for cid, s in ranked:
        path = chunks[cid].path
        n = seen.get(path, 0)
        seen[path] = n + 1
        out.append((cid, s * DIVERSITY_DECAY ** max(0, n + 1 - DIVERSITY_FREE)))
    out.sort(key=lambda kv: -kv[1])
    return out
