"""Python: classes, functions and methods, module-level names."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Mapping, Role, Rule, Scope, node_text


class PythonMapping(Mapping):
    """``class``/``def`` (decorated or not); module-level assignments as variables."""

    rules: ClassVar[dict[str, Rule]] = {
        "class_definition": Rule(SymbolKind.CLASS, Role.CLASS),
        "function_definition": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
    }
    wrappers: ClassVar[dict[str, str]] = {"decorated_definition": "definition"}
    constructor_names = frozenset({"__init__"})

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Definitions, plus module-level ``NAME = …`` as variables / constants."""
        if node.type == "expression_statement" and not scope.container:
            child = node.named_children[0] if node.named_child_count else None
            if child is not None and child.type == "assignment":
                return _assignment(node, child)
            return []
        if node.type == "assignment" and not scope.container:
            return _assignment(node, node)
        return super().definitions(node, scope)


def _assignment(outer: Node, assignment: Node) -> list[Definition]:
    left = assignment.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return []
    name = node_text(left)
    kind = SymbolKind.CONSTANT if name.isupper() else SymbolKind.VARIABLE
    return [Definition(assignment, outer, name, left, kind, Role.SYMBOL, None)]
