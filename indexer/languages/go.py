"""Go: functions, methods (``Receiver.Method``), types, constants and variables."""

from __future__ import annotations

import re
from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, node_text
from .paths import text_parts

_TYPE_KINDS = {"struct_type": SymbolKind.STRUCT, "interface_type": SymbolKind.INTERFACE}


class GoMapping(Mapping):
    """Go declarations; interface methods as methods of the interface."""

    rules: ClassVar[dict[str, Rule]] = {
        "function_declaration": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "method_elem": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "method_spec": Rule(SymbolKind.METHOD, Role.FUNCTION),
    }

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Methods carry their receiver type as container; grouped specs give symbols only."""
        t = node.type
        if t == "method_declaration":
            name_node = node.child_by_field_name("name")
            return [
                Definition(
                    node,
                    node,
                    node_text(name_node),
                    name_node,
                    SymbolKind.METHOD,
                    Role.FUNCTION,
                    node.child_by_field_name("body"),
                    qualifier=_receiver_type(node),
                )
            ]
        if t == "type_declaration":
            specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
            defs = [_type_spec(spec, node) for spec in specs]
            if len(defs) != 1:
                for d in defs:
                    d.role = Role.SYMBOL
            return defs
        if t in ("const_declaration", "var_declaration") and not scope.container:
            kind = SymbolKind.CONSTANT if t == "const_declaration" else SymbolKind.VARIABLE
            found: list[Definition] = []
            for spec in node.named_children:
                for name_node in spec.children_by_field_name("name"):
                    found.append(
                        Definition(spec, node, node_text(name_node), name_node, kind, Role.SYMBOL, None)
                    )
            return found
        return super().definitions(node, scope)

    def imports(self, node: Node) -> list[Import]:
        """``import str "strings"`` binds ``str``; a plain import binds its package name."""
        path = text_parts(node.child_by_field_name("path"))
        name = node_text(node.child_by_field_name("name"))
        return [Import(path, "", name or package_name(path), node)]

    def member_nodes(self, definition: Definition) -> list[Node]:
        """Interface methods are members; struct fields are not definitions."""
        body = definition.body
        if body is not None and body.type == "interface_type":
            return body.children
        return []


def _type_spec(spec: Node, outer: Node) -> Definition:
    name_node = spec.child_by_field_name("name")
    type_node = spec.child_by_field_name("type")
    kind = _TYPE_KINDS.get(type_node.type if type_node is not None else "", SymbolKind.CLASS)
    return Definition(spec, outer, node_text(name_node), name_node, kind, Role.CLASS, type_node)


def _receiver_type(method: Node) -> str:
    """``(s *Server[T])`` → ``Server``."""
    receiver = method.child_by_field_name("receiver")
    if receiver is None:
        return ""
    for param in receiver.named_children:
        type_node = param.child_by_field_name("type")
        while type_node is not None and type_node.type in ("pointer_type", "generic_type"):
            inner = type_node.child_by_field_name("type")
            if inner is None:
                inner = type_node.named_children[0] if type_node.named_child_count else None
            type_node = inner
        if type_node is not None:
            return node_text(type_node)
    return ""


_MAJOR = re.compile(r"v[0-9]+")
_GOPKG_VERSION = re.compile(r"\.v[0-9]+$")


def package_name(path: str) -> str:
    """The name a plain import binds, as Go's conventions give it: the path's last part,
    the part before a major version (``github.com/go-chi/chi/v5`` → ``chi``), without a
    gopkg.in version (``gopkg.in/yaml.v3`` → ``yaml``)."""
    parts = path.split("/")
    last = parts[-2] if len(parts) > 1 and _MAJOR.fullmatch(parts[-1]) else parts[-1]
    return _GOPKG_VERSION.sub("", last)
