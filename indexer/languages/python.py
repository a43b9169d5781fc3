"""Python: classes, functions and methods, module-level names."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, node_text


class PythonMapping(Mapping):
    """``class``/``def`` (decorated or not); module-level assignments as variables."""

    rules: ClassVar[dict[str, Rule]] = {
        "class_definition": Rule(SymbolKind.CLASS, Role.CLASS),
        "function_definition": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
    }
    wrappers: ClassVar[dict[str, str]] = {"decorated_definition": "definition"}
    # Definitions under a module- or class-level ``if`` / ``try`` / ``with`` / ``for`` /
    # ``while`` belong to that scope (``if sys.platform == "win32": def spawnlp…``), as
    # C's #ifdef blocks do: the block's statements are walked as the scope's own.
    transparent = frozenset(
        {
            "ERROR",
            "if_statement",
            "elif_clause",
            "else_clause",
            "try_statement",
            "except_clause",
            "except_group_clause",
            "finally_clause",
            "with_statement",
            "for_statement",
            "while_statement",
            "block",
        }
    )
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

    def imports(self, node: Node) -> list[Import]:
        """``import a.b [as x]`` binds ``a`` (or ``x``); ``from .m import n as k`` binds ``k``."""
        out: list[Import] = []
        if node.type == "import_statement":
            for item in node.children_by_field_name("name"):
                target, alias = _aliased(item)
                module = node_text(target)
                out.append(Import(module, "", alias or module.split(".")[0], item))
            return out
        module = node_text(node.child_by_field_name("module_name")).replace(" ", "")
        if any(c.type == "wildcard_import" for c in node.named_children):
            return [Import(module, "*", "*", node)]
        for item in node.children_by_field_name("name"):
            target, alias = _aliased(item)
            name = node_text(target)
            out.append(Import(module, name, alias or name, item))
        return out


def _aliased(item: Node) -> tuple[Node, str]:
    if item.type == "aliased_import":
        target = item.child_by_field_name("name") or item
        return target, node_text(item.child_by_field_name("alias"))
    return item, ""


def _assignment(outer: Node, assignment: Node) -> list[Definition]:
    left = assignment.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return []
    name = node_text(left)
    kind = SymbolKind.CONSTANT if name.isupper() else SymbolKind.VARIABLE
    return [Definition(assignment, outer, name, left, kind, Role.SYMBOL, None)]
