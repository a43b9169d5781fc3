"""What type a Swift name or property holds, where the code states it.

The design of :mod:`.bindings` for Swift (``swift_marks`` lists what types a name and
what leaves it untyped).
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
    _Binding,
    _type_parameter,
    annotated,
    captures,
    compiled_query,
    identifiers_in,
)
from .swift_sdk import imported_modules, label, stated_value

_SWIFT_QUERY = """
(parameter) @param
(property_declaration) @prop
(lambda_parameter) @unknown
(for_statement item: (_) @unknown)
(pattern) @pattern
(_ bound_identifier: (_) @bound)
(catch_block) @catch
(prefix_expression) @prefix
(capture_list_item) @unknown
(type_parameter) @generic
(function_declaration) @def
(protocol_function_declaration) @def
"""


def swift_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> tuple[Marks, list[Node]]:
    """Swift's typed bindings: ``request: Request`` parameters, ``let x: Foo`` / ``var x =
    Foo(…)`` locals, properties of types and extensions (``var auth: Authentication``)
    as attributes, and functions' declared return types (``-> Foo``, ``-> Foo?``).
    Closure parameters, loop / ``if let`` / ``guard let`` / ``case let`` / ``catch``
    bindings and tuple patterns leave a name untyped. A name declared with a type of the
    SDK table (``storage = Mutex<Foo>(…)``, :mod:`.swift_sdk`) also binds what the closures
    of its methods get (``storage{withLock$0}``) to ``Foo``: the marks, and the type
    arguments' name nodes that carry a mark (they need a reference edge)."""
    c = Collector(classes)
    sdk = _Closures(imported_modules(root))
    for capture, node in captures(compiled_query("swift", _SWIFT_QUERY), root):
        scope = at(node.start_byte)
        if capture == "unknown":
            c.unknown(scope, _identifiers(node))
        elif capture == "pattern":
            if not _property_name(node):
                c.unknown(scope, _bound_names(node))
        elif capture == "bound":
            if not _property_name(node):
                c.unknown(scope, _identifiers(node))
        elif capture == "prefix":
            target = node.child_by_field_name("target")
            if target is not None and target.type == "simple_identifier" and node_text(node).startswith("."):
                c.members.add((target.end_point.row, target.end_point.column))  # `.range(…)`
        elif capture == "catch":
            c.bind(scope, "error", _UNKNOWN)
        elif capture == "param":
            _swift_parameter(node, scope, c.bind, sdk)
        elif capture == "prop":
            _swift_property(node, scope, c.bind, sdk)
        elif capture == "generic":
            c.generics.update(_type_parameter(node))
        elif capture == "def":
            returned = next(
                (n for n in node.named_children if n.type in ("user_type", "optional_type")), None
            )
            c.returns(scope, node.child_by_field_name("name"), _swift_type(returned))
    marks = c.marks(sdk.rule(c.elsewhere))
    # a type argument no mark landed on (a generic parameter's `T`) gets no edge
    return marks, [v for v in sdk.values if (v.end_point.row, v.end_point.column) in marks]


class _Closures:
    """The names a file declares with a type of the SDK table (``Mutex<Foo>``) and what the
    closures of its methods get (``name{withLock$0}`` → ``Foo``), for the names whose
    every binding in their scope says so."""

    def __init__(self, modules: set[str]) -> None:
        self.modules = modules
        self.declared: set[int] = set()  # the ids of the declaring bindings (of `name` itself)
        self.labels: dict[str, set[str]] = {}  # name → the suffixes bound for it in the file
        self.values: list[Node] = []  # the type arguments' last names (`Foo`)

    def bind(self, scope: str, name: str, declared: Node | None, bind: SwiftBind) -> bool:
        """Bind ``name`` declared as ``declared`` when that is a type of the table; whether it was."""
        if not self.modules:
            return False
        stated = stated_value(declared, self.modules)
        if stated is None:
            return False
        entries, value = stated
        own = _Binding("unknown", value)  # the name itself: a Mutex, no type the graph knows
        self.declared.add(id(own))
        bind(scope, name, own)
        for entry in entries:
            suffix = label(entry.method)
            self.labels.setdefault(name, set()).add(suffix)
            bind(scope, name + suffix, _Binding("ann", value))
        self.values.append(value)
        return True

    def rule(self, elsewhere: set[str]) -> Callable[[Found], Found]:
        """What the closures get is typed only where every binding of the name in its scope
        is such a declaration (and a table type without that method types nothing); a
        scope that binds the name otherwise binds it untyped, so a use there is never read
        from another scope (a module-level name bound in a function too is not typed)."""

        def apply(found: Found) -> Found:
            if not self.labels:
                return found
            out = dict(found)
            for (kind, scope, name), bindings in found.items():
                suffixes = self.labels.get(name, ())
                agreed = all(id(b) in self.declared for b in bindings)
                for suffix in suffixes:
                    key = (kind, scope, name + suffix)
                    if agreed:
                        out.setdefault(key, [_UNKNOWN])
                    else:
                        out[key] = [_UNKNOWN]
                    if scope:
                        elsewhere.add(name + suffix)
            return out

        return apply


def _bound_names(pattern: Node) -> list[str]:
    """The name one pattern node binds: its ``bound_identifier`` (``let n``, ``case let n``),
    or its one identifier under a ``let`` / ``var`` (``a`` of ``case let .pair(a, b)``).
    An enum case's name (``pair``) or an expression matched against (``case A.b``,
    ``case .some(x)`` without ``let``) binds nothing."""
    bound = pattern.child_by_field_name("bound_identifier")
    if bound is not None:
        return [node_text(bound)]
    kids = pattern.named_children
    if len(kids) != 1 or kids[0].type != "simple_identifier":
        return []
    node: Node | None = pattern
    while node is not None and node.type == "pattern":
        if any(c.type == "value_binding_pattern" for c in node.children):
            return [node_text(kids[0])]
        node = node.parent
    return []


def _property_name(node: Node) -> bool:
    """Whether a pattern (or its bound identifier) is the name a property declaration binds."""
    pattern = node if node.type == "pattern" else node.parent
    parent = pattern.parent if pattern is not None else None
    return pattern is not None and parent is not None and parent.type == "property_declaration"


def _identifiers(node: Node) -> list[str]:
    return identifiers_in(node, ("simple_identifier",))


def _swift_type(node: Node | None) -> Node | None:
    """The last name of ``Foo`` / ``A.B`` / ``Foo?``: where the type reference edge ends."""
    if node is not None and node.type == "optional_type":
        node = node.child_by_field_name("wrapped")
    if node is None or node.type != "user_type":
        return None
    names = [c for c in node.named_children if c.type == "type_identifier"]
    if not names or len(names) != node.named_child_count:
        return None  # generic arguments: `Array<Foo>` is not a Foo
    return names[-1]


def _swift_dotted(node: Node | None) -> bool:
    if node is None:
        return False
    if node.type == "simple_identifier":
        return True
    if node.type == "navigation_expression":
        suffix = node.child_by_field_name("suffix")
        name = suffix.child_by_field_name("suffix") if suffix is not None else None
        return (
            name is not None
            and name.type == "simple_identifier"
            and _swift_dotted(node.child_by_field_name("target"))
        )
    return False


SwiftBind = Callable[[str, str, _Binding], None]


def _swift_parameter(param: Node, scope: str, bind: SwiftBind, sdk: _Closures) -> None:
    name = next((c for c in param.named_children if c.type == "simple_identifier"), None)
    if param.child_by_field_name("external_name") is not None:
        names = [c for c in param.named_children if c.type == "simple_identifier"]
        name = names[1] if len(names) > 1 else None
    if name is None:
        return
    variadic = any(c.type == "..." for c in param.children) or "..." in node_text(param)
    declared = next((c for c in param.named_children if c.type == "user_type"), None)
    if not variadic and sdk.bind(scope, node_text(name), declared, bind):
        return
    target = next((t for c in param.named_children if (t := _swift_type(c)) is not None), None)
    ok = target is not None and not variadic
    bind(scope, node_text(name), _Binding("ann", target) if ok else _UNKNOWN)


def _swift_property(prop: Node, scope: str, bind: SwiftBind, sdk: _Closures) -> None:
    pattern = prop.child_by_field_name("name")
    if pattern is None:
        return
    ident = pattern.child_by_field_name("bound_identifier")
    if ident is None or pattern.named_child_count != 1:
        for name in _identifiers(pattern):  # a tuple pattern: nothing typed
            bind(scope, name, _UNKNOWN)
        return
    name = node_text(ident)
    annotation = next((c for c in prop.named_children if c.type == "type_annotation"), None)
    value = prop.child_by_field_name("value")
    if annotation is not None:
        declared = annotation.child_by_field_name("name")
    else:  # `Mutex<Foo>(…)`: a constructor of the type written with its argument
        made = value is not None and value.type == "constructor_expression"
        declared = value.child_by_field_name("constructed_type") if made and value is not None else None
    if sdk.bind(scope, name, declared, bind):
        return
    if annotation is not None:
        target = _swift_type(annotation.child_by_field_name("name"))
        bind(scope, name, annotated(target))
        return
    if value is not None and value.type == "nil_literal":
        bind(scope, name, _NONE)
        return
    callee = value.named_children[0] if value is not None and value.type == "call_expression" else None
    ok = callee is not None and _swift_dotted(callee) and value is not None and _plain_call(value)
    bind(scope, name, _Binding("call", callee) if ok else _UNKNOWN)


def _plain_call(call: Node) -> bool:
    """``Foo(…)``: a call with arguments only, no trailing closure (whose result may differ)."""
    suffix = next((c for c in call.named_children if c.type == "call_suffix"), None)
    return suffix is not None and all(c.type == "value_arguments" for c in suffix.named_children)
