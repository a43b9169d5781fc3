"""Swift: classes, structs, enums, actors, protocols, extensions."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, error_count, node_text
from .paths import text_parts

_DECLARATION_KINDS = {
    "class": SymbolKind.CLASS,
    "actor": SymbolKind.CLASS,
    "struct": SymbolKind.STRUCT,
    "enum": SymbolKind.ENUM,
}


class SwiftMapping(Mapping):
    """``extension Foo`` is a scope named ``Foo`` with no symbol of its own."""

    rules: ClassVar[dict[str, Rule]] = {
        "protocol_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "function_declaration": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "protocol_function_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "init_declaration": Rule(SymbolKind.CONSTRUCTOR, Role.FUNCTION),
        "deinit_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "subscript_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "typealias_declaration": Rule(SymbolKind.CLASS, Role.SYMBOL),
    }

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """``class_declaration`` covers class/struct/enum/actor/extension; read its keyword."""
        if node.type == "class_declaration":
            keyword = node_text(node.child_by_field_name("declaration_kind"))
            name_node = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if keyword == "extension":
                name = node_text(name_node)
                if name_node is not None and name_node.type == "user_type":
                    # `extension Request.Authentication`: the scope is the nested type's full name
                    parts = [c for c in name_node.named_children if c.type == "type_identifier"]
                    if parts:
                        name, name_node = ".".join(node_text(c) for c in parts), parts[-1]
                return [Definition(node, node, name, name_node, None, Role.CLASS, body)]
            kind = _DECLARATION_KINDS.get(keyword, SymbolKind.CLASS)
            return [Definition(node, node, node_text(name_node), name_node, kind, Role.CLASS, body)]
        if node.type == "subscript_declaration":  # no name: `subscript`, not its result type's
            word = next((c for c in node.children if c.type == "subscript"), None)
            body = node.child_by_field_name("body") or next(
                (c for c in node.named_children if c.type == "computed_property"), None
            )
            return [Definition(node, node, "subscript", word, SymbolKind.METHOD, Role.FUNCTION, body)]
        if node.type == "init_declaration":
            body = node.child_by_field_name("body")
            name_node = node.child_by_field_name("name")
            return [Definition(node, node, "init", name_node, SymbolKind.CONSTRUCTOR, Role.FUNCTION, body)]
        return super().definitions(node, scope)

    def imports(self, node: Node) -> list[Import]:
        """``import Foundation`` brings every name of the module."""
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        return [Import(text_parts(ident), "*", "*", node)]


# ----- repairs: compiler diagnostics, body-less function declarations ----------------

_OWN_BODIES = frozenset({"function_body", "class_body", "protocol_body", "enum_class_body", "statements"})
_MAX_REPAIRS = 12  # reparses per file


def _swallowing(root: Node) -> list[tuple[Node, Node]]:
    """(function declaration, the `func` keyword of another declaration it swallowed): the
    grammar has no body-less function, so `func f() -> T` with no `{…}` takes the next
    declaration into an ERROR and that declaration's symbol is lost."""
    out: list[tuple[Node, Node]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.type == "function_declaration":
            keywords: list[Node] = []
            inner = [node]
            while inner:
                n = inner.pop()
                for c in n.children:
                    if c.type == "func":
                        keywords.append(c)
                    elif c.type not in _OWN_BODIES:
                        inner.append(c)
            if len(keywords) > 1:
                out.append((node, min(keywords[1:], key=lambda k: k.start_byte)))
        stack.extend(node.children)
    return out


# A compiler directive on a line of its own: `#warning("…")`, `#error("…")`,
# `#sourceLocation(file: "…", line: n)` / `#sourceLocation()` (generated code). Inside a
# function body the grammar reads it; between a type's members it does not, and on
# vapor's ConditionalResponseCompressionTests.swift (`#warning("Bring back")` at column
# 0 between two nested test suites) it closed the enclosing struct in an ERROR: the
# struct was no symbol and its members were named as if at the top of the file.
_DIAGNOSTIC = re.compile(
    rb'^[ \t]*#(?:(?:warning|error)[ \t]*\([ \t]*"(?:[^"\\\n]|\\.)*"[ \t]*\)|sourceLocation[ \t]*\([^)\n]*\))'
    rb"[ \t]*(?://[^\n]*)?$",
    re.MULTILINE,
)


def without_diagnostics(source: bytes) -> bytes | None:
    """``source`` with each line that is only a ``#warning("…")`` / ``#error("…")`` /
    ``#sourceLocation(…)`` blanked (spaces for its bytes: every row and column stays), or
    None when it has none. Such a directive declares and calls nothing, so the parse loses
    nothing by not seeing it."""
    spans = [m.span() for m in _DIAGNOSTIC.finditer(source)]
    if not spans:
        return None
    out = bytearray(source)
    for start, end in spans:
        out[start:end] = b" " * (end - start)
    return bytes(out)


def repaired(source: bytes, root: Node, parse: Callable[[bytes], Node]) -> bytes | None:
    """``source`` with the repairs that read it with fewer errors (rows unchanged), or
    None when there is none: compiler diagnostics blanked (``without_diagnostics``, kept
    when the parse has fewer errors), then body-less functions given a body
    (``_bodies``)."""
    changed = source
    blanked = without_diagnostics(source)
    if blanked is not None:
        tree = parse(blanked)
        if error_count(tree) < error_count(root):
            changed, root = blanked, tree
    changed = _bodies(changed, root, parse)
    return changed if changed != source else None


def _bodies(source: bytes, root: Node, parse: Callable[[bytes], Node]) -> bytes:
    """``source`` with ``{}`` after each body-less function signature (``@_silgen_name("…")
    func f() -> T``, a declaration the linker provides) that swallowed the next declaration,
    placed at the end of the signature's last line (``source`` itself when there is none).
    Only bytes after an insertion move: every row, and every column but the few after the
    insertion on its own line, stay where they are in ``source``. A candidate line is kept
    only when it leaves fewer declarations swallowed."""
    found = _swallowing(root)
    changed, tries = source, 0
    while found and tries < _MAX_REPAIRS:
        function, keyword = found[0]
        lines_before = changed[: keyword.start_byte].split(b"\n")
        first = function.start_point.row
        better = None
        for row in range(len(lines_before) - 2, first - 1, -1):  # the rows above the `func`
            if tries >= _MAX_REPAIRS:
                break
            text = lines_before[row]
            if not text.strip() or b"//" in text:
                continue
            at = sum(len(line) + 1 for line in lines_before[:row]) + len(text.rstrip())
            candidate = changed[:at] + b"{}" + changed[at:]
            tries += 1
            left = _swallowing(parse(candidate))
            if len(left) < len(found):
                better = candidate, left
                break
        if better is None:
            break
        changed, found = better
    return changed
