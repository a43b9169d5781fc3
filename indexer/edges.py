"""Source → edges: calls, inheritance, imports and type references, as written.

One tree-sitter query per language (``languages/edges-<lang>.scm``) captures the
nodes, in C: a Python walk over every node of the standard library would cost
more than the parse itself. Captures:

* ``@call`` — a callee expression (Java: the whole ``method_invocation``);
* ``@inherit`` / ``@implement`` — a supertype in a class / interface / extension
  header;
* ``@import`` — an import statement, read by the language's mapping
  (:meth:`Mapping.imports`);
* ``@ref`` — a type in an annotation or parameter, a decorator.

Each edge's ``from_symbol`` is the innermost definition of the outline around
it (nested local functions count as their outer function). Nothing is resolved
here: that is the graph's job, at query time, over every file.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable
from importlib import resources

from tree_sitter import Node, Query

from . import grammars
from .languages import bindings
from .languages.base import Item, Mapping, node_text
from .languages.bindings import Marks, Point, captures_in_order
from .languages.csharp_bindings import csharp_marks
from .languages.go_bindings import go_marks
from .languages.java_bindings import java_marks
from .languages.kotlin_bindings import kotlin_marks
from .languages.paths import UNKNOWN, dotted_path, reads_as_written
from .languages.python_bindings import python_marks
from .languages.python_types import quoted_name
from .languages.rust_bindings import rust_marks
from .languages.swift_bindings import swift_marks
from .languages.swift_sdk import closure_rows
from .languages.typescript_bindings import typescript_marks
from .model import Edge, EdgeKind, SymbolKind

log = logging.getLogger(__name__)

# language → the .scm file holding its edge query
_QUERY_FILES = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "typescript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "cuda": "cpp",
    "csharp": "csharp",
    "swift": "swift",
    "kotlin": "kotlin",
}
_KINDS = {
    "call": EdgeKind.CALL,
    "inherit": EdgeKind.INHERIT,
    "implement": EdgeKind.IMPLEMENT,
    "ref": EdgeKind.REFERENCE,
    "held": EdgeKind.REFERENCE,  # Python's `x = mod.var`: kept only where the binder marks it
}
# definitions whose body holds attributes (Python classes; Swift types, extensions, protocols)
_CLASS_NODES = frozenset(
    {
        "class_definition",  # Python
        "class_declaration",  # Swift (extensions too), Java
        "protocol_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "struct_declaration",  # C#
        "record_struct_declaration",
        "abstract_class_declaration",  # TypeScript
    }
)
_VALUE_KINDS = frozenset({SymbolKind.VARIABLE, SymbolKind.CONSTANT, SymbolKind.FIELD, SymbolKind.PROPERTY})
_queries: dict[str, Query | None] = {}  # compiled once; a Query is immutable

Column = Callable[[int, int], int]  # (row, byte column) → code-point column
# (line, byte column, order found, kind, scope, to_name, end line, end byte column, module, alias)
_Row = tuple[int, int, int, EdgeKind, str, str, int, int, str, str]


def has_edges(language: str) -> bool:
    """Whether the language has an edge query."""
    return language in _QUERY_FILES


def _query(language: str) -> Query | None:
    if language not in _queries:
        found: Query | None = None
        name = _QUERY_FILES.get(language)
        if name is not None:
            try:
                source = resources.files(__package__ + ".languages").joinpath(f"edges-{name}.scm")
                found = Query(grammars.language(language), source.read_text(encoding="utf-8"))
            except Exception:  # a query that does not compile must not stop indexing
                log.warning("the edge query of %s does not load; no edges for it", language, exc_info=True)
        _queries[language] = found
    return _queries[language]


class _Scopes:
    """Innermost outline definition around a byte offset."""

    def __init__(self, items: list[Item]) -> None:
        spans: list[tuple[int, int, str]] = []
        self.receivers: dict[str, str] = {}  # Go method → its receiver's name
        self.classes: set[str] = set()  # qualified names of class definitions
        self.values: set[str] = set()  # of variables and constants (not scopes for a binding)

        def visit(items: list[Item]) -> None:
            for item in items:
                for d in item.defs:
                    if d.qualified_name:
                        spans.append((d.outer.start_byte, d.outer.end_byte, d.qualified_name))
                        if d.node.type in _CLASS_NODES:
                            self.classes.add(d.qualified_name)
                        elif d.kind in _VALUE_KINDS:
                            self.values.add(d.qualified_name)
                        if d.node.type == "method_declaration":
                            receiver = _go_receiver_name(d.node)
                            if receiver:
                                self.receivers[d.qualified_name] = receiver
                    if d.members:
                        visit(d.members)

        visit(items)
        spans.sort(key=lambda s: (s[0], -s[1]))
        self.starts = [s[0] for s in spans]
        self.spans = spans
        # parent[i]: the nearest earlier span containing span i (properly nested outlines)
        self.parent: list[int] = []
        stack: list[int] = []
        for i, (_start, end, _name) in enumerate(spans):
            while stack and spans[stack[-1]][1] < end:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(i)

    def at(self, offset: int) -> str:
        i = bisect.bisect_right(self.starts, offset) - 1
        while i >= 0:
            start, end, name = self.spans[i]
            if start <= offset < end:
                return name
            i = self.parent[i]
        return ""

    def binding_scope(self, offset: int) -> str:
        """The function, class or module ("") a name bound at ``offset`` belongs to."""
        return self.binding_scope_of(self.at(offset))

    def binding_scope_of(self, scope: str) -> str:
        """The function, class or module ("") of code in ``scope`` (a variable is none)."""
        while scope in self.values:
            scope = scope.rpartition(".")[0]
        return scope


def _go_receiver_name(method: Node) -> str:
    receiver = method.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else []:
        name = param.child_by_field_name("name")
        if name is not None and name.text is not None:
            return name.text.decode("utf-8", "replace")
    return ""


def extract_edges(
    root: Node, language: str, mapping: Mapping, items: list[Item], path: str, column: Column | None
) -> tuple[Edge, ...]:
    """The edges of one parsed file, in document order (empty for languages without a query).

    ``column`` converts tree-sitter byte columns to code points; None when the
    source is ASCII (they are the same).
    """
    query = _query(language)
    if query is None:
        return ()
    captures = captures_in_order(query, root)
    if not captures:
        return ()
    scopes = _Scopes(items)
    at, receivers = scopes.at, scopes.receivers
    # (line, byte column, order found, …) rows, sorted before they become Edges:
    # a tuple sort in C instead of a key function per edge; ``order`` keeps the
    # sort stable and stops comparison before the non-orderable fields.
    found: list[_Row] = []
    add = found.append
    # a call's argument count by where its name ends, where overloads need it
    counted: dict[tuple[int, int], int] = {}
    # and its argument types, where overloads need them (Java)
    typer = mapping.argument_types()
    typed: dict[tuple[int, int], str] = {}
    held: set[int] = set()  # the `order` of rows from a `held` capture

    for capture, nodes in captures:
        if capture == "import":
            for node in nodes:
                try:
                    bindings = mapping.imports(node)
                except Exception:  # one odd statement must not lose the file's edges
                    log.debug("reading an import in %s failed", path, exc_info=True)
                    continue
                scope = at(node.start_byte)
                for b in bindings:
                    (r0, c0), (r1, c1) = b.node.start_point, b.node.end_point
                    add((r0, c0, len(found), EdgeKind.IMPORT, scope, b.name, r1, c1, b.module, b.alias))
            continue
        if capture == "quoted":  # Python: the name inside a string annotation
            for node in nodes:
                content = quoted_name(node)
                if content is not None:
                    name = node_text(content)
                    r1, c1 = content.end_point
                    c0 = c1 - (len(name) - name.rfind(".") - 1)  # where its last part starts
                    add((r1, c0, len(found), EdgeKind.REFERENCE, at(node.start_byte), name, r1, c1, "", ""))
            continue
        kind = _KINDS.get(capture)
        if kind is None:
            continue
        seen: set[tuple[int, int]] = set()
        for node in nodes:
            start, end = node.start_byte, node.end_byte
            if (start, end) in seen:
                continue
            seen.add((start, end))
            scope = at(start)
            if kind is EdgeKind.INHERIT and language == "python":
                scope = _local_class(node, scope)
            plain = _plain_path(node, start, end)
            if plain is not None:
                to_name, last = plain
                r1, c1 = node.end_point
                r0, c0 = r1, c1 - last
                if receivers:
                    head, dot, rest = to_name.partition(".")
                    if head == receivers.get(scope):
                        to_name = "self" + dot + rest  # Go: `s.Save()` in a method of `s`'s type
            else:
                walked = dotted_path(node)
                if walked is None:
                    continue
                parts, name_node = walked
                if not parts or parts[-1] in ("", UNKNOWN):
                    continue
                if receivers and parts[0] == receivers.get(scope):
                    parts = ["self", *parts[1:]]
                to_name = ".".join(parts)
                (r0, c0), (r1, c1) = name_node.start_point, name_node.end_point
            if kind is EdgeKind.CALL:
                n = mapping.argument_count(node)
                if n >= 0:
                    counted[(r1, c1)] = n
                if n > 0 and typer is not None:
                    types = typer(node)
                    if types:
                        typed[(r1, c1)] = types
            if capture == "held":
                held.add(len(found))
            add((r0, c0, len(found), kind, scope, to_name, r1, c1, "", ""))
    found.sort()
    if language in _GENERIC_QUERIES:
        found = _without_type_parameters(found, language, root)
    if language == "python":
        called = {row[5] for row in found if row[3] is EdgeKind.CALL}
        marks = python_marks(root, scopes.binding_scope, scopes.classes, called)
        found = _narrow(_mark_bindings(found, marks), marks)
        found = _through_variables(found, marks, scopes, _PYTHON_SELF)
        if held:
            found = _held_kept(found, held)
        found = _attributes_on_bases(found, marks)
    elif language == "swift":
        marks, values = swift_marks(root, scopes.binding_scope, scopes.classes)
        found = closure_rows(found, values, root, at)
        found = _through_variables(_mark_bindings(found, marks), marks, scopes, _SWIFT_SELF)
    elif language == "java":
        marks = java_marks(root, scopes.binding_scope, scopes.classes)
        found = _through_variables(_mark_bindings(found, marks), marks, scopes, _THIS, calls_only=True)
    elif language in ("typescript", "tsx"):
        marks = typescript_marks(language, root, scopes.binding_scope, scopes.classes)
        found = _calls_of_parameters(_mark_bindings(found, marks), marks, scopes)
    elif language == "csharp":
        marks = csharp_marks(root, scopes.binding_scope, scopes.classes)
        found = _through_variables(_mark_bindings(found, marks), marks, scopes, _THIS, calls_only=True)
        found = _calls_of_parameters(found, marks, scopes)
    elif language == "kotlin":
        marks = kotlin_marks(root, scopes.binding_scope, scopes.classes)
        found = _through_variables(_mark_bindings(found, marks), marks, scopes, _THIS, calls_only=True)
        found = _calls_of_parameters(found, marks, scopes)
    elif language == "go":
        marks = go_marks(root, scopes.binding_scope)
        found = _calls_of_parameters(_narrow(_mark_bindings(found, marks), marks), marks, scopes)
    elif language == "rust":
        marks = rust_marks(root, scopes.binding_scope)
        found = _calls_of_parameters(_mark_bindings(found, marks), marks, scopes)
    args, types_of = counted.get, typed.get
    if column is None:
        return tuple(
            Edge(
                path,
                scope,
                to_name,
                kind,
                r0 + 1,
                c0,
                r1 + 1,
                c1,
                module,
                alias,
                args=args((r1, c1), -1),
                arg_types=types_of((r1, c1), ""),
            )
            for r0, c0, _, kind, scope, to_name, r1, c1, module, alias in found
        )
    return tuple(
        Edge(
            path,
            scope,
            to_name,
            kind,
            r0 + 1,
            column(r0, c0),
            r1 + 1,
            column(r1, c1),
            module,
            alias,
            args=args((r1, c1), -1),
            arg_types=types_of((r1, c1), ""),
        )
        for r0, c0, _, kind, scope, to_name, r1, c1, module, alias in found
    )


# a generic parameter's declaration per language: its name is the field ``name``, else the
# first type identifier; the declaration it belongs to is its list's parent
_GENERIC_QUERIES = {
    "csharp": "(type_parameter) @p",
    "java": "(type_parameter) @p",
    "kotlin": "(type_parameter) @p",
    "swift": "(type_parameter) @p",
    "typescript": "(type_parameter) @p",
    "tsx": "(type_parameter) @p",
    "rust": "(type_parameter) @p",
    "go": "(type_parameter_declaration) @p",
}
_Span = tuple[tuple[int, int], tuple[int, int]]


def _type_parameters(language: str, root: Node) -> dict[str, list[_Span]]:
    """Each generic parameter's name → the spans of the declarations that declare it."""
    out: dict[str, list[_Span]] = {}
    for _, node in bindings.captures(bindings.compiled_query(language, _GENERIC_QUERIES[language]), root):
        names = node.children_by_field_name("name") or [
            next((c for c in node.named_children if c.type == "type_identifier"), node)
        ]
        owner = node.parent.parent if node.parent is not None else None
        if owner is None:
            continue
        for name in names:
            if name.type in ("identifier", "type_identifier") and name.text:
                span = (owner.start_point, owner.end_point)
                out.setdefault(name.text.decode("utf-8", "replace"), []).append(span)
    return out


def _without_type_parameters(found: list[_Row], language: str, root: Node) -> list[_Row]:
    """Edges to a generic parameter (``T`` in ``void M<T>(T t)``) dropped, and a path through
    one (``T.decode(…)``) made a receiver of unknown type (``?.decode``): ``T`` is whatever
    the caller says, never a class that happens to be named ``T``."""
    generics = _type_parameters(language, root)
    if not generics:
        return found
    out: list[_Row] = []
    for row in found:
        head, dot, rest = row[5].partition(".")
        spans = generics.get(head.removesuffix("()")) if row[3] is not EdgeKind.IMPORT else None
        if spans and any(start <= (row[0], row[1]) < end for start, end in spans):
            if not dot:
                continue
            row = (*row[:5], "?." + rest, *row[6:])
        out.append(row)
    return out


def _local_class(base: Node, scope: str) -> str:
    """The scope of a Python base class: a class inside a function is no outline definition,
    so its bases would read as the function's; they get ``function.Class`` instead."""
    node: Node | None = base
    while node is not None and node.type != "class_definition":
        node = node.parent
    name = node.child_by_field_name("name") if node is not None else None
    if name is None or name.text is None:
        return scope
    own = name.text.decode("utf-8", "replace")
    if scope == own or scope.endswith("." + own):
        return scope
    return f"{scope}.{own}" if scope else own


_PYTHON_SELF = frozenset({"self", "cls", "super", "?"})
_THIS = frozenset({"this", "super", "base", "?"})
_SWIFT_SELF = frozenset({"self", "Self", "super", "?"})


def _through_variables(
    found: list[_Row], marks: Marks, scopes: _Scopes, skip: frozenset[str], *, calls_only: bool = False
) -> list[_Row]:
    """Calls and references whose first name is a variable of the function they are in (a
    parameter, a local, a closure's or loop's variable) never name a definition outside
    it: ``configure(app)`` with a parameter ``configure`` is ``?.configure`` (whatever
    was passed; its candidates are the definitions so named), ``opts.get()`` with an
    untyped ``opts`` is ``?.get``. A variable the marks type (``ctx: Context``) keeps
    its name, for the resolver to follow. ``calls_only`` (Java, C#, Kotlin, where every
    other reference is a type position): only calls on a local, ``x.m()``, are rewritten."""
    if not marks.variables:
        return found
    typed = _landed(found, scopes) & marks.typed  # a mark no edge carries types nothing
    out: list[_Row] = []
    for row in found:
        kind = row[3]
        if kind is EdgeKind.CALL or (kind is EdgeKind.REFERENCE and not calls_only):
            head, dot, rest = row[5].partition(".")
            name = head.removesuffix("()")
            scope = scopes.binding_scope_of(row[4])
            member = not dot and (row[6], row[7]) in marks.members
            # Java, C#, Kotlin: only `x.m` on a local is rewritten; `x()` and `x().m` call a
            # method (a scope's locals are pooled over its overloads and its whole body, and
            # `val x = x()` calls the method before the local exists)
            plain = not calls_only or (dot and head == name)
            if plain and name not in skip and not member and name in marks.variables.get(scope, ()):
                # `k(…)` / `k().m` where the marks say what calling `k` gives (it holds a class)
                made = (scope, name + bindings.CALLED) in typed and (head != name or kind is EdgeKind.CALL)
                if made:
                    pass
                elif not dot:
                    row = (*row[:5], "?." + name, *row[6:])
                elif head != name or (scope, name) not in typed:
                    row = (*row[:5], "?." + rest, *row[6:])
        out.append(row)
    return out


def _calls_of_parameters(found: list[_Row], marks: Marks, scopes: _Scopes) -> list[_Row]:
    """A bare call whose name is a parameter of the function it is in calls what was passed
    (a Go ``func`` value, a Rust closure, a Kotlin function type or ``invoke`` operator, a C#
    delegate, a TypeScript callback), never a function of that name: ``start(1)`` inside
    ``launch(start: (Int) -> Unit)`` is ``?.start`` — unresolved, with the definitions so named
    as candidates. Only parameters: a local may be bound after a call of its name
    (``val x = x()``), a parameter is bound before the body runs."""
    if not marks.parameters:
        return found
    # a Go function literal's parameter is keyed by its narrowed name, used inside the literal
    literals: dict[str, list[tuple[Point, Point, str]]] = {}
    for a, b, n, key in marks.narrowed:
        literals.setdefault(n, []).append((a, b, key))
    out: list[_Row] = []
    for row in found:
        if row[3] is EdgeKind.CALL and "." not in row[5]:
            name, at = row[5], (row[6], row[7])
            own = marks.parameters.get(scopes.binding_scope_of(row[4]), ())
            inner = any(a <= at <= b and key in own for a, b, key in literals.get(name, ()))
            if inner or name in own:
                row = (*row[:5], "?." + name, *row[6:9], "")
        out.append(row)
    return out


def _narrow(found: list[_Row], marks: Marks) -> list[_Row]:
    """Calls and references on a name inside the block of an ``if isinstance(name, C)``
    (not in a function nested there) read the narrowed name the binder bound to ``C``
    (``x#12c4.m``); the innermost test wins. Go's function literals narrow their
    parameters' names the same way (``r#12c4.URL`` inside ``func(…, r *http.Request)``)."""
    if not marks.narrowed:
        return found
    by_name: dict[str, list[tuple[tuple[int, int], tuple[int, int], str]]] = {}
    for start, end, name, narrowed in marks.narrowed:
        by_name.setdefault(name, []).append((start, end, narrowed))
    out: list[_Row] = []
    for row in found:
        kind = row[3]
        head, dot, rest = row[5].partition(".")
        if head == "self" and rest.count(".") and "self." + rest.partition(".")[0] in by_name:
            # `self.h.m` right after `self.h = h` (Python): the attribute holds the caller's value
            attr, _, rest = rest.partition(".")
            head = f"self.{attr}"
        spans = by_name.get(head) if dot and (kind is EdgeKind.CALL or kind is EdgeKind.REFERENCE) else None
        if spans:
            at = (row[6], row[7])
            best: tuple[tuple[int, int], str] | None = None
            for start, end, narrowed in spans:
                if start <= at <= end and (best is None or start > best[0]):
                    best = (start, narrowed)
            if best is not None and not any(s <= at <= e for s, e in marks.unnarrowed):
                row = (*row[:5], best[1] + dot + rest, *row[6:])
        out.append(row)
    return out


def _attributes_on_bases(found: list[_Row], marks: Marks) -> list[_Row]:
    """The file's inherit edges carry what attributes each of its classes binds (see
    :attr:`.languages.bindings.Marks.bound_attributes`), in parts, the first edges one each;
    a file without enough of them carries nothing, and its classes' attributes are not known
    to the graph."""
    bases = [i for i, row in enumerate(found) if row[3] is EdgeKind.INHERIT]
    parts = bindings.attributes_records(marks.bound_attributes, len(bases)) if bases else None
    for i, part in zip(bases, parts or [], strict=False):
        found[i] = (*found[i][:9], part)
    return found


def _held_kept(found: list[_Row], held: set[int]) -> list[_Row]:
    """Python's ``x = mod.var`` reference edges (``held`` rows) where the binder marked them
    (the name read is a module's variable), and not where another capture has the same edge."""
    others = {(r[6], r[7]) for r in found if r[2] not in held and r[3] is EdgeKind.REFERENCE}
    return [r for r in found if r[2] not in held or (r[9] and (r[6], r[7]) not in others)]


def _landed(found: list[_Row], scopes: _Scopes) -> set[tuple[str, str]]:
    """The (scope, name) the marks on these edges bind, as the graph reads them
    (``Snapshot._binding_keys``)."""
    out: set[tuple[str, str]] = set()
    for row in found:
        alias = row[9]
        if not alias or row[3] is EdgeKind.IMPORT:
            continue
        for prefix in (bindings.WITH, bindings.IS, bindings.IN, bindings.HOLDS):
            alias = alias.removeprefix(prefix)
        for label in alias.split(bindings.SEPARATOR):
            scope, other, name = label.rpartition(">")
            name = name.partition(bindings.PART)[0].removesuffix(bindings.ONE_OF)
            out.add((scope if other else scopes.binding_scope_of(row[4]), name))
    return out


def _mark_bindings(found: list[_Row], marks: dict[tuple[int, int], str]) -> list[_Row]:
    """Call and reference edges at a typed binding's callee / annotation carry the bound
    name in ``alias`` (see :mod:`.languages.bindings`)."""
    if not marks:
        return found
    out = []
    for row in found:
        kind = row[3]
        if kind is EdgeKind.CALL or kind is EdgeKind.REFERENCE:
            bound = marks.get((row[6], row[7]))
            if bound is not None:
                row = (*row[:9], bound)
        out.append(row)
    return out


def _plain_path(node: Node, start: int, end: int) -> tuple[str, int] | None:
    """``(dotted name, length of its last part)`` when the node is written as a plain
    ``a.b.c`` of ASCII names; None sends it to :func:`dotted_path`.

    Most callees and types are written so (``self.save``, ``os.path.join``, ``Foo``),
    and a regex over the node's bytes answers for them without walking the
    subtree in Python. It answers exactly what :func:`dotted_path` would: a leaf
    that reads as written, or a member expression whose receiver chain is the
    same node type all the way down to a first name that reads as written (not
    ``None``, C#'s ``base``, a predefined type), with no syntax error inside.
    """
    if end - start > _PLAIN_MAX or node.has_error:
        return None
    kind = node.type
    member = kind in _PLAIN_MEMBERS
    if not member and node.child_count:
        return None
    raw = node.text
    if raw is None or _PLAIN.fullmatch(raw) is None:
        return None
    text = raw.decode("ascii")
    if not member:
        return (text, len(text)) if reads_as_written(kind, text) and "." not in text else None
    first, dot, _rest = text.partition(".")
    if not dot:
        return None
    head = node.descendant_for_byte_range(start, start + len(first))
    if head is None or not reads_as_written(head.type, first):
        return None
    return text, len(text) - text.rfind(".") - 1


# A capture longer than this is never a plain dotted name worth the regex.
_PLAIN_MAX = 256
_PLAIN = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# Member expressions whose receiver, when written as a plain name, is the same
# node type again (Python ``attribute``, JS/TS ``member_expression``, Go
# ``selector_expression``, C ``field_expression``). Types like TypeScript's
# ``nested_type_identifier`` (receiver: a ``nested_identifier``) take the walk.
_PLAIN_MEMBERS = frozenset({"attribute", "member_expression", "selector_expression", "field_expression"})
