"""Source → edges: calls, inheritance, imports and type references, as written.

One tree-sitter query per language (``languages/edges-<lang>.scm``) captures the
nodes, in C: a Python walk over every node of the standard library would cost
more than the parse itself. Captures:

* ``@call`` — a callee expression (Java: the whole ``method_invocation``);
* ``@inherit`` / ``@implement`` — a supertype in a class / interface / extension
  header;
* ``@import`` — an import statement, read by the language's mapping
  (:meth:`Mapping.imports`);
* ``@ref`` — a type in an annotation or parameter, a decorator.

Each edge's ``from_symbol`` is the innermost definition of the outline around
it (nested local functions count as their outer function). Nothing is resolved
here: that is the graph's job, at query time, over every file.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable
from importlib import resources

from tree_sitter import Node, Query, QueryCursor
from tree_sitter_language_pack import SupportedLanguage, get_language

from .languages.base import Item, Mapping
from .languages.paths import UNKNOWN, dotted_path
from .model import Edge, EdgeKind

log = logging.getLogger(__name__)

# language → the .scm file holding its edge query
_QUERY_FILES = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "typescript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "cuda": "cpp",
    "csharp": "csharp",
    "swift": "swift",
    "kotlin": "kotlin",
}
_KINDS = {
    "call": EdgeKind.CALL,
    "inherit": EdgeKind.INHERIT,
    "implement": EdgeKind.IMPLEMENT,
    "ref": EdgeKind.REFERENCE,
}
_queries: dict[str, Query | None] = {}  # compiled once; a Query is immutable

Column = Callable[[int, int], int]  # (row, byte column) → code-point column


def has_edges(language: str) -> bool:
    """Whether the language has an edge query."""
    return language in _QUERY_FILES


def _query(language: str) -> Query | None:
    if language not in _queries:
        found: Query | None = None
        name = _QUERY_FILES.get(language)
        if name is not None:
            try:
                source = resources.files(__package__ + ".languages").joinpath(f"edges-{name}.scm")
                found = Query(get_language(_as_language(language)), source.read_text(encoding="utf-8"))
            except Exception:  # a query that does not compile must not stop indexing
                log.warning("the edge query of %s does not load; no edges for it", language, exc_info=True)
        _queries[language] = found
    return _queries[language]


def _as_language(name: str) -> SupportedLanguage:
    return name  # type: ignore[return-value]


class _Scopes:
    """Innermost outline definition around a byte offset."""

    def __init__(self, items: list[Item]) -> None:
        spans: list[tuple[int, int, str]] = []
        self.receivers: dict[str, str] = {}  # Go method → its receiver's name

        def visit(items: list[Item]) -> None:
            for item in items:
                for d in item.defs:
                    if d.qualified_name:
                        spans.append((d.outer.start_byte, d.outer.end_byte, d.qualified_name))
                        if d.node.type == "method_declaration":
                            receiver = _go_receiver_name(d.node)
                            if receiver:
                                self.receivers[d.qualified_name] = receiver
                    if d.members:
                        visit(d.members)

        visit(items)
        spans.sort(key=lambda s: (s[0], -s[1]))
        self.starts = [s[0] for s in spans]
        self.spans = spans
        # parent[i]: the nearest earlier span containing span i (properly nested outlines)
        self.parent: list[int] = []
        stack: list[int] = []
        for i, (_start, end, _name) in enumerate(spans):
            while stack and spans[stack[-1]][1] < end:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(i)

    def at(self, offset: int) -> str:
        i = bisect.bisect_right(self.starts, offset) - 1
        while i >= 0:
            start, end, name = self.spans[i]
            if start <= offset < end:
                return name
            i = self.parent[i]
        return ""


def _go_receiver_name(method: Node) -> str:
    receiver = method.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else []:
        name = param.child_by_field_name("name")
        if name is not None and name.text is not None:
            return name.text.decode("utf-8", "replace")
    return ""


def extract_edges(
    root: Node, language: str, mapping: Mapping, items: list[Item], path: str, column: Column
) -> tuple[Edge, ...]:
    """The edges of one parsed file, in document order (empty for languages without a query)."""
    query = _query(language)
    if query is None:
        return ()
    captures = QueryCursor(query).captures(root)
    if not captures:
        return ()
    scopes = _Scopes(items)
    out: list[Edge] = []
    seen: set[tuple[int, int, str]] = set()

    def edge(
        kind: EdgeKind, name_node: Node, at: int, to_name: str, module: str = "", alias: str = ""
    ) -> None:
        (r0, c0), (r1, c1) = name_node.start_point, name_node.end_point
        out.append(
            Edge(
                path=path,
                from_symbol=scopes.at(at),
                to_name=to_name,
                kind=kind,
                line=r0 + 1,
                column=column(r0, c0),
                end_line=r1 + 1,
                end_column=column(r1, c1),
                module=module,
                alias=alias,
            )
        )

    for capture, nodes in captures.items():
        if capture == "import":
            for node in nodes:
                try:
                    bindings = mapping.imports(node)
                except Exception:  # one odd statement must not lose the file's edges
                    log.debug("reading an import in %s failed", path, exc_info=True)
                    continue
                for b in bindings:
                    edge(EdgeKind.IMPORT, b.node, node.start_byte, b.name, b.module, b.alias)
            continue
        kind = _KINDS.get(capture)
        if kind is None:
            continue
        for node in nodes:
            key = (node.start_byte, node.end_byte, capture)
            if key in seen:
                continue
            seen.add(key)
            found = dotted_path(node)
            if found is None:
                continue
            parts, name_node = found
            if not parts or parts[-1] in ("", UNKNOWN):
                continue
            if scopes.receivers and parts[0] == scopes.receivers.get(scopes.at(node.start_byte)):
                parts = ["self", *parts[1:]]  # Go: `s.Save()` in a method of `s`'s type
            edge(kind, name_node, node.start_byte, ".".join(parts))
    out.sort(key=lambda e: (e.line, e.column))
    return tuple(out)
