"""Haskell: functions and bindings, data types, newtypes, type synonyms, classes, instances."""

from __future__ import annotations

import re
from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Mapping, Role, Rule, Scope, node_text

_EQUATIONS = frozenset({"function", "bind"})
_BETWEEN = frozenset({"comment", "haddock", "pragma"})


class HaskellMapping(Mapping):
    """tree-sitter-haskell keeps a module's definitions under one ``declarations`` node,
    which the generic mapping took for a statement: every Haskell file was one run of
    top-level blocks with no symbol. A type signature and Haddock comment right above a
    definition belong to it; a function's further equations (``f [] = …`` then
    ``f (x:xs) = …``) are its body, not definitions of their own."""

    rules: ClassVar[dict[str, Rule]] = {
        "function": Rule(SymbolKind.FUNCTION, Role.FUNCTION, body_field="match"),
        "bind": Rule(SymbolKind.FUNCTION, Role.FUNCTION, body_field="match"),
        "data_type": Rule(SymbolKind.STRUCT, Role.CLASS, body_field="constructors"),
        "newtype": Rule(SymbolKind.STRUCT, Role.CLASS, body_field="constructor"),
        "type_synomym": Rule(SymbolKind.CLASS, Role.SYMBOL),
        "class": Rule(SymbolKind.INTERFACE, Role.CLASS, body_field="declarations"),
        "instance": Rule(None, Role.CLASS, body_field="declarations"),
    }
    transparent = frozenset({"ERROR", "declarations"})
    attached = re.compile(r"comment|haddock|signature|pragma")

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """As the rules say; a further equation of the function above continues it."""
        found = super().definitions(node, scope)
        if node.type in _EQUATIONS and _further_equation(node):
            for d in found:
                d.continues = True
        return found


def _further_equation(node: Node) -> bool:
    """The nearest definition above (comments aside) is an equation of the same name."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type in _BETWEEN:
        prev = prev.prev_named_sibling
    if prev is None or prev.type not in _EQUATIONS:
        return False
    return node_text(prev.child_by_field_name("name")) == node_text(node.child_by_field_name("name"))
