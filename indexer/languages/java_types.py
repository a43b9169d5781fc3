"""Java argument and parameter types where the code states them, for telling overloads
of one argument count apart (``insert(0, array, element)`` inside ``addFirst(final
boolean[] array, final boolean element)`` among ``insert(int, boolean[], boolean...)``,
``insert(int, byte[], byte...)``, …, ``<T> insert(int, T[], T...)``).

Both are strings of comma-separated types, a type written as its simple name with its
array dimensions (``int``, ``boolean[]``, ``Map``: generics' type arguments dropped).

- A definition's parameters (``Symbol.params``): a type variable of the method is ``'T``,
  ``'T:`` when it has a bound other than ``Object`` or is an enclosing class's (which a
  receiver's type arguments bind: ``Box<String>``'s ``put(T)`` takes no ``Integer``), the last
  parameter of a varargs method ends in ``...`` (``int,'T[],'T...``); "" when not known.
- A call's arguments (``Edge.arg_types``): each argument's type when the code states it —
  a literal (``String``, ``char``, ``int`` / ``long`` / ``float`` / ``double``,
  ``boolean``, ``null``), a name that is a parameter or a local of the call's own method
  declared there with one type (every declaration of the name in the method has it, and
  one of them is in scope at the call), ``new Foo(…)``, ``new int[n]``, a cast,
  ``Foo.class``, a ``+`` with a string operand — else ``?``; "" when no argument is known.
  A name declared with a type variable of the method or its classes is ``'T`` / ``'T[]``
  (``'T:`` bounded): a reference of a class not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from .base import node_text

UNKNOWN = "?"
_PRIMITIVE_NODES = frozenset({"integral_type", "floating_point_type", "boolean_type"})
_METHODS = frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"})
_CLASSES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "record_declaration",
        "enum_declaration",
        "annotation_type_declaration",
    }
)
_BODIES = frozenset({"class_body", "interface_body", "enum_body", "annotation_type_body", "record_body"})
_INTEGERS = frozenset(
    {"decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal"}
)
_FLOATS = frozenset({"decimal_floating_point_literal", "hex_floating_point_literal"})


_COMPACT = "compact_constructor_declaration"


def _first(node: Node, types: tuple[str, ...]) -> Node | None:
    return next((c for c in node.named_children if c.type in types), None)


def _spread_type(node: Node) -> Node | None:
    """The type of ``T... values``."""
    return next((x for x in node.named_children if x.type not in ("modifiers", "variable_declarator")), None)


def _dims(node: Node | None) -> int:
    return node_text(node).count("[") if node is not None else 0


def type_name(node: Node | None, type_vars: dict[str, bool] | None = None, extra_dims: int = 0) -> str:
    """``boolean[]``, ``Map`` (of ``java.util.Map<K, V>``), ``'T`` for a type variable
    (``'T:`` bounded) in ``type_vars``; ``?`` for what cannot be named (``var``, a union)."""
    if node is None:
        return UNKNOWN
    t = node.type
    if t == "annotated_type":
        inner = [c for c in node.named_children if c.type not in ("annotation", "marker_annotation")]
        return type_name(inner[-1] if inner else None, type_vars, extra_dims)
    if t == "array_type":
        return type_name(
            node.child_by_field_name("element"),
            type_vars,
            extra_dims + _dims(node.child_by_field_name("dimensions")),
        )
    if t == "generic_type":
        base = next(
            (c for c in node.named_children if c.type in ("type_identifier", "scoped_type_identifier")), None
        )
        return type_name(base, type_vars, extra_dims)
    if t == "scoped_type_identifier":
        last = [c for c in node.named_children if c.type == "type_identifier"]
        return (node_text(last[-1]) if last else UNKNOWN) + "[]" * extra_dims
    if t in _PRIMITIVE_NODES:
        return node_text(node) + "[]" * extra_dims
    if t == "type_identifier":
        name = node_text(node)
        if name == "var":
            return UNKNOWN
        if type_vars is not None and name in type_vars:
            return ("'" + name + (":" if type_vars[name] else "")) + "[]" * extra_dims
        return name + "[]" * extra_dims
    return UNKNOWN


def type_variables(node: Node) -> dict[str, bool]:
    """The type variables visible in ``node`` (a method's own and its classes'), each with
    whether what it stands for is open: a bound other than ``Object``, or a class's (what
    a call's receiver binds it to — ``Box<String>`` — is not read), marked ``'T:``."""
    found: dict[str, bool] = {}
    at: Node | None = node
    while at is not None:
        if at.type in _METHODS or at.type in _CLASSES:
            params = at.child_by_field_name("type_parameters")
            for p in params.named_children if params is not None else []:
                if p.type != "type_parameter":
                    continue
                name = next(
                    (c for c in p.named_children if c.type in ("type_identifier", "identifier")), None
                )
                bound = _first(p, ("type_bound",))
                bounded = at.type in _CLASSES or (
                    bound is not None and node_text(bound).split()[-1:] != ["Object"]
                )
                if name is not None:
                    found.setdefault(node_text(name), bounded)
        at = at.parent
    return found


def parameter_types(definition: Node) -> str:
    """``int,'T[],'T...`` of ``<T> T[] insert(int index, T[] array, T... values)``; "" for
    a definition whose parameters are not listed (a record's compact constructor)."""
    params = definition.child_by_field_name("parameters")
    if (
        params is None
        or definition.type not in _METHODS
        or definition.type == "compact_constructor_declaration"
    ):
        return ""
    tvars = type_variables(definition)
    out: list[str] = []
    for c in params.named_children:
        if c.type == "formal_parameter":
            out.append(
                type_name(c.child_by_field_name("type"), tvars, _dims(c.child_by_field_name("dimensions")))
            )
        elif c.type == "spread_parameter":
            typ = next(
                (x for x in c.named_children if x.type not in ("modifiers", "variable_declarator")), None
            )
            out.append(type_name(typ, tvars) + "...")
    return ",".join(out)


@dataclass(frozen=True, slots=True)
class _Declared:
    type: str
    start: int  # where the name is in scope: from here …
    end: int  # … to here (bytes)


class ArgumentTypes:
    """The argument types of a file's calls (``of``), each read against the declarations
    of its own enclosing method, gathered once per method."""

    def __init__(self) -> None:
        self._methods: dict[int, tuple[dict[str, list[_Declared]], dict[str, bool]]] = {}

    def of(self, called: Node) -> str:
        """The argument types of the call a ``@call`` capture is (``method_invocation``) or
        names (``new T(…)``'s type)."""
        call = called if called.type == "method_invocation" else called.parent
        args = call.child_by_field_name("arguments") if call is not None else None
        if args is None or args.type != "argument_list":
            return ""
        method = _enclosing_method(args)
        declared, tvars = self._declared(method) if method is not None else ({}, {})
        types = [_expression_type(a, declared, tvars) for a in args.named_children if "comment" not in a.type]
        if all(t == UNKNOWN for t in types):
            return ""
        return ",".join(types)

    def _declared(self, method: Node) -> tuple[dict[str, list[_Declared]], dict[str, bool]]:
        key = method.start_byte
        found = self._methods.get(key)
        if found is None:
            tvars = type_variables(method)
            declared: dict[str, list[_Declared]] = {}
            _collect(method, method, tvars, declared)
            found = self._methods[key] = (declared, tvars)
        return found


def _enclosing_method(node: Node) -> Node | None:
    at = node.parent
    while at is not None:
        if at.type in _METHODS:
            return at
        if at.type in _BODIES:
            return None  # a field's initializer, an anonymous class's body outside its methods
        at = at.parent
    return None


def _region(node: Node, method: Node) -> tuple[int, int]:
    """Where a declaration at ``node`` is in scope."""
    parent = node.parent
    if node.type in ("formal_parameter", "spread_parameter"):
        owner = parent.parent if parent is not None and parent.parent is not None else method
        return owner.start_byte, owner.end_byte
    if parent is None:
        return method.start_byte, method.end_byte
    return node.start_byte, parent.end_byte


def _collect(node: Node, method: Node, tvars: dict[str, bool], out: dict[str, list[_Declared]]) -> None:
    """Every declaration of a name in ``method`` outside nested classes: its stated type
    (``?`` where none is stated: ``var``, a lambda's or a pattern's variable)."""
    for c in node.named_children:
        t = c.type
        if t in _BODIES or t in _CLASSES:
            continue
        if t == "formal_parameter":
            name = c.child_by_field_name("name")
            typ = type_name(c.child_by_field_name("type"), tvars, _dims(c.child_by_field_name("dimensions")))
            if name is not None:
                _add(out, node_text(name), typ, _region(c, method))
        elif t == "spread_parameter":
            typ_node = next(
                (x for x in c.named_children if x.type not in ("modifiers", "variable_declarator")), None
            )
            decl = _first(c, ("variable_declarator",))
            name = decl.child_by_field_name("name") if decl is not None else None
            typ = type_name(typ_node, tvars)
            if name is not None:
                _add(out, node_text(name), typ + "[]" if typ != UNKNOWN else UNKNOWN, _region(c, method))
        elif t == "local_variable_declaration":
            typ_node = c.child_by_field_name("type")
            for d in c.children_by_field_name("declarator"):
                name = d.child_by_field_name("name")
                if name is not None:
                    typ = type_name(typ_node, tvars, _dims(d.child_by_field_name("dimensions")))
                    _add(out, node_text(name), typ, _region(c, method))
        elif t in ("enhanced_for_statement", "catch_formal_parameter", "resource"):
            name = c.child_by_field_name("name")
            typ = (
                type_name(c.child_by_field_name("type"), tvars) if t != "catch_formal_parameter" else UNKNOWN
            )
            if name is not None:
                region = (
                    (c.start_byte, c.end_byte)
                    if t == "enhanced_for_statement"
                    else ((c.parent.start_byte, c.parent.end_byte) if c.parent is not None else (0, 0))
                )
                if t == "resource" and c.parent is not None and c.parent.parent is not None:
                    region = (c.start_byte, c.parent.parent.end_byte)
                _add(out, node_text(name), typ, region)
        elif t == "lambda_expression":
            params = c.child_by_field_name("parameters")
            if params is not None and params.type in ("identifier", "inferred_parameters"):
                names = [params] if params.type == "identifier" else params.named_children
                for n in names:
                    _add(out, node_text(n), UNKNOWN, (c.start_byte, c.end_byte))
        elif t == "instanceof_expression":
            # `o instanceof Foo f`: `f` is bound where the test holds (flow): never typed
            bound = c.child_by_field_name("name")
            if bound is not None:
                _add(out, node_text(bound), UNKNOWN, (method.start_byte, method.end_byte))
        elif t in ("type_pattern", "record_pattern", "record_pattern_component"):
            for word in _identifiers(c):
                _add(out, word, UNKNOWN, (method.start_byte, method.end_byte))
        _collect(c, method, tvars, out)


def _identifiers(node: Node) -> list[str]:
    found = [node_text(c) for c in node.named_children if c.type == "identifier"]
    for c in node.named_children:
        if c.type not in ("identifier",) and c.type not in _BODIES:
            found.extend(_identifiers(c))
    return found


def _add(out: dict[str, list[_Declared]], name: str, typ: str, region: tuple[int, int]) -> None:
    out.setdefault(name, []).append(_Declared(typ, region[0], region[1]))


def _expression_type(node: Node | None, declared: dict[str, list[_Declared]], tvars: dict[str, bool]) -> str:
    if node is None:
        return UNKNOWN
    t = node.type
    if t == "string_literal" or t == "text_block":
        return "String"
    if t == "character_literal":
        return "char"
    if t in ("true", "false"):
        return "boolean"
    if t == "null_literal":
        return "null"
    if t in _INTEGERS:
        return "long" if node_text(node)[-1:] in ("l", "L") else "int"
    if t in _FLOATS:
        return "float" if node_text(node)[-1:] in ("f", "F") else "double"
    if t == "class_literal":
        return "Class"
    if t == "parenthesized_expression" and node.named_child_count == 1:
        return _expression_type(node.named_children[0], declared, tvars)
    if t == "unary_expression":
        operand = node.child_by_field_name("operand")
        op = node.child_by_field_name("operator")
        if (
            operand is not None
            and op is not None
            and node_text(op) in ("-", "+")
            and (operand.type in _INTEGERS or operand.type in _FLOATS)
        ):
            return _expression_type(operand, declared, tvars)
        return UNKNOWN
    if t == "identifier":
        return _name_type(node, declared)
    if t == "object_creation_expression":
        if any(c.type == "class_body" for c in node.named_children):
            return UNKNOWN  # an anonymous class: a subtype of the type named
        return _plain(type_name(node.child_by_field_name("type"), tvars))
    if t == "array_creation_expression":
        dims = sum(1 for c in node.named_children if c.type == "dimensions_expr")
        dims += sum(_dims(c) for c in node.named_children if c.type == "dimensions")
        return _plain(type_name(node.child_by_field_name("type"), tvars, dims))
    if t == "cast_expression":
        types = node.children_by_field_name("type")
        return _plain(type_name(types[0], tvars)) if len(types) == 1 else UNKNOWN
    if t == "binary_expression":
        op = node.child_by_field_name("operator")
        if op is not None and node_text(op) == "+":
            left = _expression_type(node.child_by_field_name("left"), declared, tvars)
            right = _expression_type(node.child_by_field_name("right"), declared, tvars)
            if "String" in (left, right):
                return "String"
        return UNKNOWN
    return UNKNOWN


def _plain(typ: str) -> str:
    """A type variable names no type an argument has (``new T[n]`` is not written)."""
    return UNKNOWN if typ.startswith("'") else typ


def _name_type(node: Node, declared: dict[str, list[_Declared]]) -> str:
    """A name's type: every declaration of it in the method states one type, and one of
    them is in scope here (else it is a field, or not known)."""
    found = declared.get(node_text(node))
    if not found:
        return UNKNOWN
    types = {d.type for d in found}
    if len(types) != 1:
        return UNKNOWN
    (typ,) = types
    if not any(d.start <= node.start_byte < d.end for d in found):
        return UNKNOWN
    return typ
