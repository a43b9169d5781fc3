"""What type a Kotlin name or property holds, where the code states it.

The design of :mod:`.bindings` for Kotlin: a name is typed when every binding of it
in its scope says the same thing — a typed parameter (``f: Foo``, ``f: Foo?``),
``val x: Foo``, ``val x = Foo()`` / ``= f.make()`` (the callee's result, resolved at
query time: a class is its instance, a function its declared return type), a
function's declared return type. Properties of a class and ``val`` / ``var``
constructor parameters are its attributes (``this.foo.go()``). Lambda, loop,
destructured and ``catch`` variables, a delegated property (``by lazy``), generic
types and a generic parameter's name leave a name untyped.
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
    value_after_equals,
)

_QUERY = """
(parameter) @param
(class_parameter) @classparam
(property_declaration) @prop
(lambda_parameters) @unknown
(for_statement (variable_declaration) @unknown)
(for_statement (multi_variable_declaration) @unknown)
(catch_block) @catch
(when_subject (variable_declaration) @unknown)
(function_declaration) @def
(type_parameter) @generic
"""
_NOT_VALUE = frozenset(
    {"modifiers", "binding_pattern_kind", "variable_declaration", "type_constraints", "getter", "setter"}
)


def kotlin_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """The typed bindings of one Kotlin file, as marks on the edges' end points."""
    c = Collector(classes)
    for capture, node in captures(compiled_query("kotlin", _QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            c.unknown(scope, _identifiers(node))
        elif capture == "catch":
            name = _child(node, ("simple_identifier",))
            if name is not None:
                c.bind(scope, node_text(name), _UNKNOWN)
        elif capture == "param":
            name = _child(node, ("simple_identifier",))
            if name is not None and _invoked(node):
                c.parameter(scope, node_text(name), _declared(node))
            elif name is not None:
                c.bind(scope, node_text(name), _declared(node))
        elif capture == "classparam":
            name = _child(node, ("simple_identifier",))
            held = any(n.type == "binding_pattern_kind" for n in node.named_children)
            if name is not None and held and scope in classes:  # `val bar: Bar`: a property
                c.attribute(scope, node_text(name), _declared(node))
        elif capture == "prop":
            _property(node, scope, c.bind)
        elif capture == "def":
            target = _kotlin_type(_child(node, ("user_type", "nullable_type")))
            c.returns(scope, _child(node, ("simple_identifier",)), target)
        elif capture == "generic":
            c.generics.update(_type_parameter(node))
    return c.marks()


def _property(prop: Node, scope: str, bind: Callable[[str, str, _Binding], None]) -> None:
    declared = _child(prop, ("variable_declaration",))
    if declared is None:  # `val (a, b) = …`
        for word in _identifiers(_child(prop, ("multi_variable_declaration",)) or prop):
            bind(scope, word, _UNKNOWN)
        return
    name = _child(declared, ("simple_identifier",))
    if name is None:
        return
    if _child(prop, ("property_delegate",)) is not None:
        bind(scope, node_text(name), _UNKNOWN)  # `by lazy { … }`: what the delegate gives
        return
    if _child(declared, ("user_type", "nullable_type", "function_type")) is not None:
        bind(scope, node_text(name), _declared(declared))
        return
    bind(scope, node_text(name), _value(value_after_equals(prop)))


def _invoked(param: Node) -> bool:
    """Whether a bare call of the function's parameter ``param`` calls the parameter: its
    type is a function type (``(Int) -> Unit``, ``(() -> Unit)?``, ``suspend T.() -> R``).
    A parameter of a class type is called only when its class has an ``operator fun invoke``;
    else ``flow { … }`` beside a parameter ``flow: Flow<T>`` calls the function ``flow`` — not
    known here, so such a call keeps its name. A function type's own parameter names nothing."""
    if param.parent is not None and param.parent.type == "function_type_parameters":
        return False
    node = _child(param, ("function_type", "nullable_type", "parenthesized_type"))
    while node is not None and node.type != "function_type":
        node = _child(node, ("function_type", "nullable_type", "parenthesized_type"))
    return node is not None


def _declared(node: Node) -> _Binding:
    target = _kotlin_type(_child(node, ("user_type", "nullable_type")))
    return annotated(target)


def _kotlin_type(node: Node | None) -> Node | None:
    """The last name of ``Foo`` / ``a.b.Foo`` / ``Foo?`` (where the type reference edge
    ends); no generic arguments."""
    if node is not None and node.type == "nullable_type":
        node = _child(node, ("user_type",))
    if node is None or node.type != "user_type":
        return None
    names = node.named_children
    if not names or any(c.type != "type_identifier" for c in names):
        return None  # `List<Foo>` is not a Foo
    return names[-1]


def _value(value: Node | None) -> _Binding:
    if value is None:
        return _UNKNOWN
    if value.type == "null_literal":
        return _NONE
    if value.type != "call_expression" or not value.named_child_count:
        return _UNKNOWN
    callee = value.named_children[0]
    suffix = _child(value, ("call_suffix",))
    plain = suffix is not None and all(c.type == "value_arguments" for c in suffix.named_children)
    return _Binding("call", callee) if plain and _dotted(callee) else _UNKNOWN


def _dotted(node: Node) -> bool:
    """``Foo`` / ``a.make`` / ``Foo().make``: what the call edge writes as a path."""
    if node.type == "simple_identifier":
        return True
    if node.type == "call_expression" and node.named_child_count:
        return _dotted(node.named_children[0])
    if node.type != "navigation_expression" or node.named_child_count != 2:
        return False
    target, suffix = node.named_children
    name = (
        suffix.named_children[0] if suffix.type == "navigation_suffix" and suffix.named_child_count else None
    )
    return (
        name is not None
        and name.type == "simple_identifier"
        and (target.type == "this_expression" or _dotted(target))
    )


def _child(node: Node, types: tuple[str, ...]) -> Node | None:
    return next((c for c in node.named_children if c.type in types), None)


def _identifiers(node: Node) -> list[str]:
    return identifiers_in(node, ("simple_identifier",), ("user_type", "nullable_type"))
