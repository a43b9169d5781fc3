"""C and C++ (and CUDA): declarator chains, ``A::b`` out-of-line members, namespaces."""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node, Tree

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Scope, error_count, node_text
from .paths import text_parts

_NAME_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "destructor_name",
        "operator_name",
        "qualified_identifier",
        "template_function",
    }
)
_TYPE_SPECIFIERS = {
    "struct_specifier": SymbolKind.STRUCT,
    "union_specifier": SymbolKind.STRUCT,
    "enum_specifier": SymbolKind.ENUM,
    "class_specifier": SymbolKind.CLASS,
}


# A line holding nothing but an upper-case name: a macro the grammar cannot expand
# (``ABSL_NAMESPACE_BEGIN``, ``G_BEGIN_DECLS``, ``NLOHMANN_JSON_NAMESPACE_BEGIN``). Read as
# code it becomes the return type of the definition below it: abseil's
# ``ABSL_NAMESPACE_BEGIN`` / ``class Notification {…}`` parsed as one function named
# ``Notification``, and the class was no symbol.
_LONE_MACRO = re.compile(rb"^[ \t]*[A-Z_][A-Z0-9_]*[ \t]*$", re.MULTILINE)
# An upper-case attribute macro between ``class`` / ``struct`` / ``union`` and the name
# (``class ABSL_MUST_USE_RESULT Status final {``, ``class ABSL_ATTRIBUTE_OWNER
# flat_hash_map : public …``): the grammar took the macro for the class and the real name
# for a declarator, so ``Status``, ``Mutex`` and ``flat_hash_map`` were functions named
# after their base class. Only the macros (group 1; one or more) are blanked.
_HEAD_MACRO = re.compile(
    rb"\b(?:class|struct|union)((?:[ \t]+[A-Z][A-Z0-9_]*_[A-Z0-9_]*[A-Z0-9])+)"
    rb"(?=[ \t]+[A-Za-z_]\w*(?:[ \t]+final)?[ \t]*(?:[:{<]|$))",
    re.MULTILINE,
)


def repaired(source: bytes, root: Node, parse: Callable[[bytes], Tree]) -> Tree | None:
    """The parse of ``source`` with every line that is only a macro name, and every
    attribute macro in a class head, blanked (spaces for its bytes, so every row and
    column stays where it was), or None when there is none or the blanked text parses
    with no fewer errors than ``source`` (``root``).
    Only the parse reads the blanked bytes; chunks keep the file's own lines."""
    spans = [m.span() for m in _LONE_MACRO.finditer(source) if not _continues(source, m.start())]
    spans += [m.span(1) for m in _HEAD_MACRO.finditer(source)]
    if not spans:
        return None
    out = bytearray(source)
    for start, end in spans:
        out[start:end] = b" " * (end - start)
    tree = parse(bytes(out))
    return tree if error_count(tree.root_node) < error_count(root) else None


def _continues(source: bytes, start: int) -> bool:
    """The line before ends in a backslash: this one belongs to a ``#define``."""
    before = source[:start].rstrip(b"\r\n")
    return before.endswith(b"\\")


class CMapping(Mapping):
    """Function definitions, structs / unions / enums with a body, typedefs of them."""

    transparent = frozenset(
        {"ERROR", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}
    )

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Definitions, looking through declarators and ``typedef``."""
        t = node.type
        if t == "function_definition":
            return [self.function(node, node, scope)]
        if t in _TYPE_SPECIFIERS:
            found = self.type_specifier(node, node, "")
            return [found] if found is not None else []
        if t in ("type_definition", "declaration", "field_declaration"):
            type_node = node.child_by_field_name("type")
            if type_node is not None and type_node.type in _TYPE_SPECIFIERS:
                alias = node.child_by_field_name("declarator") if t == "type_definition" else None
                found = self.type_specifier(type_node, node, node_text(alias) if alias else "")
                if found is not None:
                    if alias is not None and found.name_node is None:
                        found.name_node = alias
                    return [found]
            return self.declaration(node, scope)
        return []

    def declaration(self, node: Node, scope: Scope) -> list[Definition]:
        """Plain declarations are not definitions in C."""
        return []

    def imports(self, node: Node) -> list[Import]:
        """``#include "x.h"`` brings every name of x.h; ``using ns::name;`` binds ``name``."""
        if node.type == "preproc_include":
            path = node.child_by_field_name("path")
            return [Import(node_text(path).strip('"'), "*", "*", path or node)]
        target = node.named_children[-1] if node.named_child_count else None
        dotted = text_parts(target)
        if node_text(node).startswith("using namespace"):
            return [Import(dotted, "*", "*", node)]
        module, _, name = dotted.rpartition(".")
        return [Import(module, name, name, node)]

    def function(self, node: Node, outer: Node, scope: Scope) -> Definition:
        """A function from its declarator chain; ``A::b`` gives container ``A``."""
        name_node = _declarator_name(node.child_by_field_name("declarator"))
        name, qualifier = node_text(name_node), ""
        if name_node is not None and name_node.type == "qualified_identifier":
            parts = name.replace(" ", "").split("::")
            qualifier, name = ".".join(parts[:-1]), parts[-1]
            inner: Node | None = name_node
            while inner is not None and inner.type == "qualified_identifier":
                inner = inner.child_by_field_name("name")
            name_node = inner or name_node
        kind = SymbolKind.METHOD if scope.in_class or qualifier else SymbolKind.FUNCTION
        owner = qualifier.rsplit(".", 1)[-1] if qualifier else scope.class_name
        if kind is SymbolKind.METHOD and owner and name == owner:
            kind = SymbolKind.CONSTRUCTOR
        body = node.child_by_field_name("body")
        return Definition(node, outer, name, name_node, kind, Role.FUNCTION, body, qualifier=qualifier)

    def type_specifier(self, node: Node, outer: Node, alias: str) -> Definition | None:
        """A struct / union / enum / class with a body; anonymous ones take the typedef name."""
        body = node.child_by_field_name("body")
        if body is None:
            return None
        name_node = node.child_by_field_name("name")
        name = alias or node_text(name_node)
        if not name:
            return None
        kind = _TYPE_SPECIFIERS[node.type]
        return Definition(node, outer, name, None if alias else name_node, kind, Role.CLASS, body)


class CppMapping(CMapping):
    """C++: classes, namespaces, templates, in-class method declarations."""

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Namespaces, ``template<…>`` wrappers, ``extern "C" {…}``, then C's rules."""
        t = node.type
        if t == "namespace_definition":
            name_node = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            name = node_text(name_node).replace("::", ".")
            kind = SymbolKind.NAMESPACE if name else None
            return [Definition(node, node, name, name_node, kind, Role.NAMESPACE, body)]
        if t == "linkage_specification":
            body = node.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                return [Definition(node, node, "", None, None, Role.NAMESPACE, body)]
            return self.definitions(body, scope) if body is not None else []
        if t == "template_declaration":
            for child in node.named_children:
                found = self.definitions(child, scope)
                if found:
                    for d in found:
                        if d.outer is child:
                            d.outer = node
                    return found
            return []
        return super().definitions(node, scope)

    def declaration(self, node: Node, scope: Scope) -> list[Definition]:
        """Inside a class, ``void draw();`` declares a method."""
        if not scope.in_class:
            return []
        declarator = node.child_by_field_name("declarator")
        if declarator is None or declarator.type != "function_declarator":
            return []
        name_node = _declarator_name(declarator)
        name = node_text(name_node)
        kind = SymbolKind.CONSTRUCTOR if name == scope.class_name else SymbolKind.METHOD
        return [Definition(node, node, name, name_node, kind, Role.SYMBOL, None)]


def _declarator_name(declarator: Node | None) -> Node | None:
    """Follow ``declarator`` fields (pointer, reference, function…) down to the name."""
    node = declarator
    for _ in range(16):
        if node is None or node.type in _NAME_TYPES:
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in _NAME_TYPES), None)
            if inner is None:
                inner = node.named_children[0] if node.named_child_count else None
        node = inner
    return None
