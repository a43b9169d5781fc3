"""Ruby: classes, modules, methods and singleton methods; ``class << self`` bodies."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Mapping, Role, Rule


class RubyMapping(Mapping):
    """A ``module`` chunks like a class (mixins carry methods); its symbol is a module.
    ``class << self … end`` is a scope of the class it sits in, with no symbol of its
    own: its methods are that class's (class) methods, chunked as its members. The
    grammar puts a comment that opens a body (``class Base`` then ``# doc`` then ``def``)
    beside the body, not in it: it is a member, so it stays with the method below it."""

    rules: ClassVar[dict[str, Rule]] = {
        "class": Rule(SymbolKind.CLASS, Role.CLASS),
        "module": Rule(SymbolKind.MODULE, Role.CLASS),
        "method": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "singleton_method": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "singleton_class": Rule(None, Role.CLASS, name_field="-"),
    }
    constructor_names = frozenset({"initialize"})

    def member_nodes(self, definition: Definition) -> list[Node]:
        """The body's statements, after the comments that open it (on lines of their own)."""
        body = definition.body
        if body is None:
            return []
        header_row = definition.node.start_point.row
        leading = [
            c
            for c in definition.node.children
            if c.type == "comment" and c.start_byte < body.start_byte and c.start_point.row > header_row
        ]
        return [*leading, *body.children]
