"""What type a TypeScript name, field or parameter property holds, where the code states it.

The design of :mod:`.bindings` for TypeScript (and TSX): ``x: Foo`` parameters
(``private svc: Svc`` in a constructor is an attribute too), ``const x: Foo`` /
``= new Foo()`` / ``= make()``, class fields, ``this.x = new Foo()``, declared
return types. Arrow, loop, catch and destructured variables, reassignments,
imports and generic parameters leave a name untyped.
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
)
from .paths import UNKNOWN, dotted_path

_TS_QUERY = """
(required_parameter) @param
(optional_parameter) @param
(variable_declarator) @var
(public_field_definition) @field
(arrow_function parameter: (_) @unknown)
(for_in_statement left: (_) @unknown)
(catch_clause parameter: (_) @unknown)
(function_declaration name: (_) @unknown)
(class_declaration name: (_) @unknown)
(import_clause) @unknown
(assignment_expression left: (identifier) @unknown)
(assignment_expression left: (member_expression object: (this))) @thisassign
(augmented_assignment_expression left: (_) @unknown)
(function_declaration) @function
(method_definition) @function
(method_signature) @function
(abstract_method_signature) @function
(function_signature) @function
(type_parameter) @generic
"""
_TS_TYPES = frozenset({"function_type", "constructor_type"})
_TS_NAMES = frozenset({"identifier", "shorthand_property_identifier_pattern", "property_identifier"})


def typescript_marks(language: str, root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """TypeScript's typed bindings: ``x: Foo`` parameters (``private svc: Svc`` in a
    constructor is an attribute too), ``const x: Foo`` / ``= new Foo()`` / ``= make()``,
    class fields, ``this.x = new Foo()``, declared return types. Arrow, loop, catch and
    destructured variables, reassignments and imports leave a name untyped."""
    c = Collector(classes)

    def owner(scope: str) -> str | None:
        cls = scope.rpartition(".")[0]
        return cls if cls in classes else None

    for capture, node in captures(compiled_query(language, _TS_QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            c.unknown(scope, _ts_identifiers(node))
        elif capture == "param":
            pattern = node.child_by_field_name("pattern")
            target = _ts_type(node.child_by_field_name("type"))
            if pattern is None:
                continue
            if pattern.type != "identifier":
                c.unknown(scope, _ts_identifiers(pattern))  # `...rest`, `{ a, b }`
                continue
            b = annotated(target)
            signature = node.parent.parent if node.parent is not None else None
            if signature is not None and signature.type in _TS_TYPES:
                c.bind(scope, node_text(pattern), b)  # `(n: number) => number`: a type's parameter
            else:
                c.parameter(scope, node_text(pattern), b)
            cls = owner(scope)
            modifiers = {n.type for n in node.named_children}
            if cls is not None and modifiers & {"accessibility_modifier", "readonly"}:
                c.attribute(cls, node_text(pattern), b)  # a parameter property
        elif capture == "var":
            name = node.child_by_field_name("name")
            if name is None:
                continue
            if name.type != "identifier":
                c.unknown(scope, _ts_identifiers(name))
                continue
            target = _ts_type(node.child_by_field_name("type"))
            if target is not None:
                c.bind(scope, node_text(name), _Binding("ann", target))
            elif node.child_by_field_name("type") is not None:
                c.bind(scope, node_text(name), _UNKNOWN)
            else:
                c.bind(scope, node_text(name), _ts_value(node.child_by_field_name("value")))
        elif capture == "field":
            name = node.child_by_field_name("name")
            if name is None or scope not in classes:
                continue
            target = _ts_type(node.child_by_field_name("type"))
            typed = node.child_by_field_name("type") is not None
            b = annotated(target) if typed else _ts_value(node.child_by_field_name("value"))
            c.bind(scope, node_text(name), b)
        elif capture == "thisassign":
            left = node.child_by_field_name("left")
            prop = left.child_by_field_name("property") if left is not None else None
            cls = owner(scope)
            if prop is not None and cls is not None:
                c.attribute(cls, node_text(prop), _ts_value(node.child_by_field_name("right")))
        elif capture == "function":
            target = _ts_type(node.child_by_field_name("return_type"))
            c.returns(scope, node.child_by_field_name("name"), target)
        elif capture == "generic":
            name = node.child_by_field_name("name")
            if name is not None:
                c.generics.add(node_text(name))
    return c.marks()


def _ts_identifiers(node: Node) -> list[str]:
    return identifiers_in(node, _TS_NAMES, ("type_annotation", "string"))


def _ts_type(annotation: Node | None) -> Node | None:
    """The last name of ``: Foo`` / ``: ns.Foo`` / ``: Foo | undefined`` (where the type
    reference edge ends); no generics, arrays, or unions of two types."""
    if annotation is None or annotation.type != "type_annotation" or not annotation.named_child_count:
        return None
    node = annotation.named_children[0]
    if node.type == "union_type":
        parts = [c for c in node.named_children if not _ts_nothing(c)]
        if len(parts) != 1:
            return None
        node = parts[0]
    if node.type not in ("type_identifier", "nested_type_identifier"):
        return None
    walked = dotted_path(node)
    return walked[1] if walked is not None else None


def _ts_nothing(node: Node) -> bool:
    return node.type == "literal_type" and node_text(node) in ("undefined", "null")


def _ts_value(value: Node | None) -> _Binding:
    if value is None:
        return _UNKNOWN
    if value.type in ("null", "undefined"):
        return _NONE
    if value.type == "new_expression":
        callee = value.child_by_field_name("constructor")
    elif value.type == "call_expression":
        callee = value.child_by_field_name("function")
    else:
        return _UNKNOWN
    walked = dotted_path(callee) if callee is not None else None
    return _Binding("call", walked[1]) if walked is not None and UNKNOWN not in walked[0] else _UNKNOWN
