"""Elixir: ``defmodule`` / ``defprotocol`` / ``defimpl`` and the ``def`` family."""

from __future__ import annotations

import re

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Mapping, Role, Scope, node_text

# Definitions are calls to the grammar: ``defmodule Plug.Conn do … end``.
_MODULES = {"defmodule": SymbolKind.MODULE, "defprotocol": SymbolKind.INTERFACE, "defimpl": None}
_FUNCTIONS = frozenset(
    {"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn", "defnp"}
)
_BETWEEN = frozenset({"comment", "unary_operator"})


class ElixirMapping(Mapping):
    """The generic mapping saw only calls, so every Elixir file was top-level blocks with
    no symbol. Modules, protocols and implementations are namespaces (their functions
    are chunked as at top level); ``def`` and its kin are functions, named by the call
    they define (``def assign(conn, key) when is_atom(key)`` → ``assign``). Attributes
    right above (``@doc``, ``@spec``) belong to the function; a further clause of the
    function above (``defp run(conn, [])`` then ``defp run(conn, [h | t])``) is its body."""

    attached = re.compile(r"comment|unary_operator")

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """A module or function definition, or [] for any other call or statement."""
        keyword = _keyword(node)
        if keyword in _MODULES:
            args = _arguments(node)
            name_node = args.named_children[0] if args is not None and args.named_children else None
            body = next((c for c in node.named_children if c.type == "do_block"), None)
            # `defmodule Plug.Conn`: the name is Conn, in Plug (a symbol query "Conn" finds it)
            qualifier, _, name = node_text(name_node).rpartition(".")
            kind = _MODULES[keyword]
            return [Definition(node, node, name, name_node, kind, Role.NAMESPACE, body, qualifier=qualifier)]
        if keyword in _FUNCTIONS:
            name_node = _defined_name(node)
            if name_node is None:
                return []
            body = next((c for c in node.named_children if c.type == "do_block"), None)
            d = Definition(
                node, node, node_text(name_node), name_node, SymbolKind.FUNCTION, Role.FUNCTION, body
            )
            d.continues = _further_clause(node, d.name)  # extends the function above, no symbol
            return [d]
        return []


def _keyword(node: Node) -> str:
    """``defmodule`` for ``defmodule X do … end``; "" for a node that is no such call."""
    if node.type != "call":
        return ""
    target = node.child_by_field_name("target")
    return node_text(target) if target is not None and target.type == "identifier" else ""


def _arguments(node: Node) -> Node | None:
    return next((c for c in node.named_children if c.type == "arguments"), None)


def _defined_name(node: Node) -> Node | None:
    """The name a ``def``-like call defines: the call in its head, through a ``when``."""
    args = _arguments(node)
    head = args.named_children[0] if args is not None and args.named_children else None
    if head is not None and head.type == "binary_operator":
        head = head.child_by_field_name("left")
    if head is not None and head.type == "call":
        head = head.child_by_field_name("target")
    return head if head is not None and head.type == "identifier" else None


def _further_clause(node: Node, name: str) -> bool:
    """The nearest definition above (attributes and comments aside) defines ``name`` too."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type in _BETWEEN:
        prev = prev.prev_named_sibling
    if prev is None or _keyword(prev) not in _FUNCTIONS:
        return False
    above = _defined_name(prev)
    return above is not None and node_text(above) == name
