"""The base mapping from a tree-sitter tree to definitions, and the generic rule.

A *mapping* answers one question for one grammar: which definitions does this
node (a child of a file, class body or namespace body) introduce? The parser
asks it for every member of every scope and turns the answers into symbols and
chunk boundaries. Per-language modules subclass :class:`Mapping`; languages
with no module of their own get :class:`GenericMapping`, which guesses from node
type names so that any grammar of the pack gives sensible chunks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

from tree_sitter import Node

from ..model import ANY_ARITY, SymbolKind


class Role(Enum):
    """What a definition means for chunking."""

    FUNCTION = "function"  # a chunk of its own; split on inner statements when large
    CLASS = "class"  # a chunk of its own; members split out when large
    NAMESPACE = "namespace"  # transparent: members are chunked as at top level
    SYMBOL = "symbol"  # a symbol only; chunked with the statements around it


@dataclass(frozen=True, slots=True)
class Rule:
    """A table entry: node type → symbol kind and role."""

    kind: SymbolKind | None  # None: a scope with no symbol (Rust impl, Swift extension)
    role: Role
    name_field: str = "name"
    body_field: str = "body"


@dataclass(slots=True)
class Definition:
    """One definition found in the tree."""

    node: Node  # the definition proper
    outer: Node  # incl. wrappers: decorators, export, template<…>
    name: str
    name_node: Node | None
    kind: SymbolKind | None  # None: no symbol
    role: Role
    body: Node | None  # members (class / namespace) or statements (function)
    qualifier: str = ""  # explicit container: Go receiver, C++ ``A::b``
    qualified_name: str = ""
    container: str = ""
    members: list[Item] = field(default_factory=list)
    # a further clause / equation of the function above (Elixir, Haskell): it extends that
    # function's chunk and is no symbol of its own
    continues: bool = False


@dataclass(slots=True)
class Item:
    """A member of a scope: a statement and the definitions it introduces."""

    node: Node
    defs: list[Definition]

    @property
    def boundary(self) -> Definition | None:
        """The definition this item is a chunk boundary for, if any."""
        if len(self.defs) == 1 and self.defs[0].role is not Role.SYMBOL:
            return self.defs[0]
        return None


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a node sits: the container's qualified name and whether it is a class."""

    container: str = ""
    in_class: bool = False
    class_name: str = ""


@dataclass(frozen=True, slots=True)
class Import:
    """One name an import binds: ``from a.b import c as d`` → module ``a.b``, name ``c``, alias ``d``.

    ``name`` is "" when the module itself is bound (``import a.b as x``), ``*``
    when all its names are (``from a import *``, ``using System;``, ``#include``).
    """

    module: str
    name: str
    alias: str
    node: Node  # where it is written


def node_text(node: Node | None) -> str:
    """The source text of a node (UTF-8, undecodable bytes replaced)."""
    if node is None:
        return ""
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def error_count(root: Node) -> int:
    """ERROR and missing nodes in a tree (only subtrees that have errors are walked): which
    of two parses of a file reads it better (a macro line blanked, or not)."""
    n, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            n += 1
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return n


def join(container: str, name: str) -> str:
    """Dotted qualified name."""
    return f"{container}.{name}" if container and name else container or name


_IDENTIFIER_TYPES = frozenset(
    {
        "identifier",
        "name",
        "type_identifier",
        "simple_identifier",
        "constant",
        "word",
        "field_identifier",
        "property_identifier",
        "namespace_identifier",
        "scoped_identifier",
        "qualified_identifier",
    }
)


def first_identifier(node: Node) -> Node | None:
    """The first identifier-like named child, for grammars without a ``name`` field."""
    for child in node.named_children:
        if child.type in _IDENTIFIER_TYPES or child.type.endswith("identifier"):
            return child
    return None


class Mapping:
    """Node types → definitions for one grammar. Subclasses fill the tables."""

    #: node type → rule
    rules: ClassVar[dict[str, Rule]] = {}
    #: wrapper node type → field holding the wrapped definition ("" : any named child)
    wrappers: ClassVar[dict[str, str]] = {}
    #: node types whose children belong to the enclosing scope (``#ifdef``, ``extern "C"``)
    transparent: frozenset[str] = frozenset({"ERROR"})
    #: method names that are constructors
    constructor_names: frozenset[str] = frozenset()
    #: leading siblings that belong to the next definition
    attached: re.Pattern[str] = re.compile(r"comment|decorator|attribute|annotation|pragma")
    #: declarations without a body whose name qualifies the siblings after them (C#'s
    #: file-scoped ``namespace A.B;``): those get the names a block namespace gives
    qualifying: frozenset[str] = frozenset()

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """The definitions ``node`` introduces; [] for a plain statement."""
        rule = self.rules.get(node.type)
        if rule is not None:
            found = self.from_rule(node, rule, scope)
            return [found] if found is not None else []
        wrapped_field = self.wrappers.get(node.type)
        if wrapped_field is not None:
            return self.unwrap(node, wrapped_field, scope)
        return []

    def unwrap(self, node: Node, wrapped_field: str, scope: Scope) -> list[Definition]:
        """Definitions inside a wrapper, with the wrapper as their outer node."""
        inner = node.child_by_field_name(wrapped_field) if wrapped_field else None
        candidates = [inner] if inner is not None else node.named_children
        for child in candidates:
            found = self.definitions(child, scope)
            if found:
                for d in found:
                    if d.outer is child:
                        d.outer = node
                return found
        return []

    def from_rule(self, node: Node, rule: Rule, scope: Scope) -> Definition | None:
        """A definition from a table rule; the name from the rule's field."""
        name_node = node.child_by_field_name(rule.name_field)
        if name_node is None:
            name_node = first_identifier(node)
        body = node.child_by_field_name(rule.body_field)
        kind = self.adjust_kind(rule.kind, node_text(name_node), scope)
        return Definition(
            node=node,
            outer=node,
            name=node_text(name_node),
            name_node=name_node,
            kind=kind,
            role=rule.role,
            body=body,
        )

    def imports(self, node: Node) -> list[Import]:
        """The names an import statement (an ``@import`` capture of the edge query) binds."""
        return []

    def arity(self, definition: Node) -> int:
        """How many arguments a call of this definition takes (``model.arity``), in languages
        whose overloads the graph tells apart by it; ``ANY_ARITY`` here."""
        return ANY_ARITY

    def partial(self, definition: Node) -> bool:
        """Whether the definition is one part of a type declared in several (C#'s
        ``partial class``)."""
        return False

    def parameter_types(self, definition: Node) -> str:
        """The types of a definition's parameters (``Symbol.params``), in languages whose
        overloads the graph tells apart by them (Java); "" here."""
        return ""

    def argument_types(self) -> Callable[[Node], str] | None:
        """What gives the argument types of the call around a ``@call`` capture
        (``Edge.arg_types``) in one file, in languages whose overloads the graph tells
        apart by them (Java); None here."""
        return None

    def argument_count(self, called: Node) -> int:
        """How many arguments the call around a ``@call`` capture passes; -1 when not known
        (a spread, a language whose overloads are not told apart)."""
        return -1

    def adjust_kind(self, kind: SymbolKind | None, name: str, scope: Scope) -> SymbolKind | None:
        """Functions inside a class are methods; constructors where the name says so."""
        if kind is SymbolKind.FUNCTION and scope.in_class:
            kind = SymbolKind.METHOD
        if kind is SymbolKind.METHOD and name in self.constructor_names:
            return SymbolKind.CONSTRUCTOR
        return kind

    def member_nodes(self, definition: Definition) -> list[Node]:
        """The nodes whose children are members of a class or namespace."""
        return definition.body.children if definition.body is not None else []


_CLASS_WORDS = (
    ("interface", SymbolKind.INTERFACE),
    ("protocol", SymbolKind.INTERFACE),
    ("trait", SymbolKind.INTERFACE),
    ("struct", SymbolKind.STRUCT),
    ("record", SymbolKind.STRUCT),
    ("union", SymbolKind.STRUCT),
    ("enum", SymbolKind.ENUM),
    ("namespace", SymbolKind.NAMESPACE),
    ("module", SymbolKind.MODULE),
    ("class", SymbolKind.CLASS),
    ("object", SymbolKind.CLASS),
    ("impl", SymbolKind.CLASS),
    ("typedef", SymbolKind.CLASS),
    ("type_def", SymbolKind.CLASS),
)
_FUNCTION_WORDS = ("function", "method", "procedure", "subroutine", "func", "constructor")
_NOT_DEFINITIONS = (
    "call",
    "invocation",
    "argument",
    "parameter",
    "import",
    "include",
    "require",
    "comment",
    "expression",
    "literal",
    "type_",
    "_type",
    "reference",
    "identifier",
    "modifier",
    "body",
    "signature",
    "specifier",
)
_BODY_WORDS = ("body", "block", "declaration_list", "members", "statements")


class GenericMapping(Mapping):
    """Definitions guessed from node type names, for grammars with no module of their own.

    ``function_definition``, ``method_declaration`` → functions; ``class_definition``,
    ``struct_item``, ``module``… → classes. Anything else is a plain statement,
    grouped into blocks.
    """

    def __init__(self) -> None:
        self._cache: dict[str, tuple[SymbolKind, Role] | None] = {}

    def classify(self, node_type: str) -> tuple[SymbolKind, Role] | None:
        """Kind and role for a node type name, or None."""
        if node_type in self._cache:
            return self._cache[node_type]
        t = node_type.lower()
        found: tuple[SymbolKind, Role] | None = None
        if not any(word in t for word in _NOT_DEFINITIONS):
            for word, kind in _CLASS_WORDS:
                if word in t:
                    found = (kind, Role.CLASS)
                    break
            else:
                if any(word in t for word in _FUNCTION_WORDS):
                    found = (SymbolKind.FUNCTION, Role.FUNCTION)
        self._cache[node_type] = found
        return found

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """A definition when the node type's name says so."""
        found = self.classify(node.type)
        if found is None or not node.is_named:
            return []
        kind, role = found
        name_node = node.child_by_field_name("name") or first_identifier(node)
        name = node_text(name_node)
        if "\n" in name or len(name) > 200:
            name, name_node = "", None
        body = node.child_by_field_name("body")
        if body is None and role is Role.CLASS:
            for child in reversed(node.named_children):
                if any(word in child.type for word in _BODY_WORDS):
                    body = child
                    break
        return [
            Definition(
                node=node,
                outer=node,
                name=name,
                name_node=name_node,
                kind=self.adjust_kind(kind, name, scope) if name else None,
                role=role,
                body=body,
            )
        ]


def outline(root: Node, mapping: Mapping) -> list[Item]:
    """The items of a file's top level, each definition qualified, members filled in."""
    return _items(root.children, mapping, Scope())


def _items(nodes: list[Node], mapping: Mapping, scope: Scope) -> list[Item]:
    items: list[Item] = []
    for node in nodes:
        if not node.is_named:
            continue
        if node.type in mapping.transparent:
            items.extend(_items(node.children, mapping, scope))
            continue
        defs = mapping.definitions(node, scope)
        for d in defs:
            d.container = join(scope.container, d.qualifier)
            d.qualified_name = join(d.container, d.name)
            if d.role in (Role.CLASS, Role.NAMESPACE) and d.body is not None:
                inner = Scope(d.qualified_name, d.role is Role.CLASS, d.name)
                d.members = _items(mapping.member_nodes(d), mapping, inner)
            if node.type in mapping.qualifying and d.qualified_name and not scope.in_class:
                # `namespace A.B;`: what follows is in `A.B`, though the tree has it as siblings
                scope = Scope(d.qualified_name)
        items.append(Item(node, defs))
    return items
