"""What a Python annotation says: the class it names, an ``Optional`` / ``| None``
inner type, a ``type[X]``, a tuple's parts, a container's items and a mapping's
values — read from tree-sitter nodes, for :mod:`.python_bindings`."""

from __future__ import annotations

import re

from tree_sitter import Node

from .base import node_text

_QUOTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_NOT_TYPES = frozenset({"Literal", "Annotated"})  # their strings are values, not forward references


def quoted_name(string: Node) -> Node | None:
    """The ``string_content`` of a forward reference written as a plain dotted name
    (``-> "Context"``, ``Optional["m.Context"]``); None for any other string, and for
    the strings of ``Literal[…]`` / ``Annotated[…]``, which are values."""
    parts = [c for c in string.named_children if c.type == "string_content"]
    if len(parts) != 1 or len(string.named_children) != 3 or not _QUOTED.fullmatch(node_text(parts[0])):
        return None
    up = string.parent
    while up is not None and up.type in ("type", "type_parameter", "generic_type", "subscript"):
        head = up.named_children[0] if up.named_child_count else None
        if (
            up.type in ("generic_type", "subscript")
            and head is not None
            and node_text(head).rsplit(".", 1)[-1] in _NOT_TYPES
        ):
            return None
        up = up.parent
    return parts[0]


def _tuple_parts(type_node: Node | None) -> list[Node | None]:
    """The classes the items of ``tuple[A, B | None, C]`` / ``t.Tuple[A, B]`` name (None for
    an item that names no class); none for ``tuple[A, ...]`` or anything else."""
    node = type_node.named_children[0] if type_node is not None and type_node.named_child_count else None
    if type_node is not None and type_node.type in ("generic_type", "subscript"):
        node = type_node  # an item of a container's annotation, no `type` node around it
    if node is not None and node.type == "generic_type" and node.named_child_count == 2:
        head, params = node.named_children
        if node_text(head) not in ("tuple", "Tuple") or any(p.type != "type" for p in params.named_children):
            return []
        parts = [_type_name(p) for p in params.named_children]
        texts = [node_text(p) for p in params.named_children]
    elif node is not None and node.type == "subscript":  # `t.Tuple[A, B]`
        if node_text(node.child_by_field_name("value")).rsplit(".", 1)[-1] not in ("tuple", "Tuple"):
            return []
        items = node.children_by_field_name("subscript")
        parts = [p if p.type in ("identifier", "attribute") and _dotted(p) else None for p in items]
        texts = [node_text(p) for p in items]
    else:
        return []
    return parts if len(parts) > 1 and "..." not in texts else []


def _type_name(type_node: Node | None) -> Node | None:
    """The class an annotation names: ``Foo``, ``m.Foo``, ``Optional[Foo]``, ``Foo | None``,
    and ``type[Foo]`` (a class held in a name: its members are ``Foo``'s)."""
    node = _optional_inner(type_node)
    if node is None:
        return None
    if node.type in ("identifier", "attribute"):
        return node if _dotted(node) else None
    if node.type == "string":  # `-> "Context"`: a forward reference
        return quoted_name(node)
    return _class_of(type_node)


def _named(type_node: Node | None) -> bool:
    """Whether an annotation is a plain (dotted) name: no container, ``type[…]`` or union."""
    first = type_node.named_children[0] if type_node is not None and type_node.named_child_count else None
    return first is not None and first.type in ("identifier", "attribute")


def _class_of(type_node: Node | None) -> Node | None:
    """``Foo`` of ``type[Foo]`` / ``t.Type[Foo]`` (``| None`` / ``Optional[…]`` around it):
    the name holds the class itself, so calling it makes a ``Foo``."""
    node = _optional_inner(type_node)
    if node is None:
        return None
    if node.type == "generic_type" and node.named_child_count == 2:  # type[Foo]
        head, params = node.named_children
        inner = params.named_children
        ok = node_text(head) in _TYPE_OF and len(inner) == 1 and inner[0].type == "type"
        found = inner[0].named_children[0] if ok and inner[0].named_child_count == 1 else None
    elif node.type == "subscript":  # t.Type[Foo]
        value, items = node.child_by_field_name("value"), node.children_by_field_name("subscript")
        ok = value is not None and node_text(value).rsplit(".", 1)[-1] in _TYPE_OF and len(items) == 1
        found = items[0] if ok else None
    else:
        return None
    return (
        found if found is not None and found.type in ("identifier", "attribute") and _dotted(found) else None
    )


_TYPE_OF = frozenset({"type", "Type"})


def _optional_inner(type_node: Node | None) -> Node | None:
    """The annotation inside ``Optional[…]`` / ``… | None`` (the node itself otherwise);
    None for a union of classes."""
    node = type_node.named_children[0] if type_node is not None and type_node.named_child_count else None
    if type_node is not None and type_node.type != "type":
        node = type_node  # a subscript's item: no `type` node around it
    if node is None:
        return None
    if node.type == "generic_type" and node.named_child_count == 2:  # Optional[Foo]
        head, params = node.named_children
        if node_text(head) == "Optional":
            inner = params.named_children
            return _optional_inner(inner[0]) if len(inner) == 1 else None
        return node
    if node.type == "subscript":  # t.Optional[Foo]
        value, items = node.child_by_field_name("value"), node.children_by_field_name("subscript")
        if value is not None and node_text(value).rsplit(".", 1)[-1] == "Optional":
            return _optional_inner(items[0]) if len(items) == 1 else None
        return node
    if node.type in ("binary_operator", "union_type"):  # Foo | None
        if node.type == "binary_operator":
            sides = [node.child_by_field_name("left"), node.child_by_field_name("right")]
        else:
            sides = list(node.named_children)
        kept = [n for n in sides if n is not None and not _is_none(n)]
        return _optional_inner(kept[0]) if len(kept) == 1 and len(sides) == 2 else None
    return node


def _is_none(node: Node) -> bool:
    return node.type == "none" or (
        node.type == "type" and node.named_child_count == 1 and _is_none(node.named_children[0])
    )


def _dotted(node: Node) -> bool:
    """``a.b.c``, also through calls (``Foo().make``): what the edges write as a path."""
    if node.type == "identifier":
        return True
    if node.type == "call":
        fn = node.child_by_field_name("function")
        return fn is not None and _dotted(fn)
    obj = node.child_by_field_name("object")
    return node.type == "attribute" and obj is not None and _dotted(obj)


_CONTAINERS = frozenset(
    {
        "list", "List", "set", "Set", "frozenset", "FrozenSet", "Sequence", "MutableSequence",
        "Iterable", "Iterator", "Collection", "AbstractSet", "MutableSet", "Generator", "tuple", "Tuple",
    }
)  # fmt: skip


def _item_type(type_node: Node | None) -> Node | None:
    """The class iterating a value annotated ``type_node`` gives: ``Foo`` of ``list[Foo]``,
    ``cabc.Iterator[Foo]``, ``t.Sequence[Foo] | None``, ``tuple[Foo, ...]``,
    ``Generator[Foo, None, None]``; None for anything else (a dict, a union of classes)."""
    first = _item_node(type_node)
    return (
        first if first is not None and first.type in ("identifier", "attribute") and _dotted(first) else None
    )


def _item_node(type_node: Node | None) -> Node | None:
    """The annotation of what iterating a value annotated ``type_node`` gives (``tuple[str,
    Foo]`` of ``Iterator[tuple[str, Foo]]``), whatever it is; None when not a container."""
    node = _optional_inner(type_node)  # `list[Foo] | None`
    if node is None:
        return None
    head: Node | None
    if node.type == "generic_type" and node.named_child_count == 2:  # list[Foo]
        head, params = node.named_children
        args = [
            a.named_children[0] if a.type == "type" and a.named_child_count else a
            for a in params.named_children
        ]
    elif node.type == "subscript":  # cabc.Iterator[Foo]
        head = node.child_by_field_name("value")
        args = node.children_by_field_name("subscript")
    else:
        return None
    name = node_text(head).rsplit(".", 1)[-1]
    if head is None or name not in _CONTAINERS or not args:
        return None
    if name in ("tuple", "Tuple"):
        if len(args) != 2 or args[1].type != "ellipsis":
            return None  # `tuple[A, B]`: its items differ
    elif name != "Generator" and len(args) != 1:
        return None
    return args[0]


_MAPPINGS = frozenset(
    {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict", "DefaultDict", "ChainMap"}
)


def _value_type(type_node: Node | None) -> Node | None:
    """The class of a mapping's values: ``Foo`` of ``dict[str, Foo]``, ``t.Mapping[str, Foo]``
    (``| None`` around it); None for anything else."""
    node = _optional_inner(type_node)
    if node is None:
        return None
    head: Node | None
    if node.type == "generic_type" and node.named_child_count == 2:  # dict[str, Foo]
        head, params = node.named_children
        args = [
            a.named_children[0] if a.type == "type" and a.named_child_count else a
            for a in params.named_children
        ]
    elif node.type == "subscript":  # t.Dict[str, Foo]
        head = node.child_by_field_name("value")
        args = node.children_by_field_name("subscript")
    else:
        return None
    if head is None or node_text(head).rsplit(".", 1)[-1] not in _MAPPINGS or len(args) != 2:
        return None
    value = args[1]
    return value if value.type in ("identifier", "attribute") and _dotted(value) else None


def _callee(value: Node | None) -> Node | None:
    """The callee of ``Foo(…)`` / ``a.make(…)`` when it is a dotted name."""
    if value is None or value.type != "call":
        return None
    fn = value.child_by_field_name("function")
    return fn if fn is not None and _dotted(fn) else None
