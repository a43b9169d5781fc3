"""Java, Kotlin and C#: class-based languages with constructors as their own nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from tree_sitter import Node

from ..model import ANY_ARITY, SymbolKind, arity
from .base import Definition, Import, Mapping, Role, Rule, Scope, node_text
from .java_types import ArgumentTypes, parameter_types
from .paths import text_parts


class JavaMapping(Mapping):
    """Java types and members; enum constants' bodies hold methods too."""

    rules: ClassVar[dict[str, Rule]] = {
        "class_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "record_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "interface_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "annotation_type_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "enum_declaration": Rule(SymbolKind.ENUM, Role.CLASS),
        "method_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "constructor_declaration": Rule(SymbolKind.CONSTRUCTOR, Role.FUNCTION),
        "compact_constructor_declaration": Rule(SymbolKind.CONSTRUCTOR, Role.FUNCTION),
    }
    transparent = frozenset({"ERROR", "enum_body_declarations"})

    def imports(self, node: Node) -> list[Import]:
        """``import a.b.C;`` binds ``C``; ``import a.b.*;`` everything of ``a.b``."""
        path = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        dotted = text_parts(path)
        if any(c.type == "asterisk" for c in node.named_children):
            return [Import(dotted, "*", "*", node)]
        module, _, name = dotted.rpartition(".")
        return [Import(module, name, name, path or node)]

    def arity(self, definition: Node) -> int:
        """``(int a, String... r)``: one argument or more."""
        params = definition.child_by_field_name("parameters")
        if params is None or definition.type == "compact_constructor_declaration":
            return ANY_ARITY
        fixed = sum(1 for c in params.named_children if c.type == "formal_parameter")
        varargs = any(c.type == "spread_parameter" for c in params.named_children)
        return arity(fixed, None if varargs else fixed)

    def argument_count(self, called: Node) -> int:
        return _arguments(called, lambda c: "comment" not in c.type)

    def parameter_types(self, definition: Node) -> str:
        return parameter_types(definition)

    def argument_types(self) -> Callable[[Node], str] | None:
        return ArgumentTypes().of


class CSharpMapping(Mapping):
    """C# types, members and namespaces: a file-scoped ``namespace A.B;`` is a symbol whose
    name qualifies the declarations after it, as a block namespace's does its body."""

    qualifying = frozenset({"file_scoped_namespace_declaration"})
    # `#if HAVE_ASYNC … #endif` around a file's namespace or a class's members: the code
    # in every branch is read, as C's `#ifdef` blocks are
    transparent = frozenset({"ERROR", "preproc_if", "preproc_elif", "preproc_else"})

    rules: ClassVar[dict[str, Rule]] = {
        "class_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "record_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "record_struct_declaration": Rule(SymbolKind.STRUCT, Role.CLASS),
        "struct_declaration": Rule(SymbolKind.STRUCT, Role.CLASS),
        "interface_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "enum_declaration": Rule(SymbolKind.ENUM, Role.CLASS),
        "namespace_declaration": Rule(SymbolKind.NAMESPACE, Role.NAMESPACE),
        "file_scoped_namespace_declaration": Rule(SymbolKind.NAMESPACE, Role.SYMBOL),
        "method_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "local_function_statement": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "constructor_declaration": Rule(SymbolKind.CONSTRUCTOR, Role.FUNCTION),
        "destructor_declaration": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "operator_declaration": Rule(SymbolKind.OPERATOR, Role.FUNCTION),
        "property_declaration": Rule(SymbolKind.PROPERTY, Role.SYMBOL),
        "delegate_declaration": Rule(SymbolKind.FUNCTION, Role.SYMBOL),
        "event_declaration": Rule(SymbolKind.EVENT, Role.SYMBOL),
    }

    def imports(self, node: Node) -> list[Import]:
        """``using A.B;`` brings every name of ``A.B``; ``using J = A.B;`` binds ``J``."""
        alias = node.child_by_field_name("name")
        target = next(
            (c for c in node.named_children if c != alias and c.type in ("qualified_name", "identifier")),
            None,
        )
        if alias is not None:
            return [Import(text_parts(target), "", node_text(alias), node)]
        return [Import(text_parts(target), "*", "*", node)]

    def arity(self, definition: Node) -> int:
        """``(int x, string s = "a", params int[] r)``: one argument or more; an extension
        method's ``this`` parameter is its receiver in ``x.M()`` and an argument in ``C.M(x)``."""
        params = definition.child_by_field_name("parameters")
        if params is None or definition.type not in _CSHARP_CALLABLE:
            return ANY_ARITY
        listed = [c for c in params.named_children if c.type == "parameter"]
        required = sum(
            1 for c in listed if not (_marked(c, "params") or any(t.type == "=" for t in c.children))
        )
        varargs = any(c.type == "params" for c in params.children)  # `params` outside a parameter
        varargs = varargs or any(_marked(c, "params") for c in listed)
        receiver = bool(listed) and _marked(listed[0], "this")
        return arity(required - receiver, None if varargs else len(listed))

    def argument_count(self, called: Node) -> int:
        return _arguments(called, lambda c: c.type == "argument")

    def partial(self, definition: Node) -> bool:
        return definition.type in _CSHARP_TYPES and _marked(definition, "partial")


_KOTLIN_NAMES = ("type_identifier", "simple_identifier")


class KotlinMapping(Mapping):
    """Kotlin's grammar has few fields: names and bodies are found by node type."""

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Classes (by keyword), objects, companions, functions, secondary constructors."""
        t = node.type
        if t in ("class_declaration", "object_declaration", "companion_object"):
            name_node = _child(node, _KOTLIN_NAMES)
            body = _child(node, ("class_body", "enum_class_body"))
            kind = SymbolKind.CLASS
            for child in node.children:
                if child.type == "interface":
                    kind = SymbolKind.INTERFACE
                elif child.type == "enum":
                    kind = SymbolKind.ENUM
            name = node_text(name_node)
            if t == "companion_object" and name_node is None:
                name, name_node = "Companion", node.child(0)  # the `companion` keyword
            return [Definition(node, node, name, name_node, kind, Role.CLASS, body)]
        if t == "function_declaration":
            name_node = _child(node, ("simple_identifier",))
            # `fun Table.ext()` at the top: a member of `Table` declared outside it (as a Swift
            # extension's); inside a class it stays the class's (its dispatch receiver)
            extended = "" if scope.in_class else _extended_type(node)
            kind = SymbolKind.METHOD if scope.in_class or extended else SymbolKind.FUNCTION
            body = _child(node, ("function_body",))
            name = node_text(name_node)
            return [Definition(node, node, name, name_node, kind, Role.FUNCTION, body, qualifier=extended)]
        if t == "secondary_constructor":
            keyword = node.child(0)
            return [
                Definition(
                    node,
                    node,
                    "constructor",
                    keyword,
                    SymbolKind.CONSTRUCTOR,
                    Role.FUNCTION,
                    _child(node, ("statements", "block")),
                )
            ]
        return []

    def imports(self, node: Node) -> list[Import]:
        """``import a.b.C [as D]``, ``import a.b.*``."""
        return _kotlin_import(node)

    def arity(self, definition: Node) -> int:
        """``fun f(a: Int, b: Int = 2, vararg c: Int)``: one argument or more (a trailing
        lambda is the last argument)."""
        params = _child(definition, ("function_value_parameters",))
        if params is None or definition.type != "function_declaration":
            return ANY_ARITY
        required = total = 0
        varargs = False
        children = params.children
        for i, c in enumerate(children):
            if c.type == "parameter_modifiers" and "vararg" in node_text(c).split():
                varargs = True
            elif c.type == "parameter":
                total += 1
                defaulted = i + 1 < len(children) and children[i + 1].type == "="
                vararg = i > 0 and children[i - 1].type == "parameter_modifiers" and varargs
                required += not (defaulted or vararg)
        return arity(required, None if varargs else total)

    def argument_count(self, called: Node) -> int:
        """``g(1, 2) { … }``: three (a trailing lambda is one); a spread (``*arr``) counts as not known."""
        call = called.parent
        if call is None or call.type != "call_expression":
            return -1
        suffix = _child(call, ("call_suffix",))
        if suffix is None:
            return -1
        values = _child(suffix, ("value_arguments",))
        args = [c for c in values.named_children if c.type == "value_argument"] if values is not None else []
        if any(a.named_child_count and a.named_children[0].type == "spread_expression" for a in args):
            return -1
        return len(args) + sum(1 for c in suffix.named_children if c.type == "annotated_lambda")


def _kotlin_import(node: Node) -> list[Import]:
    ident = _child(node, ("identifier",))
    dotted = ".".join(node_text(c) for c in ident.named_children) if ident is not None else ""
    alias_node = _child(node, ("import_alias",))
    if any(c.type in ("wildcard_import", "*") for c in node.children) or node_text(node).endswith("*"):
        return [Import(dotted, "*", "*", node)]
    module, _, name = dotted.rpartition(".")
    alias = node_text(alias_node.named_children[0]) if alias_node and alias_node.named_child_count else name
    return [Import(module, name, alias, ident or node)]


def _extended_type(function: Node) -> str:
    """The type an extension function extends: ``Table`` of ``fun Table.ext()``, ``List``
    of ``fun <T> List<T>.second()``, ``a.Outer.Inner`` of ``fun a.Outer.Inner?.f()``; ""
    for none, a function type, or one of the function's own type parameters
    (``fun <T> T.also()`` extends whatever ``T`` is)."""
    receiver = function.child_by_field_name("receiver")
    target = receiver.named_children[0] if receiver is not None and receiver.named_child_count else None
    if target is not None and target.type == "nullable_type" and target.named_child_count:
        target = target.named_children[0]
    if target is None or target.type != "user_type":
        return ""
    names = [node_text(c) for c in target.named_children if c.type == "type_identifier"]
    generics = _child(function, ("type_parameters",))
    own = {
        node_text(_child(p, ("type_identifier",)))
        for p in (generics.named_children if generics is not None else [])
        if p.type == "type_parameter"
    }
    if not names or names[0] in own:
        return ""
    return ".".join(names)


def _child(node: Node, types: tuple[str, ...]) -> Node | None:
    for child in node.named_children:
        if child.type in types:
            return child
    return None


_CSHARP_TYPES = frozenset(
    {"class_declaration", "struct_declaration", "interface_declaration", "record_declaration"}
)
_CSHARP_CALLABLE = frozenset({"method_declaration", "constructor_declaration", "local_function_statement"})


def _arguments(called: Node, counts: Callable[[Node], bool]) -> int:
    """The arguments of a call whose ``arguments`` list is on the captured node (Java's
    ``method_invocation``) or on its parent (``new T(…)``, C#'s invocation)."""
    for node in (called, called.parent):
        args = node.child_by_field_name("arguments") if node is not None else None
        if args is not None and args.type == "argument_list":
            return sum(1 for c in args.named_children if counts(c))
    return -1


def _marked(parameter: Node, word: str) -> bool:
    """Whether a C# parameter carries the modifier ``word`` (``params``, ``this``)."""
    return any(t.type == word or (t.type == "modifier" and node_text(t) == word) for t in parameter.children)
