"""Swift: classes, structs, enums, actors, protocols, extensions."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, node_text
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
        if node.type == "init_declaration":
            body = node.child_by_field_name("body")
            name_node = node.child_by_field_name("name")
            return [Definition(node, node, "init", name_node, SymbolKind.CONSTRUCTOR, Role.FUNCTION, body)]
        return super().definitions(node, scope)

    def imports(self, node: Node) -> list[Import]:
        """``import Foundation`` brings every name of the module."""
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        return [Import(text_parts(ident), "*", "*", node)]
