"""Rust: items, traits, ``impl Foo { fn bar }`` → ``Foo.bar``."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, node_text
from .paths import text_parts


class RustMapping(Mapping):
    """Rust items; an ``impl`` is a scope named after its type, with no symbol of its own."""

    rules: ClassVar[dict[str, Rule]] = {
        "function_item": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "function_signature_item": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "struct_item": Rule(SymbolKind.STRUCT, Role.CLASS, body_field="-"),
        "union_item": Rule(SymbolKind.STRUCT, Role.CLASS, body_field="-"),
        "enum_item": Rule(SymbolKind.ENUM, Role.CLASS, body_field="-"),
        "trait_item": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "type_item": Rule(SymbolKind.CLASS, Role.CLASS, body_field="-"),
        "macro_definition": Rule(SymbolKind.FUNCTION, Role.FUNCTION, body_field="-"),
        "const_item": Rule(SymbolKind.CONSTANT, Role.SYMBOL),
        "static_item": Rule(SymbolKind.VARIABLE, Role.SYMBOL),
    }

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """``impl`` blocks and ``mod`` items, then the table."""
        if node.type == "impl_item":
            type_node = node.child_by_field_name("type")
            while type_node is not None and type_node.type in (
                "generic_type",
                "scoped_type_identifier",
            ):
                inner = type_node.child_by_field_name("type") or type_node.child_by_field_name("name")
                if inner is None:
                    break
                type_node = inner
            name = node_text(type_node)
            body = node.child_by_field_name("body")
            return [Definition(node, node, name, type_node, None, Role.CLASS, body)]
        if node.type == "mod_item":
            name_node = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            role = Role.NAMESPACE if body is not None else Role.SYMBOL
            return [Definition(node, node, node_text(name_node), name_node, SymbolKind.MODULE, role, body)]
        return super().definitions(node, scope)

    def adjust_kind(self, kind: SymbolKind | None, name: str, scope: Scope) -> SymbolKind | None:
        """Functions in an ``impl`` or ``trait`` are methods."""
        if kind is SymbolKind.FUNCTION and scope.in_class:
            return SymbolKind.METHOD
        return kind

    def imports(self, node: Node) -> list[Import]:
        """``use a::b::{c, d as e}`` → ``a.b``: ``c`` and ``d`` (as ``e``); ``use a::*``."""
        out: list[Import] = []
        argument = node.child_by_field_name("argument")
        if argument is not None:
            _use(argument, "", out)
        return out


def _use(node: Node, prefix: str, out: list[Import]) -> None:
    def full(path: str) -> str:
        return f"{prefix}.{path}" if prefix and path else prefix or path

    t = node.type
    if t in ("scoped_identifier", "identifier", "crate", "self", "super"):
        path = full(text_parts(node))
        module, _, name = path.rpartition(".")
        out.append(Import(module, name, name, node))
    elif t == "use_as_clause":
        path = full(text_parts(node.child_by_field_name("path")))
        module, _, name = path.rpartition(".")
        out.append(Import(module, name, node_text(node.child_by_field_name("alias")), node))
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        out.append(Import(full(text_parts(inner)), "*", "*", node))
    elif t == "scoped_use_list":
        base = full(text_parts(node.child_by_field_name("path")))
        items = node.child_by_field_name("list")
        for item in items.named_children if items is not None else []:
            _use(item, base, out)
    elif t == "use_list":
        for item in node.named_children:
            _use(item, prefix, out)
