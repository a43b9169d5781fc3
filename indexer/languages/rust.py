"""Rust: items, traits, ``impl Foo { fn bar }`` → ``Foo.bar``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

from tree_sitter import Node, Tree

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, error_count, node_text
from .paths import text_parts


class RustMapping(Mapping):
    """Rust items; an ``impl`` is a scope named after its type, with no symbol of its own."""

    rules: ClassVar[dict[str, Rule]] = {
        "function_item": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "function_signature_item": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "struct_item": Rule(SymbolKind.STRUCT, Role.CLASS, body_field="-"),
        "union_item": Rule(SymbolKind.STRUCT, Role.CLASS, body_field="-"),
        "enum_item": Rule(SymbolKind.ENUM, Role.CLASS, body_field="-"),
        "trait_item": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "type_item": Rule(SymbolKind.CLASS, Role.CLASS, body_field="-"),
        "macro_definition": Rule(SymbolKind.FUNCTION, Role.FUNCTION, body_field="-"),
        "const_item": Rule(SymbolKind.CONSTANT, Role.SYMBOL),
        "static_item": Rule(SymbolKind.VARIABLE, Role.SYMBOL),
    }

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """``impl`` blocks and ``mod`` items, then the table."""
        if node.type == "impl_item":
            type_node = node.child_by_field_name("type")
            while type_node is not None and type_node.type in (
                "generic_type",
                "scoped_type_identifier",
            ):
                inner = type_node.child_by_field_name("type") or type_node.child_by_field_name("name")
                if inner is None:
                    break
                type_node = inner
            name = node_text(type_node)
            body = node.child_by_field_name("body")
            return [Definition(node, node, name, type_node, None, Role.CLASS, body)]
        if node.type == "mod_item":
            name_node = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            role = Role.NAMESPACE if body is not None else Role.SYMBOL
            return [Definition(node, node, node_text(name_node), name_node, SymbolKind.MODULE, role, body)]
        return super().definitions(node, scope)

    def adjust_kind(self, kind: SymbolKind | None, name: str, scope: Scope) -> SymbolKind | None:
        """Functions in an ``impl`` or ``trait`` are methods."""
        if kind is SymbolKind.FUNCTION and scope.in_class:
            return SymbolKind.METHOD
        return kind

    def imports(self, node: Node) -> list[Import]:
        """``use a::b::{c, d as e}`` → ``a.b``: ``c`` and ``d`` (as ``e``); ``use a::*``."""
        out: list[Import] = []
        argument = node.child_by_field_name("argument")
        if argument is not None:
            _use(argument, "", out)
        return out


def _use(node: Node, prefix: str, out: list[Import]) -> None:
    def full(path: str) -> str:
        return f"{prefix}.{path}" if prefix and path else prefix or path

    t = node.type
    if t in ("scoped_identifier", "identifier", "crate", "self", "super"):
        path = full(text_parts(node))
        module, _, name = path.rpartition(".")
        out.append(Import(module, name, name, node))
    elif t == "use_as_clause":
        path = full(text_parts(node.child_by_field_name("path")))
        module, _, name = path.rpartition(".")
        out.append(Import(module, name, node_text(node.child_by_field_name("alias")), node))
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        out.append(Import(full(text_parts(inner)), "*", "*", node))
    elif t == "scoped_use_list":
        base = full(text_parts(node.child_by_field_name("path")))
        items = node.child_by_field_name("list")
        for item in items.named_children if items is not None else []:
            _use(item, base, out)
    elif t == "use_list":
        for item in node.named_children:
            _use(item, prefix, out)


# What a macro's braces hold when they hold items: tokio's `cfg_rt! { pub fn spawn… }`.
_ITEMS_INSIDE = re.compile(
    rb"\{(?:\s|//[^\n]*|/\*.*?\*/)*"
    rb"(?:#!?\[|macro_rules!|(?:pub|fn|impl|struct|enum|union|mod|use|const|static|trait|type|async|unsafe|extern)\b)",
    re.DOTALL,
)
# A macro's template (`$name`, `$(…)*`) is no code to read as items.
_METAVARIABLE = re.compile(rb"\$[A-Za-z_(]")
# Nested wrappers (`cfg_rt! { cfg_net! { … } }`) come out one level a pass.
_MAX_PASSES = 4


def unwrapped(source: bytes, root: Node, parse: Callable[[bytes], Tree]) -> Tree | None:
    """The parse of ``source`` with each top-level macro call whose braces hold items
    (``cfg_rt! { … }``, a configuration wrapper) reduced to its items: the ``name! {`` and
    the closing ``}`` blanked, newlines kept, so every row and column stays where it was.
    None when there is no such call. The grammar reads a macro's body as tokens, so the
    functions inside were no definitions: tokio's ``spawn``, ``spawn_blocking`` and
    ``block_in_place`` had no symbol. Only the parse reads the blanked bytes."""
    out, tree, changed = bytearray(source), None, False
    node = root
    for _ in range(_MAX_PASSES):
        wrappers = [c for c in node.children if c.type == "macro_invocation" and _holds_items(out, c)]
        if not wrappers:
            break
        for call in wrappers:
            body = call.children[-1]
            opening = body.start_byte + 1
            out[call.start_byte : opening] = bytes(
                b if b == 0x0A else 0x20 for b in out[call.start_byte : opening]
            )
            out[body.end_byte - 1] = 0x20
        changed = True
        tree = parse(bytes(out))
        node = tree.root_node
    if not changed or tree is None or error_count(tree.root_node) > error_count(root):
        return None
    return tree


def _holds_items(source: bytearray, call: Node) -> bool:
    """Braces that open on items and hold no ``$name`` (a macro's own template does)."""
    body = call.children[-1] if call.children else None
    if body is None or body.type != "token_tree" or source[body.start_byte : body.start_byte + 1] != b"{":
        return False
    text = bytes(source[body.start_byte : body.end_byte])
    return _ITEMS_INSIDE.match(text) is not None and _METAVARIABLE.search(_without_macro_rules(text)) is None


def _without_macro_rules(text: bytes) -> bytes:
    """``text`` without the bodies of the ``macro_rules!`` it defines (their ``$x`` are theirs)."""
    out, i = bytearray(), 0
    while (start := text.find(b"macro_rules!", i)) >= 0:
        out += text[i:start]
        opening = min((j for j in (text.find(b"{", start), text.find(b"(", start)) if j >= 0), default=-1)
        if opening < 0:
            return bytes(out)
        close, depth, j = {ord("{"): ord("}"), ord("("): ord(")")}[text[opening]], 0, opening
        while j < len(text):
            if text[j] == text[opening]:
                depth += 1
            elif text[j] == close:
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    return bytes(out + text[i:])
