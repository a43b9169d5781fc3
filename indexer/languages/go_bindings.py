"""What type a Go name or struct field holds, where the code states it.

The design of :mod:`.bindings` (Python, Swift, Java, TypeScript) for Go: a name
is typed when every binding of it in its function says the same thing —

* a typed parameter or named result (``s *Server``, ``r Router``), ``var x Foo``;
* ``x := Foo{…}`` / ``&Foo{…}``, ``var x = Foo{…}`` (the literal's type);
* ``x := NewFoo()`` / ``x, err := pkg.NewFoo()`` (the first name only): the callee's
  declared (first) result type, resolved at query time.

A struct's fields (``router *Router``) are its attributes, so ``s.router.Handle()``
in a method of ``s``'s type resolves too. A declared type and a value's type never
mix (a ``:=`` in an inner block shadows a ``var``); a range, type-switch or receive
variable, a variadic parameter, any other value leaves the name untyped, and so
does a generic parameter's name. Pointers are their element type; slices, maps,
channels, function and generic types type nothing. A method's receiver needs no
binding: the parser already writes it as ``self``.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from .base import node_text
from .bindings import (
    _NONE,
    _UNKNOWN,
    Collector,
    Found,
    Marks,
    Point,
    _Binding,
    annotated,
    captures,
    compiled_query,
    narrowed_name,
)

_QUERY = """
(parameter_declaration) @param
(variadic_parameter_declaration) @unknown
(var_spec) @var
(short_var_declaration) @short
(range_clause left: (_) @unknown)
(type_switch_statement alias: (_) @unknown)
(receive_statement left: (_) @unknown)
(field_declaration) @field
(function_declaration) @def
(method_declaration) @def
(type_parameter_declaration) @generic
"""
_NAMED = frozenset({"type_identifier", "qualified_type"})


def go_marks(root: Node, at: Callable[[int], str]) -> Marks:
    """The typed bindings of one Go file, as marks on the edges' end points."""
    c = Collector()
    # a function literal's parameters: (literal start, end, name, its own name there)
    regions: list[tuple[Point, Point, str, str]] = []

    def param_name(name: Node, param: Node) -> str:
        """A parameter's name as the binder keys it: a function literal's parameter
        (``func(w http.ResponseWriter, r *http.Request)`` inside ``main``) is a name of its
        own, used inside the literal only, so the ``r := chi.NewRouter()`` of the function
        around it keeps its type."""
        text = node_text(name)
        literal = _literal_of(param)
        if literal is None:
            return text
        start, end = literal.start_point, literal.end_point
        own = narrowed_name(text, start)
        regions.append(((start[0], start[1]), (end[0], end[1]), text, own))
        return own

    for capture, node in captures(compiled_query("go", _QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            if node.type == "variadic_parameter_declaration":
                c.unknown(scope, (param_name(n, node) for n in node.children_by_field_name("name")))
            else:
                c.unknown(scope, (node_text(name) for name in _identifiers(node)))
        elif capture == "param":
            if _is_receiver(node):
                continue  # the receiver: written `self` by the parser
            b = _declared(node.child_by_field_name("type"))
            for name in node.children_by_field_name("name"):
                c.parameter(scope, param_name(name, node), b)
        elif capture == "var":
            names = node.children_by_field_name("name")
            values = node.child_by_field_name("value")
            if node.child_by_field_name("type") is not None:
                b = _declared(node.child_by_field_name("type"))
                for name in names:
                    c.bind(scope, node_text(name), b)
            else:
                _by_values(scope, names, values.named_children if values is not None else [], c.bind)
        elif capture == "short":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            names = [n for n in (left.named_children if left is not None else []) if n.type == "identifier"]
            _by_values(scope, names, right.named_children if right is not None else [], c.bind)
        elif capture == "field":
            owner = _struct_owner(node)
            if owner:
                b = _declared(node.child_by_field_name("type"))
                for name in node.children_by_field_name("name"):
                    c.attribute(owner, node_text(name), b)
        elif capture == "def":
            c.returns(
                scope, node.child_by_field_name("name"), _result_type(node.child_by_field_name("result"))
            )
        elif capture == "generic":
            c.generics.update(node_text(n) for n in node.children_by_field_name("name"))
    marks = c.marks(_single_kind)
    marks.narrowed += regions
    return marks


def _literal_of(param: Node) -> Node | None:
    """The function literal whose parameter list ``param`` is in, or None."""
    plist = param.parent
    fn = plist.parent if plist is not None else None
    if fn is not None and fn.type == "func_literal" and plist == fn.child_by_field_name("parameters"):
        return fn
    return None


def _is_receiver(param: Node) -> bool:
    plist = param.parent
    method = plist.parent if plist is not None else None
    return (
        method is not None
        and method.type == "method_declaration"
        and plist == method.child_by_field_name("receiver")
    )


def _single_kind(found: Found) -> Found:
    """A declared type does not win over a value's in Go (an inner ``:=`` shadows): both
    kinds in one scope leave the name untyped."""
    return {
        key: bindings if len({b.how for b in bindings} - {"none"}) <= 1 else [_UNKNOWN]
        for key, bindings in found.items()
    }


def _named(node: Node | None) -> Node | None:
    """The type a declaration names: ``Foo``, ``pkg.Foo``, ``*Foo``; nothing else."""
    if node is not None and node.type == "pointer_type":
        node = node.named_children[0] if node.named_child_count == 1 else None
    return node if node is not None and node.type in _NAMED else None


def _declared(type_node: Node | None) -> _Binding:
    target = _named(type_node)
    return annotated(target)


def _by_values(
    scope: str, names: list[Node], values: list[Node], bind: Callable[[str, str, _Binding], None]
) -> None:
    """``a, b := x, y`` pairs names with values; ``x, err := f()`` types only ``x``."""
    if len(values) == len(names):
        for name, value in zip(names, values, strict=True):
            bind(scope, node_text(name), _value(value))
        return
    for i, name in enumerate(names):
        first = i == 0 and len(values) == 1 and values[0].type == "call_expression"
        bind(scope, node_text(name), _value(values[0]) if first else _UNKNOWN)


def _value(value: Node) -> _Binding:
    if value.type == "unary_expression" and node_text(value.child_by_field_name("operator")) == "&":
        inner = value.child_by_field_name("operand")
        value = inner if inner is not None and inner.type == "composite_literal" else value
    if value.type == "composite_literal":
        target = value.child_by_field_name("type")
        return _Binding("ann", target) if target is not None and target.type in _NAMED else _UNKNOWN
    if value.type == "nil":
        return _NONE
    if value.type == "call_expression":
        fn = value.child_by_field_name("function")
        if fn is not None and _plain(fn) and value.child_by_field_name("type_arguments") is None:
            return _Binding("call", fn)
    return _UNKNOWN


def _plain(node: Node) -> bool:
    """``f`` / ``pkg.F`` / ``a.b.F``: a callee the edges write as a path."""
    if node.type == "identifier":
        return True
    operand = node.child_by_field_name("operand")
    return node.type == "selector_expression" and operand is not None and _plain(operand)


def _result_type(result: Node | None) -> Node | None:
    """A function's (first) declared result type."""
    if result is not None and result.type == "parameter_list":
        first = next((c for c in result.named_children if c.type == "parameter_declaration"), None)
        result = first.child_by_field_name("type") if first is not None else None
    return _named(result)


def _struct_owner(field: Node) -> str:
    """The type a field belongs to: ``type Server struct { … }`` → its name, "" for an
    anonymous struct."""
    struct = field.parent.parent if field.parent is not None else None
    spec = struct.parent if struct is not None else None
    if struct is None or struct.type != "struct_type" or spec is None or spec.type != "type_spec":
        return ""
    if spec.child_by_field_name("type") != struct:
        return ""
    declaration = spec.parent
    top = (
        declaration is not None
        and declaration.parent is not None
        and declaration.parent.type == "source_file"
    )
    return node_text(spec.child_by_field_name("name")) if top else ""  # a type in a function: no


def _identifiers(node: Node) -> list[Node]:
    if node.type == "identifier":
        return [node]
    return [c for c in node.named_children if c.type == "identifier"]
