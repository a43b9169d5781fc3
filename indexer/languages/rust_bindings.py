"""What type a Rust name or struct field holds, where the code states it.

The design of :mod:`.bindings` for Rust: a name is typed when every binding of it
in its function says the same thing — a typed parameter (``b: &mut Bar``),
``let x: Bar``, ``let x = Bar { … }`` or ``let x = Bar::new()`` / ``make()`` (the
callee's declared return type, resolved at query time; ``-> Self`` is the impl's
type). A struct's named fields are its attributes (``self.bar.go()``). References
are their referent type; generic types and a generic parameter's name type
nothing; a closure, ``for``, ``if let`` / ``while let`` or ``match`` binding of the
name, a declared type next to a value's, leaves it untyped. ``self`` needs no
binding: the resolver knows the impl's type.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from .base import node_text
from .bindings import (
    _UNKNOWN,
    Collector,
    Marks,
    _Binding,
    annotated,
    captures,
    compiled_query,
    identifiers_in,
)
from .go_bindings import _single_kind

_QUERY = """
(parameter) @param
(closure_parameters) @unknown
(let_declaration) @let
(for_expression pattern: (_) @unknown)
(let_condition pattern: (_) @unknown)
(match_arm pattern: (_) @unknown)
(field_declaration) @field
(function_item) @def
(type_parameter name: (_) @generic)
"""
_NAMED = frozenset({"type_identifier", "scoped_type_identifier"})


def rust_marks(root: Node, at: Callable[[int], str]) -> Marks:
    """The typed bindings of one Rust file, as marks on the edges' end points."""
    c = Collector()
    for capture, node in captures(compiled_query("rust", _QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            c.unknown(scope, _identifiers(node))
        elif capture in ("param", "let"):
            pattern = node.child_by_field_name("pattern")
            if pattern is None:
                continue
            if pattern.type != "identifier":
                c.unknown(scope, _identifiers(pattern))
                continue
            declared = node.child_by_field_name("type")
            if declared is not None:
                target = _named(declared)
                b = annotated(target)
            else:
                b = _value(node.child_by_field_name("value"))
            if capture == "param":
                c.parameter(scope, node_text(pattern), b)
            else:
                c.bind(scope, node_text(pattern), b)
        elif capture == "field":
            owner = _struct_owner(node, scope)
            field = node.child_by_field_name("name")
            target = _named(node.child_by_field_name("type"))
            if owner and field is not None:
                c.attribute(owner, node_text(field), annotated(target))
        elif capture == "def":
            returned = node.child_by_field_name("return_type")
            target = _named(returned) or _self_type(returned, scope)
            c.returns(scope, node.child_by_field_name("name"), target)
        elif capture == "generic":
            c.generics.add(node_text(node))
    return c.marks(_single_kind)


def _named(node: Node | None) -> Node | None:
    """``Foo``, ``a::Foo``, ``&Foo``, ``&mut Foo``; not ``Self``, generics, tuples, slices."""
    if node is not None and node.type == "reference_type":
        node = node.child_by_field_name("type")
    if node is None or node.type not in _NAMED or node_text(node) == "Self":
        return None
    return node


def _self_type(node: Node | None, scope: str) -> Node | None:
    """``-> Self`` of a method (``fn new() -> Self``): the resolver reads ``Self`` as the
    type the impl is for; a free function has no ``Self``."""
    if node is None or node.type != "type_identifier" or node_text(node) != "Self" or "." not in scope:
        return None
    return node


def _value(value: Node | None) -> _Binding:
    if value is None:
        return _UNKNOWN
    if value.type == "struct_expression":
        name = value.child_by_field_name("name")
        return _Binding("ann", name) if name is not None and _named(name) is not None else _UNKNOWN
    if value.type == "call_expression":
        fn = value.child_by_field_name("function")
        if fn is not None and _plain(fn):
            return _Binding("call", fn)
    return _UNKNOWN


def _plain(node: Node) -> bool:
    """``f`` / ``Foo::new`` / ``a::Foo::new`` / ``Self::new``, and methods of such a call
    or a name (``Bar::new().with``, ``b.build``): what the call edge writes as a path. No
    generic arguments (``f::<T>``), no ``Self`` as a value."""
    if node.type == "identifier":
        return True
    if node.type == "scoped_identifier":
        path = node.child_by_field_name("path")
        return path is not None and (node_text(path) == "Self" or _plain(path))
    if node.type == "field_expression":
        value, field = node.child_by_field_name("value"), node.child_by_field_name("field")
        if field is None or field.type != "field_identifier" or value is None:
            return False
        if value.type in ("identifier", "self"):
            return True
        inner = value.child_by_field_name("function") if value.type == "call_expression" else None
        return inner is not None and _plain(inner)
    return False


def _struct_owner(field: Node, scope: str) -> str:
    """The struct a named field belongs to (its outline scope); "" for a variant's field."""
    struct = field.parent.parent if field.parent is not None else None
    return scope if struct is not None and struct.type == "struct_item" else ""


def _identifiers(node: Node) -> list[str]:
    return identifiers_in(node, ("identifier",))
