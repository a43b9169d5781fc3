"""What type a C# name, field or property holds, where the code states it.

The design of :mod:`.bindings` for C#: ``Foo x`` parameters, locals and fields,
``Foo? x``, ``var x = new Foo()`` / ``= f.Make()`` (typed by the value: a class
is its instance, a method its declared return type, resolved at query time),
properties, a method's declared return type. Fields and properties of a class are
its attributes (``this.foo.Go()``). Lambda, ``foreach``, ``catch``, pattern,
``out var``, tuple and query (``from x in …``) variables leave a name untyped,
and so do generic types, arrays, predefined types and a generic parameter's name.
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
    annotated,
    captures,
    compiled_query,
    identifiers_in,
    value_after_equals,
)
from .paths import UNKNOWN, dotted_path

_QUERY = """
(parameter) @param
(variable_declaration) @decl
(property_declaration) @property
(lambda_expression parameters: (_) @unknown)
(lambda_expression (implicit_parameter) @unknown)
(foreach_statement left: (_) @unknown)
(catch_declaration name: (_) @unknown)
(declaration_pattern name: (_) @unknown)
(recursive_pattern) @unknown
(declaration_expression name: (_) @unknown)
(tuple_pattern) @unknown
(from_clause name: (_) @unknown)
(let_clause) @unknown
(join_clause) @unknown
(local_function_statement name: (_) @unknown)
(method_declaration) @method
(local_function_statement) @method
(type_parameter name: (_) @generic)
"""
_NAMED = frozenset({"identifier", "qualified_name"})
_NAMES = ("identifier", "implicit_parameter")  # `x => …` names its parameter without an identifier


def csharp_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """The typed bindings of one C# file, as marks on the edges' end points."""
    c = Collector(classes)
    for capture, node in captures(compiled_query("csharp", _QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            c.unknown(scope, _identifiers(node))
        elif capture in ("param", "property"):
            name = node.child_by_field_name("name")
            if name is not None and capture == "param":
                c.parameter(scope, node_text(name), _declared(node.child_by_field_name("type")))
            elif name is not None:
                c.bind(scope, node_text(name), _declared(node.child_by_field_name("type")))
        elif capture == "decl":
            declared = node.child_by_field_name("type")
            for d in node.named_children:
                if d.type != "variable_declarator":
                    continue
                name = d.child_by_field_name("name")
                if name is None:
                    continue  # a tuple: its names are `unknown` captures
                if declared is not None and declared.type == "implicit_type":
                    b = _value(value_after_equals(d))
                else:
                    b = _declared(declared)
                c.bind(scope, node_text(name), b)
        elif capture == "method":
            target = _csharp_type(node.child_by_field_name("returns") or node.child_by_field_name("type"))
            c.returns(scope, node.child_by_field_name("name"), target)
        elif capture == "generic":
            c.generics.add(node_text(node))
    return c.marks()


def _declared(node: Node | None) -> _Binding:
    target = _csharp_type(node)
    return annotated(target)


def _csharp_type(node: Node | None) -> Node | None:
    """The last name of ``Foo`` / ``A.B.Foo`` / ``Foo?`` (where the type reference edge
    ends); not ``var``, generics, arrays, tuples or predefined types."""
    if node is not None and node.type == "nullable_type":
        node = node.child_by_field_name("type")
    if node is None or node.type not in _NAMED:
        return None
    walked = dotted_path(node)
    return walked[1] if walked is not None else None


def _value(value: Node | None) -> _Binding:
    if value is None:
        return _UNKNOWN
    if value.type == "null_literal":
        return _NONE
    if value.type == "object_creation_expression":
        callee = value.child_by_field_name("type")
        if callee is None or callee.type not in _NAMED:
            return _UNKNOWN  # `new List<Foo>()`: a generic type types nothing
    elif value.type == "invocation_expression":
        callee = value.child_by_field_name("function")
    else:
        return _UNKNOWN
    walked = dotted_path(callee) if callee is not None else None
    return _Binding("call", walked[1]) if walked is not None and UNKNOWN not in walked[0] else _UNKNOWN


def _identifiers(node: Node) -> list[str]:
    return identifiers_in(node, _NAMES, ("qualified_name", "nullable_type", "generic_name"))
