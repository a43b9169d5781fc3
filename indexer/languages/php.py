"""PHP: classes, interfaces, traits, enums, functions, methods, namespaces."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Mapping, Role, Rule, Scope


class PhpMapping(Mapping):
    """``namespace X;`` is a symbol only: it does not qualify what follows."""

    rules: ClassVar[dict[str, Rule]] = {
        "class_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "interface_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "trait_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "enum_declaration": Rule(SymbolKind.ENUM, Role.CLASS),
        "function_definition": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "method_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
    }
    constructor_names = frozenset({"__construct"})

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Namespaces with a body are scopes; ``namespace X;`` is a symbol."""
        if node.type == "namespace_definition":
            found = self.from_rule(node, Rule(SymbolKind.NAMESPACE, Role.NAMESPACE), scope)
            if found is None:
                return []
            found.name = found.name.strip("\\").replace("\\", ".")  # App\Models → App.Models
            if found.body is None:
                found.role = Role.SYMBOL
            return [found]
        return super().definitions(node, scope)
