"""What type a local name or attribute holds, where the code states it (Python).

The graph resolves ``ctx.invoke`` only when it knows what ``ctx`` is. The parser
reads it from the code and never guesses: a name is typed when every binding of
it in its scope says the same thing —

* an annotation (``ctx: Context``, ``x: Optional[Foo] = None``, ``-> Foo``): the
  declared type wins over assignments of calls, as for a type checker;
* otherwise every assignment is a call of the same callee (``x = Foo(…)``,
  ``x = self.make()``) or ``None``: the callee's result (a class → its instance,
  a function → its return annotation, resolved at query time);
* ``with Foo() as x``: what ``Foo().__enter__`` is annotated to return.

Any other binding of the name in the scope (a loop target, a tuple unpacking, an
unannotated parameter, ``+=``, a walrus, an import, a nested ``def``, a lambda or
comprehension variable, ``except … as``, a call of something else) leaves it
untyped. Attributes (``self.x = Foo()``, a class-body ``x: Foo``) are pooled per
class over all its methods. Module-level names count only when no other scope
in the file binds the same name.

The answer marks existing edges: the call or type reference edge at the
callee / annotation gets ``alias`` = the bound name (``x``, ``self.x``,
``return``; prefixed ``with:`` for a ``with`` target). Edges keep their meaning;
the resolver reads the marks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass

from tree_sitter import Node, Query, QueryCursor

from .. import grammars
from .base import node_text
from .paths import UNKNOWN, dotted_path

#: marks: the end point (row, byte column) of a callee / annotation node → the bound name
Marks = dict[tuple[int, int], str]

RETURN = "return"
WITH = "with:"

_QUERY = """
(assignment) @assign
(augmented_assignment left: (_) @unknown)
(for_statement left: (_) @unknown)
(for_in_clause left: (_) @unknown)
(named_expression name: (_) @unknown)
(with_item) @with
(except_clause (as_pattern (as_pattern_target) @unknown))
(parameters) @params
(lambda_parameters) @unknown
(function_definition) @def
(class_definition name: (_) @defname)
(import_statement) @import
(import_from_statement) @import
(global_statement) @global
(nonlocal_statement) @unknown
(case_pattern) @unknown
"""
_query: Query | None = None


def _compiled() -> Query:
    global _query
    if _query is None:
        _query = Query(grammars.language("python"), _QUERY)
    return _query


@dataclass(frozen=True, slots=True)
class _Binding:
    how: str  # "ann", "call", "with", "none", "unknown"
    node: Node | None = None  # the annotation's type name / the callee

    @property
    def text(self) -> str:
        return node_text(self.node)


_UNKNOWN = _Binding("unknown")
_NONE = _Binding("none")


def python_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """The typed bindings of one file, as marks on the edges' end points."""
    found: dict[tuple[str, str, str], list[_Binding]] = defaultdict(list)
    elsewhere: set[str] = set()  # names bound in a scope other than the module's

    def scope_of(node: Node) -> str:
        return at(node.start_byte)

    def bind(scope: str, target: Node, b: _Binding) -> None:
        for name in _names(target):
            if name.startswith("self."):
                if scope in classes:
                    continue  # `self.x` in a class body is not an attribute binding
                owner = scope.rpartition(".")[0]
                if owner in classes:
                    found[("attr", owner, name[5:])].append(b)
            elif scope in classes:  # a class body: the class's attribute
                found[("attr", scope, name)].append(b)
                elsewhere.add(name)
            else:
                found[("local", scope, name)].append(b)
                if scope:
                    elsewhere.add(name)

    for capture, nodes in QueryCursor(_compiled()).captures(root).items():
        for node in nodes:
            if capture == "unknown":
                bind(scope_of(node), node, _UNKNOWN)
            elif capture == "assign":
                _assignment(node, scope_of(node), bind)
            elif capture == "with":
                _with(node, scope_of(node), bind)
            elif capture == "params":
                _parameters(node, scope_of(node), bind)
            elif capture == "def":
                name = node.child_by_field_name("name")
                if name is not None:
                    bind(_outer_scope(node, at), name, _UNKNOWN)
                ret = node.child_by_field_name("return_type")
                target = _type_name(ret)
                if target is not None and _own_scope(scope_of(node), name):
                    found[(RETURN, scope_of(node), "")].append(_Binding("ann", target))
            elif capture == "defname":
                bind(_outer_scope(node.parent or node, at), node, _UNKNOWN)
            elif capture == "import":
                scope = scope_of(node)
                for item in node.children_by_field_name("name"):
                    alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                    first = alias or (item.named_children[0] if item.type == "dotted_name" else item)
                    bind(scope, first, _UNKNOWN)
            elif capture == "global":
                for name in node.named_children:
                    bind(scope_of(node), name, _UNKNOWN)
                    bind("", name, _UNKNOWN)
    return _decide(found, elsewhere)


def _outer_scope(definition: Node, at: Callable[[int], str]) -> str:
    """The scope a ``def`` / ``class`` name is bound in: the one around its statement."""
    parent = definition.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    if parent is None or parent.type == "module":
        return ""
    return at(parent.start_byte)


def _own_scope(scope: str, name: Node | None) -> bool:
    """Whether a definition is the scope its code is credited to: a function nested in
    another (or a method of an anonymous class) is not, and its return type is not the
    outer one's."""
    return name is not None and scope.rsplit(".", 1)[-1] == node_text(name)


def _type_parameter(node: Node) -> list[str]:
    """The name a generic parameter declares (``T`` of ``<T: P>`` / ``<T extends P>``)."""
    first = next((c for c in node.named_children if c.type in ("type_identifier", "identifier")), None)
    return [node_text(first)] if first is not None else []


def _without_generics(
    found: dict[tuple[str, str, str], list[_Binding]], generics: set[str]
) -> dict[tuple[str, str, str], list[_Binding]]:
    """A type written as a generic parameter's name (anywhere in the file) types nothing:
    ``T`` is whatever the caller says, never a class of that name."""
    if not generics:
        return found
    out: dict[tuple[str, str, str], list[_Binding]] = {}
    for key, bindings in found.items():
        out[key] = [_UNKNOWN if b.how == "ann" and b.text.split(".")[0] in generics else b for b in bindings]
    return out


def _decide(found: dict[tuple[str, str, str], list[_Binding]], elsewhere: set[str]) -> Marks:
    marks: Marks = {}
    for (kind, scope, name), bindings in found.items():
        if kind == "local" and not scope and name in elsewhere:
            continue
        chosen = _agreed(bindings)
        if not chosen:
            continue
        label = RETURN if kind == RETURN else f"self.{name}" if kind == "attr" else name
        for b in chosen:
            assert b.node is not None
            marks[(b.node.end_point.row, b.node.end_point.column)] = (WITH if b.how == "with" else "") + label
    return marks


def _agreed(bindings: list[_Binding]) -> list[_Binding]:
    """The bindings that type a name, or none when they do not agree (or one is unknown)."""
    if any(b.how == "unknown" for b in bindings):
        return []  # a loop / lambda / comprehension / closure variable, a nested def's parameter…
    declared = [b for b in bindings if b.how == "ann"]
    if declared:
        return declared if len({b.text for b in declared}) == 1 else []
    calls = [b for b in bindings if b.how != "none"]
    if not calls or len({(b.how, b.text) for b in calls}) != 1:
        return []
    return calls


def _names(target: Node) -> list[str]:
    """The names a binding target binds: ``x``, ``self.x``; tuples and stars unpacked;
    subscripts and other attributes bind no name."""
    t = target.type
    if t == "identifier":
        return [node_text(target)]
    if t == "attribute":
        obj, attr = target.child_by_field_name("object"), target.child_by_field_name("attribute")
        if obj is not None and attr is not None and obj.type == "identifier" and node_text(obj) == "self":
            return [f"self.{node_text(attr)}"]
        return []
    if t in ("subscript", "call", "string", "integer", "none", "true", "false"):
        return []
    out: list[str] = []
    for child in target.named_children:
        out += _names(child)
    return out


def _type_name(type_node: Node | None) -> Node | None:
    """The class an annotation names: ``Foo``, ``m.Foo``, ``Optional[Foo]``, ``Foo | None``."""
    if type_node is None:
        return None
    node = type_node.named_children[0] if type_node.type == "type" and type_node.named_child_count else None
    if node is None:
        return None
    if node.type in ("identifier", "attribute"):
        return node if _dotted(node) else None
    if node.type == "generic_type":  # Optional[Foo]
        head = node.named_children[0] if node.named_child_count else None
        params = node.named_children[1] if node.named_child_count > 1 else None
        if head is None or node_text(head) != "Optional" or params is None:
            return None
        inner = params.named_children
        return _type_name(inner[0]) if len(inner) == 1 else None
    if node.type == "binary_operator":  # Foo | None
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and right is not None:
            if right.type == "none" and left.type in ("identifier", "attribute") and _dotted(left):
                return left
            if left.type == "none" and right.type in ("identifier", "attribute") and _dotted(right):
                return right
    return None


def _dotted(node: Node) -> bool:
    """``a.b.c``, also through calls (``Foo().make``): what the edges write as a path."""
    if node.type == "identifier":
        return True
    if node.type == "call":
        fn = node.child_by_field_name("function")
        return fn is not None and _dotted(fn)
    obj = node.child_by_field_name("object")
    return node.type == "attribute" and obj is not None and _dotted(obj)


def _callee(value: Node | None) -> Node | None:
    """The callee of ``Foo(…)`` / ``a.make(…)`` when it is a dotted name."""
    if value is None or value.type != "call":
        return None
    fn = value.child_by_field_name("function")
    return fn if fn is not None and _dotted(fn) else None


Bind = Callable[[str, Node, _Binding], None]


def _value_binding(value: Node | None) -> _Binding:
    if value is not None and value.type == "none":
        return _NONE
    callee = _callee(value)
    return _Binding("call", callee) if callee is not None else _UNKNOWN


def _assignment(node: Node, scope: str, bind: Bind) -> None:
    left = node.child_by_field_name("left")
    if left is None:
        return
    target = _type_name(node.child_by_field_name("type"))
    if target is not None:
        bind(scope, left, _Binding("ann", target))
        return
    if node.child_by_field_name("type") is not None and node.child_by_field_name("right") is None:
        bind(scope, left, _UNKNOWN)  # `x: list[int]`: declared, not a class we name
        return
    if left.type not in ("identifier", "attribute"):
        bind(scope, left, _UNKNOWN)  # unpacking: nothing typed
        return
    bind(scope, left, _value_binding(node.child_by_field_name("right")))


def _with(item: Node, scope: str, bind: Bind) -> None:
    pattern = item.child_by_field_name("value")
    if pattern is None or pattern.type != "as_pattern":
        return
    target = next((c for c in pattern.named_children if c.type == "as_pattern_target"), None)
    if target is None:
        return
    value = pattern.named_children[0] if pattern.named_child_count else None
    callee = _callee(value)
    bind(scope, target, _Binding("with", callee) if callee is not None else _UNKNOWN)


def _parameters(params: Node, scope: str, bind: Bind) -> None:
    for p in params.named_children:
        if p.type == "identifier":
            bind(scope, p, _UNKNOWN)
        elif p.type in ("typed_parameter", "typed_default_parameter"):
            name = p.child_by_field_name("name") or (p.named_children[0] if p.named_child_count else None)
            if name is None:
                continue
            target = _type_name(p.child_by_field_name("type"))
            plain = name.type == "identifier"
            bind(scope, name, _Binding("ann", target) if plain and target is not None else _UNKNOWN)
        elif p.type == "default_parameter":
            name = p.child_by_field_name("name")
            if name is not None:
                bind(scope, name, _UNKNOWN)
        else:  # *args, **kwargs
            bind(scope, p, _UNKNOWN)


# ----- Swift -------------------------------------------------------------------------

_SWIFT_QUERY = """
(parameter) @param
(property_declaration) @prop
(lambda_parameter) @unknown
(for_statement item: (_) @unknown)
(pattern) @pattern
(_ bound_identifier: (_) @bound)
(catch_block) @catch
(switch_pattern) @unknown
(capture_list_item) @unknown
(type_parameter) @generic
"""
_swift_query: Query | None = None


def swift_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """Swift's typed bindings: ``request: Request`` parameters, ``let x: Foo`` / ``var x =
    Foo(…)`` locals, and properties of types and extensions (``var auth: Authentication``)
    as attributes. Closure parameters, loop / ``if let`` / ``guard let`` / ``case let`` /
    ``catch`` bindings and tuple patterns leave a name untyped."""
    global _swift_query
    if _swift_query is None:
        _swift_query = Query(grammars.language("swift"), _SWIFT_QUERY)
    found: dict[tuple[str, str, str], list[_Binding]] = defaultdict(list)
    elsewhere: set[str] = set()
    generics: set[str] = set()

    def bind(scope: str, name: str, b: _Binding) -> None:
        if scope in classes:
            found[("attr", scope, name)].append(b)
            elsewhere.add(name)
        else:
            found[("local", scope, name)].append(b)
            if scope:
                elsewhere.add(name)

    def unknown(node: Node) -> None:
        scope = at(node.start_byte)
        for name in _identifiers(node):
            bind(scope, name, _UNKNOWN)

    for capture, nodes in QueryCursor(_swift_query).captures(root).items():
        for node in nodes:
            if capture == "unknown":
                unknown(node)
            elif capture == "pattern" or capture == "bound":
                if not _property_name(node):
                    unknown(node)
            elif capture == "catch":
                bind(at(node.start_byte), "error", _UNKNOWN)
            elif capture == "param":
                _swift_parameter(node, at(node.start_byte), bind)
            elif capture == "prop":
                _swift_property(node, at(node.start_byte), bind)
            elif capture == "generic":
                generics.update(_type_parameter(node))
    return _decide(_without_generics(found, generics), elsewhere)


def _property_name(node: Node) -> bool:
    """Whether a pattern (or its bound identifier) is the name a property declaration binds."""
    pattern = node if node.type == "pattern" else node.parent
    parent = pattern.parent if pattern is not None else None
    return pattern is not None and parent is not None and parent.type == "property_declaration"


def identifiers_in(node: Node, names: Collection[str], skip: Collection[str] = ()) -> list[str]:
    """The names a binding pattern binds: ``node`` itself when it is one of ``names``,
    else every such node below it, not looking inside node types in ``skip``."""
    if node.type in names:
        return [node_text(node)]
    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        for c in n.named_children:
            if c.type in names:
                out.append(node_text(c))
            elif c.type not in skip:
                stack.append(c)
    return out


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


def _swift_parameter(param: Node, scope: str, bind: SwiftBind) -> None:
    name = next((c for c in param.named_children if c.type == "simple_identifier"), None)
    if param.child_by_field_name("external_name") is not None:
        names = [c for c in param.named_children if c.type == "simple_identifier"]
        name = names[1] if len(names) > 1 else None
    if name is None:
        return
    target = next((t for c in param.named_children if (t := _swift_type(c)) is not None), None)
    variadic = any(c.type == "..." for c in param.children) or "..." in node_text(param)
    ok = target is not None and not variadic
    bind(scope, node_text(name), _Binding("ann", target) if ok else _UNKNOWN)


def _swift_property(prop: Node, scope: str, bind: SwiftBind) -> None:
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
    if annotation is not None:
        target = _swift_type(annotation.child_by_field_name("name"))
        bind(scope, name, _Binding("ann", target) if target is not None else _UNKNOWN)
        return
    value = prop.child_by_field_name("value")
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


# ----- Java --------------------------------------------------------------------------

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
_java_query: Query | None = None
_JAVA_TYPES = frozenset({"type_identifier", "scoped_type_identifier"})


def java_marks(root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """Java's typed bindings: ``Foo x`` parameters, locals and fields (``var x = new
    Foo()`` / ``= a.make()`` by the value), a method's declared return type. Lambda,
    loop, catch, resource and pattern variables leave a name untyped."""
    global _java_query
    if _java_query is None:
        _java_query = Query(grammars.language("java"), _JAVA_QUERY)
    found: dict[tuple[str, str, str], list[_Binding]] = defaultdict(list)
    elsewhere: set[str] = set()
    generics: set[str] = set()

    def bind(scope: str, name: str, b: _Binding) -> None:
        key = ("attr", scope, name) if scope in classes else ("local", scope, name)
        found[key].append(b)
        if scope:
            elsewhere.add(name)

    for capture, nodes in QueryCursor(_java_query).captures(root).items():
        for node in nodes:
            scope = at(node.start_byte)
            if capture == "unknown":
                for word in _java_identifiers(node):
                    bind(scope, word, _UNKNOWN)
            elif capture == "param":
                name = node.child_by_field_name("name")
                target = _java_type(node.child_by_field_name("type"))
                if name is not None:
                    bind(scope, node_text(name), _Binding("ann", target) if target is not None else _UNKNOWN)
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
                    bind(scope, node_text(name), b)
            elif capture == "method":
                target = _java_type(node.child_by_field_name("type"))
                if target is not None and _own_scope(scope, node.child_by_field_name("name")):
                    found[(RETURN, scope, "")].append(_Binding("ann", target))
            elif capture == "generic":
                generics.update(_type_parameter(node))
    return _decide(_without_generics(found, generics), elsewhere)


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


# ----- TypeScript ----------------------------------------------------------------------

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
_ts_queries: dict[str, Query] = {}
_TS_NAMES = frozenset({"identifier", "shorthand_property_identifier_pattern", "property_identifier"})


def typescript_marks(language: str, root: Node, at: Callable[[int], str], classes: set[str]) -> Marks:
    """TypeScript's typed bindings: ``x: Foo`` parameters (``private svc: Svc`` in a
    constructor is an attribute too), ``const x: Foo`` / ``= new Foo()`` / ``= make()``,
    class fields, ``this.x = new Foo()``, declared return types. Arrow, loop, catch and
    destructured variables, reassignments and imports leave a name untyped."""
    query = _ts_queries.get(language)
    if query is None:
        query = _ts_queries[language] = Query(grammars.language(language), _TS_QUERY)
    found: dict[tuple[str, str, str], list[_Binding]] = defaultdict(list)
    elsewhere: set[str] = set()
    generics: set[str] = set()

    def bind(scope: str, name: str, b: _Binding) -> None:
        key = ("attr", scope, name) if scope in classes else ("local", scope, name)
        found[key].append(b)
        if scope:
            elsewhere.add(name)

    def owner(scope: str) -> str | None:
        cls = scope.rpartition(".")[0]
        return cls if cls in classes else None

    for capture, nodes in QueryCursor(query).captures(root).items():
        for node in nodes:
            scope = at(node.start_byte)
            if capture == "unknown":
                for word in _ts_identifiers(node):
                    bind(scope, word, _UNKNOWN)
            elif capture == "param":
                pattern = node.child_by_field_name("pattern")
                target = _ts_type(node.child_by_field_name("type"))
                if pattern is None:
                    continue
                if pattern.type != "identifier":
                    for word in _ts_identifiers(pattern):  # `...rest`, `{ a, b }`
                        bind(scope, word, _UNKNOWN)
                    continue
                b = _Binding("ann", target) if target is not None else _UNKNOWN
                bind(scope, node_text(pattern), b)
                cls = owner(scope)
                modifiers = {c.type for c in node.named_children}
                if cls is not None and modifiers & {"accessibility_modifier", "readonly"}:
                    found[("attr", cls, node_text(pattern))].append(b)  # a parameter property
            elif capture == "var":
                name = node.child_by_field_name("name")
                if name is None:
                    continue
                if name.type != "identifier":
                    for word in _ts_identifiers(name):
                        bind(scope, word, _UNKNOWN)
                    continue
                target = _ts_type(node.child_by_field_name("type"))
                if target is not None:
                    bind(scope, node_text(name), _Binding("ann", target))
                elif node.child_by_field_name("type") is not None:
                    bind(scope, node_text(name), _UNKNOWN)
                else:
                    bind(scope, node_text(name), _ts_value(node.child_by_field_name("value")))
            elif capture == "field":
                name = node.child_by_field_name("name")
                if name is None or scope not in classes:
                    continue
                target = _ts_type(node.child_by_field_name("type"))
                typed = node.child_by_field_name("type") is not None
                if typed:
                    b = _Binding("ann", target) if target is not None else _UNKNOWN
                else:
                    b = _ts_value(node.child_by_field_name("value"))
                bind(scope, node_text(name), b)
            elif capture == "thisassign":
                left = node.child_by_field_name("left")
                prop = left.child_by_field_name("property") if left is not None else None
                cls = owner(scope)
                if prop is not None and cls is not None:
                    found[("attr", cls, node_text(prop))].append(_ts_value(node.child_by_field_name("right")))
            elif capture == "function":
                target = _ts_type(node.child_by_field_name("return_type"))
                if target is not None and _own_scope(scope, node.child_by_field_name("name")):
                    found[(RETURN, scope, "")].append(_Binding("ann", target))
            elif capture == "generic":
                name = node.child_by_field_name("name")
                if name is not None:
                    generics.add(node_text(name))
    return _decide(_without_generics(found, generics), elsewhere)


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
