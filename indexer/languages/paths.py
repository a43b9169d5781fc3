"""Names as written: the dotted path of a callee or type expression, and import bindings.

Every grammar spells "``a.b.c``" differently (``attribute``, ``member_expression``,
``selector_expression``, ``scoped_identifier`` with ``::``, Kotlin's field-less
``navigation_expression``…). :func:`dotted_path` folds them into one form so the
graph resolves every language the same way: ``["self", "save"]``,
``["json", "loads"]``, ``["?", "map"]`` when the receiver is an expression.
"""

from __future__ import annotations

from tree_sitter import Node

from .base import Import, node_text

#: a receiver that is an expression (a call result, a subscript…): unknown type
UNKNOWN = "?"

_NAMES = frozenset(
    {
        "identifier",
        "simple_identifier",
        "type_identifier",
        "field_identifier",
        "property_identifier",
        "namespace_identifier",
        "package_identifier",
        "shorthand_property_identifier",
        "constant",
        "name",
    }
)
_SELF = {
    "this": "this",
    "self": "self",
    "super": "super",
    "base": "super",
    "crate": "crate",
    "self_expression": "self",
    "this_expression": "this",
    "super_expression": "super",
}
# node type → (receiver fields, name fields), first present wins
_MEMBERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "attribute": (("object",), ("attribute",)),
    "member_expression": (("object",), ("property",)),
    "selector_expression": (("operand",), ("field",)),
    "field_expression": (("value", "argument"), ("field",)),
    "scoped_identifier": (("path", "scope"), ("name",)),
    "field_access": (("object",), ("field",)),
    "qualified_identifier": (("scope",), ("name",)),
    "member_access_expression": (("expression",), ("name",)),
    "qualified_name": (("qualifier",), ("name",)),
    "qualified_type": (("package",), ("name",)),
    "scoped_type_identifier": (("path",), ("name",)),
    "nested_type_identifier": (("module",), ("name",)),
    "navigation_expression": (("target",), ("suffix",)),
    "method_invocation": (("object",), ("name",)),
}
# wrappers around a name: generics, templates, Swift/Kotlin user types
_WRAPPERS: dict[str, tuple[str, ...]] = {
    "generic_type": ("type", "name"),
    "template_function": ("name",),
    "template_type": ("name",),
    "generic_function": ("function",),
    "generic_name": (),
    "navigation_suffix": ("suffix",),
    "type_descriptor": ("type",),
    "parenthesized_type": (),
}
_MAX_DEPTH = 12
# calls whose result can be a receiver (Python, the C-like `call_expression`s, C#)
_CALLS = frozenset({"call", "call_expression", "invocation_expression"})

__all__ = ["UNKNOWN", "Import", "dotted_path", "reads_as_written", "text_parts"]


def reads_as_written(node_type: str, text: str) -> bool:
    """Whether :func:`dotted_path` reads a leaf of this type as its own text
    (``foo``, ``this``), unlike ``None``, ``base`` (→ ``super``) or a predefined type."""
    return node_type in _NAMES or _SELF.get(node_type) == text


def dotted_path(node: Node) -> tuple[list[str], Node] | None:
    """``(parts, name node)`` of a callee / type expression, or None when it names nothing.

    The name node is the last part's node: where a call hierarchy points.
    """
    return _walk(node, 0)


def _walk(node: Node, depth: int) -> tuple[list[str], Node] | None:
    t = node.type
    if t in _NAMES:
        return [node_text(node)], node
    if t in _SELF:
        return [_SELF[t]], node
    if depth > _MAX_DEPTH:
        return None
    if t == "call" and node_text(node.child_by_field_name("function")) == "super":  # Python super()
        return ["super"], node
    if depth == 0 and t == "prefix_expression" and (op := node.child_by_field_name("operation")) is not None:
        operand = node.child_by_field_name("target")  # Swift parses `!a.b()` as `(!a.b)()`
        if op.type == "." and operand is not None:
            # Swift's implicit member `.init(…)` / `.range(…)` / `.shared.make()`: a member
            # of the type the context expects, not of the scope it is written in — the type
            # when the code states it (see `_expected_type`), else a receiver we do not know
            expected = _expected_type(node)
            if operand.type == "simple_identifier" and expected is not None and node_text(operand) == "init":
                return expected, operand  # `.init(…)` where a `Foo` is expected is `Foo(…)`
            chain = _walk(operand, depth + 1)
            return ([*(expected or [UNKNOWN]), *chain[0]], chain[1]) if chain is not None else None
        return _walk(operand, depth + 1) if operand is not None else None
    if depth == 0 and (rhs := node.child_by_field_name("rhs")) is not None:
        return _walk(rhs, depth + 1)  # … and `x + a.b()` as `(x + a.b)()`
    if t in _CALLS and depth > 0:  # a receiver that is a call: `Foo().m`, `a.make().m`
        fn = node.child_by_field_name("function") or (
            node.named_children[0] if node.named_child_count else None
        )
        callee = _walk(fn, depth + 1) if fn is not None else None
        if callee is None or callee[0][-1] in (UNKNOWN, "super"):
            return None
        return [*callee[0][:-1], callee[0][-1] + "()"], node
    if t == "user_type":  # Swift / Kotlin: `A.B` as type_identifier children
        parts = [node_text(c) for c in node.named_children if c.type == "type_identifier"]
        last = [c for c in node.named_children if c.type == "type_identifier"]
        return (parts, last[-1]) if parts else None
    if t == "method_invocation" and depth > 0:  # Java: a receiver that is a call: `a.make().m`
        called = _member(node, _MEMBERS[t], depth)
        if called is None or called[0][-1] in (UNKNOWN, "super"):
            return [UNKNOWN], node
        return [*called[0][:-1], called[0][-1] + "()"], node
    member = _MEMBERS.get(t)
    if member is not None:
        return _member(node, member, depth)
    wrapper = _WRAPPERS.get(t)
    if wrapper is not None:
        inner = next((c for f in wrapper if (c := node.child_by_field_name(f)) is not None), None)
        if inner is None:
            inner = node.named_children[0] if node.named_child_count else None
        return _walk(inner, depth + 1) if inner is not None else None
    return None


def _expected_type(member: Node) -> list[str] | None:
    """The type a Swift implicit member call ``.name(…)`` is a member of, where the code
    states it: the annotation of the property it initialises (``let x: Foo = .init()``) or of
    the parameter it is the default of (``version: HTTPVersion = .init(…)``), or
    the declared result of the function or computed property it is returned from
    (``return .init(…)``, or the one expression of the body: ``-> Validator<T> {
    .range(…) }`` is ``Validator.range``), the type around ``self = .customLong(…)``.
    An optional (``Foo?``: ``.init`` may be ``Optional``'s), ``Self``, a tuple or function
    type, or a return inside a closure: None."""
    call = member.parent
    holder = call.parent if call is not None and call.type == "call_expression" else None
    if call is None or holder is None or call.named_children[0] != member:
        return None
    owner: Node | None = None
    before = call.prev_named_sibling
    if before is not None and before.type == "parameter" and holder.type in _RESULT_OWNERS:
        # a parameter's default (`version: HTTPVersion = .init(major: 1, minor: 1)`)
        owner = before if call in holder.children_by_field_name("default_value") else None
    elif holder.type == "property_declaration" and holder.child_by_field_name("value") == call:
        owner = holder
    elif holder.type == "control_transfer_statement" and holder.child_by_field_name("result") == call:
        owner = holder.parent
        while owner is not None and owner.type not in _RESULT_OWNERS:
            owner = owner.parent
    elif holder.type == "assignment" and holder.child_by_field_name("result") == call:
        # `self = .customLong(…)` in a struct's or enum's `init`: a value of the type itself
        target = holder.child_by_field_name("target")
        inner = target.named_children if target is not None else []
        if len(inner) == 1 and inner[0].type == "self_expression":
            owner = holder.parent
            while owner is not None and owner.type != "class_declaration":
                owner = owner.parent
            name = owner.child_by_field_name("name") if owner is not None else None
            if name is not None and name.type == "user_type":
                return [node_text(c) for c in name.named_children if c.type == "type_identifier"] or None
            return [node_text(name)] if name is not None and name.type == "type_identifier" else None
    elif holder.type == "statements" and holder.named_child_count == 1 and holder.parent is not None:
        owner = holder.parent.parent if holder.parent.type in ("function_body", "computed_property") else None
    if owner is None or owner.type not in ("function_declaration", "property_declaration", "parameter"):
        return None
    if owner.type == "parameter":
        declared = next((c for c in owner.named_children if c.type in _SWIFT_RESULTS), None)
    elif owner.type == "property_declaration":
        annotation = next((c for c in owner.named_children if c.type == "type_annotation"), None)
        declared = annotation.child_by_field_name("name") if annotation is not None else None
    else:
        declared = next((c for c in owner.named_children if c.type in _SWIFT_RESULTS), None)
    if declared is None or declared.type != "user_type":
        return None
    parts = [node_text(c) for c in declared.named_children if c.type == "type_identifier"]
    return parts if parts and "Self" not in parts else None


# a `return`'s owner: the function or property whose declared type it gives (a closure's
# `return` gives the closure's, which is not stated)
_RESULT_OWNERS = frozenset(
    {
        "function_declaration",
        "property_declaration",
        "lambda_literal",
        "init_declaration",
        "subscript_declaration",
    }
)
_SWIFT_RESULTS = frozenset(
    {"user_type", "optional_type", "tuple_type", "function_type", "array_type", "dictionary_type"}
)


def _member(
    node: Node, fields: tuple[tuple[str, ...], tuple[str, ...]], depth: int
) -> tuple[list[str], Node] | None:
    receivers, names = fields
    obj = next((c for f in receivers if (c := node.child_by_field_name(f)) is not None), None)
    name = next((c for f in names if (c := node.child_by_field_name(f)) is not None), None)
    named = node.named_children
    if name is None and obj is None and len(named) >= 2:  # Kotlin: no fields at all
        obj, name = named[0], named[-1]
    if name is None:
        return None
    tail = _walk(name, depth + 1)
    if tail is None:
        return None
    if obj is None:
        first = node.children[0] if node.child_count else None
        if first is not None and first.type in _SELF:  # C#: `this.M()` has no expression field
            return [_SELF[first.type], *tail[0]], tail[1]
        if node.type == "method_invocation":  # Java: a bare `m()`
            return tail
        return [UNKNOWN, *tail[0]], tail[1]
    head = _walk(obj, depth + 1)
    parts = head[0] if head is not None else [UNKNOWN]
    return [*parts, *tail[0]], tail[1]


def text_parts(node: Node | None) -> str:
    """A path as dotted text (``std::io`` → ``std.io``, ``"./x"`` → ``./x``)."""
    if node is None:
        return ""
    text = node_text(node).strip().strip("\"'`")
    return text.replace("::", ".").replace(" ", "")
