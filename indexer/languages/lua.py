"""Lua: functions by declaration and by assignment, tables of functions as scopes."""

from __future__ import annotations

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, GenericMapping, Role, Scope, node_text


class LuaMapping(GenericMapping):
    """The generic rule finds ``function M.f()``; Lua defines as often by assignment:
    ``M.setup = function(opts) … end`` is a function, and a table constructor holding
    functions (lazy.nvim's ``M.clone = { skip = function … end, run = function … end }``) is
    a class-like scope whose function fields are its methods. A table of plain values stays
    a statement."""

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Assignments (``local`` or not) of a function or a table of functions; a table's
        fields; then the generic rule."""
        t = node.type
        if t == "variable_declaration":
            inner = next((c for c in node.named_children if c.type == "assignment_statement"), None)
            found = _assigned(inner, node, scope) if inner is not None else []
            return found or ([] if inner is not None else super().definitions(node, scope))
        if t == "assignment_statement":
            return _assigned(node, node, scope)
        if t == "field":
            name_node = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            return _valued(node, node, name_node, value, scope) if name_node is not None else []
        return super().definitions(node, scope)

    def member_nodes(self, definition: Definition) -> list[Node]:
        """A table's fields."""
        return definition.body.named_children if definition.body is not None else []


def _assigned(assignment: Node, outer: Node, scope: Scope) -> list[Definition]:
    """``name = function … end`` / ``name = { … }`` with one name and one value."""
    names = next((c for c in assignment.named_children if c.type == "variable_list"), None)
    values = next((c for c in assignment.named_children if c.type == "expression_list"), None)
    if names is None or values is None or names.named_child_count != 1 or values.named_child_count != 1:
        return []
    return _valued(assignment, outer, names.named_children[0], values.named_children[0], scope)


def _valued(node: Node, outer: Node, name_node: Node, value: Node | None, scope: Scope) -> list[Definition]:
    name = node_text(name_node)
    if value is None or not name or "\n" in name:
        return []
    if value.type == "function_definition":
        kind = SymbolKind.METHOD if scope.in_class else SymbolKind.FUNCTION
        return [
            Definition(node, outer, name, name_node, kind, Role.FUNCTION, value.child_by_field_name("body"))
        ]
    if value.type == "table_constructor" and _holds_functions(value):
        return [Definition(node, outer, name, name_node, SymbolKind.CLASS, Role.CLASS, value)]
    return []


def _holds_functions(table: Node) -> bool:
    """A field of the table (or of a table inside it) is a function."""
    for field in table.named_children:
        value = field.child_by_field_name("value") if field.type == "field" else None
        if value is not None and (
            value.type == "function_definition"
            or (value.type == "table_constructor" and _holds_functions(value))
        ):
            return True
    return False
