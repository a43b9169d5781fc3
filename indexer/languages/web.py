"""JavaScript, TypeScript and TSX."""

from __future__ import annotations

from typing import ClassVar

from tree_sitter import Node

from ..model import SymbolKind
from .base import Definition, Import, Mapping, Role, Rule, Scope, node_text
from .paths import text_parts

_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_CLASS_VALUES = frozenset({"class", "class_expression"})


class JavaScriptMapping(Mapping):
    """Classes, functions, methods; ``const f = () => …`` as functions."""

    rules: ClassVar[dict[str, Rule]] = {
        "class_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "abstract_class_declaration": Rule(SymbolKind.CLASS, Role.CLASS),
        "function_declaration": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "generator_function_declaration": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "method_definition": Rule(SymbolKind.METHOD, Role.FUNCTION),
        # TypeScript
        "interface_declaration": Rule(SymbolKind.INTERFACE, Role.CLASS),
        "enum_declaration": Rule(SymbolKind.ENUM, Role.CLASS),
        "type_alias_declaration": Rule(SymbolKind.CLASS, Role.CLASS, body_field="-"),
        "internal_module": Rule(SymbolKind.NAMESPACE, Role.NAMESPACE),
        "module": Rule(SymbolKind.MODULE, Role.NAMESPACE),
        "method_signature": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "abstract_method_signature": Rule(SymbolKind.METHOD, Role.FUNCTION),
        "function_signature": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
    }
    wrappers: ClassVar[dict[str, str]] = {
        "export_statement": "declaration",
        "ambient_declaration": "",
    }
    constructor_names = frozenset({"constructor"})

    def definitions(self, node: Node, scope: Scope) -> list[Definition]:
        """Table rules, ``export default function``, TS namespaces and variable declarations."""
        t = node.type
        if t in ("lexical_declaration", "variable_declaration"):
            return _variables(node, scope)
        if t == "expression_statement" and node.named_child_count == 1:
            inner = node.named_children[0]
            if inner.type == "internal_module":
                return self.unwrap(node, "", scope)
            return []
        if t == "export_statement" and node.child_by_field_name("declaration") is None:
            value = node.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES | _CLASS_VALUES:
                is_class = value.type in _CLASS_VALUES
                name_node = value.child_by_field_name("name")
                return [
                    Definition(
                        value,
                        node,
                        node_text(name_node) or "default",
                        name_node,
                        SymbolKind.CLASS if is_class else SymbolKind.FUNCTION,
                        Role.CLASS if is_class else Role.FUNCTION,
                        value.child_by_field_name("body"),
                    )
                ]
            return []
        if t in ("public_field_definition", "field_definition") and scope.in_class:
            value = node.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
                return [
                    Definition(
                        node,
                        node,
                        node_text(name_node),
                        name_node,
                        SymbolKind.METHOD,
                        Role.FUNCTION,
                        value.child_by_field_name("body"),
                    )
                ]
            return []
        found = super().definitions(node, scope)
        for d in found:
            if d.role is Role.NAMESPACE:
                d.name = d.name.strip("'\"")  # declare module "name"
        return found

    def imports(self, node: Node) -> list[Import]:
        """``import d, {a as b} from "./x"``, ``import * as ns``; ``export {q} from`` and
        ``export * as ns from`` re-exports (the latter binds ``ns``, not each name)."""
        module = text_parts(node.child_by_field_name("source"))
        out: list[Import] = []
        for child in node.named_children:
            if child.type == "import_clause":
                for part in child.named_children:
                    if part.type == "identifier":
                        out.append(Import(module, "default", node_text(part), part))
                    elif part.type == "namespace_import":
                        ident = part.named_children[0] if part.named_child_count else part
                        out.append(Import(module, "", node_text(ident), ident))
                    elif part.type == "named_imports":
                        out.extend(_specifiers(module, part, "import_specifier"))
            elif child.type == "export_clause":
                out.extend(_specifiers(module, child, "export_specifier"))
            elif child.type == "namespace_export":  # `export * as core from "./core"`: one name
                ident = child.named_children[0] if child.named_child_count else child
                out.append(Import(module, "", node_text(ident), ident))
        if not out:  # `import "./side-effect"`, `export * from "./x"`
            star = node.type == "export_statement"
            out.append(Import(module, "*" if star else "", "*" if star else "", node))
        return out


def _specifiers(module: str, clause: Node, kind: str) -> list[Import]:
    out: list[Import] = []
    for spec in clause.named_children:
        if spec.type != kind:
            continue
        name_node = spec.child_by_field_name("name")
        alias = node_text(spec.child_by_field_name("alias")) or node_text(name_node)
        out.append(Import(module, node_text(name_node), alias, name_node or spec))
    return out


def _variables(node: Node, scope: Scope) -> list[Definition]:
    """``const f = () => {}`` → function; other top-level names → variables / constants."""
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    is_const = node.child(0) is not None and node_text(node.child(0)) == "const"
    found: list[Definition] = []
    for decl in declarators:
        name_node = decl.child_by_field_name("name")
        if name_node is None or name_node.type != "identifier":
            continue
        value = decl.child_by_field_name("value")
        if len(declarators) == 1 and value is not None and value.type in _FUNCTION_VALUES:
            kind = SymbolKind.METHOD if scope.in_class else SymbolKind.FUNCTION
            body = value.child_by_field_name("body")
            return [Definition(decl, node, node_text(name_node), name_node, kind, Role.FUNCTION, body)]
        held = _held_function(value) if len(declarators) == 1 and not scope.in_class else None
        if held is not None:  # `const X = core.$constructor("X", (inst, def) => {…})`: a chunk
            kind = SymbolKind.CONSTANT if is_const else SymbolKind.VARIABLE
            body = held.child_by_field_name("body")
            return [Definition(decl, node, node_text(name_node), name_node, kind, Role.FUNCTION, body)]
        if len(declarators) == 1 and value is not None and value.type in _CLASS_VALUES:
            body = value.child_by_field_name("body")
            return [
                Definition(decl, node, node_text(name_node), name_node, SymbolKind.CLASS, Role.CLASS, body)
            ]
        if not scope.container:
            kind = SymbolKind.CONSTANT if is_const else SymbolKind.VARIABLE
            found.append(Definition(decl, node, node_text(name_node), name_node, kind, Role.SYMBOL, None))
    return found


def _held_function(value: Node | None) -> Node | None:
    """The function a call is given, when the value is such a call spanning several lines
    (``core.$constructor("X", (inst, def) => {…})``, ``forwardRef((props, ref) => …)``):
    the last function argument; None for any other value."""
    if value is None or value.type != "call_expression" or value.start_point.row == value.end_point.row:
        return None
    args = value.child_by_field_name("arguments")
    if args is None:
        return None
    held = [a for a in args.named_children if a.type in _FUNCTION_VALUES]
    return held[-1] if held else None
