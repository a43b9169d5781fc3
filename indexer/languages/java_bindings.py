"""What type a Java name or field holds, where the code states it.

The design of :mod:`.bindings` for Java: ``Foo x`` parameters, locals and fields
(``var x = new Foo()`` / ``= a.make()`` typed by the value), a method's declared
return type. Lambda, loop, catch, resource and pattern variables leave a name
untyped, and so does a generic parameter's name.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from .base import node_text
from .bindings import (
    _NONE,
    _UNKNOWN,
    Collector,
    Marks,
    _Binding,
    _type_parameter,
    annotated,
    captures,
    compiled_query,
    identifiers_in,
)
from .paths import dotted_path

_JAVA_QUERY = """
(formal_parameter) @param
(spread_parameter) @unknown
(receiver_parameter) @unknown
(local_variable_declaration) @decl
(field_declaration) @decl
(constant_declaration) @decl
(lambda_expression parameters: (_) @unknown)
(enhanced_for_statement name: (_) @unknown)
(catch_formal_parameter name: (_) @unknown)
(resource name: (_) @unknown)
(instanceof_expression name: (_) @unknown)
(type_pattern) @unknown
(record_pattern) @unknown
(method_declaration) @method
(type_parameter) @generic
"""
_JAVA_TYPES = frozenset({"type_identifier", "scoped_type_identifier"})


def java_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """Java's typed bindings: ``Foo x`` parameters, locals and fields (``var x = new
    Foo()`` / ``= a.make()`` by the value), a method's declared return type. Lambda,
    loop, catch, resource and pattern variables leave a name untyped."""
    c = Collector(classes)
    for capture, node in captures(compiled_query("java", _JAVA_QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            c.unknown(scope, _java_identifiers(node))
        elif capture == "param":
            name = node.child_by_field_name("name")
            target = _java_type(node.child_by_field_name("type"))
            if name is not None:
                c.bind(scope, node_text(name), annotated(target))
        elif capture == "decl":
            declared = _java_type(node.child_by_field_name("type"))
            for d in node.children_by_field_name("declarator"):
                name = d.child_by_field_name("name")
                if name is None:
                    continue
                if d.child_by_field_name("dimensions") is not None:
                    b = _UNKNOWN  # `Foo x[]`: an array
                elif declared is not None:
                    b = _Binding("ann", declared)
                elif node_text(node.child_by_field_name("type")) == "var":
                    b = _java_value(d.child_by_field_name("value"))
                else:
                    b = _UNKNOWN
                c.bind(scope, node_text(name), b)
        elif capture == "method":
            c.returns(scope, node.child_by_field_name("name"), _java_type(node.child_by_field_name("type")))
        elif capture == "generic":
            c.generics.update(_type_parameter(node))
    return c.marks()


def _java_identifiers(node: Node) -> list[str]:
    return identifiers_in(node, ("identifier",), _JAVA_TYPES)


def _java_type(node: Node | None) -> Node | None:
    """The last name of ``Foo`` / ``a.b.Foo`` (where its reference edge ends); no ``var``,
    generics, arrays or primitives."""
    if node is None or node.type not in _JAVA_TYPES or node_text(node) == "var":
        return None
    walked = dotted_path(node)
    return walked[1] if walked is not None else None


def _java_value(value: Node | None) -> _Binding:
    if value is None:
        return _UNKNOWN
    if value.type == "null_literal":
        return _NONE
    callee = value.child_by_field_name("type") if value.type == "object_creation_expression" else value
    if value.type not in ("object_creation_expression", "method_invocation") or callee is None:
        return _UNKNOWN
    walked = dotted_path(callee)
    return _Binding("call", walked[1]) if walked is not None else _UNKNOWN
