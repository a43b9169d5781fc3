"""What a name's bindings say it holds, as the resolver reads them.

The binder marks each edge whose value a name is bound to (``x = Foo()``, ``c: Context``,
``with open(p) as f``, ``return Sub()``; ``languages/bindings.py``); these questions turn
those marks into a class: the type a local, an attribute or a module-level variable
holds, what calling a name gives, what a function returns, the member every value of a
name shares. Each answer comes from what the code states, through the resolver's own
name resolution, and is None when the code does not say — never a guess.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..languages.bindings import (
    CALLED,
    HOLDS,
    IN,
    IS,
    ITEMS,
    ONE_OF,
    PART,
    RETURN,
    RETURN_PART,
    SEPARATOR,
    VALUES,
    WITH,
)
from ..languages.swift_sdk import labelled
from ..model import Edge, EdgeKind, Symbol, SymbolKind
from .modules import family
from .snapshot import CALLABLE_KINDS, TYPE_KINDS, Snapshot

if TYPE_CHECKING:
    from .modules import Target
    from .resolve import Resolution

EXTENDED = frozenset({"swift", "kotlin", "csharp", "rust"})  # types extended outside their body
ALIAS_KINDS = frozenset({SymbolKind.VARIABLE, SymbolKind.CONSTANT})
INHERITED = "^"  # a cache key's prefix: an attribute read from a class's bases


class BoundTypes:
    """The binding-type questions of :class:`.resolve.Resolver`, which answers the name
    lookups they ask (``resolve``, ``member``, ``type_for_scope``, ``enclosing_type``) and
    holds the caches they fill (``_types``, ``_sharing``), cleared with its memo."""

    snap: Snapshot
    _types: dict[tuple[str, str, str], Symbol | None]  # (path, scope, name) → its class
    _sharing: set[tuple[str, str, str, str]]  # shared_member questions open now

    def resolve(self, edge: Edge) -> Resolution:
        raise NotImplementedError

    def member(self, cls: Symbol, name: str, *, own: bool = True) -> Symbol | None:
        raise NotImplementedError

    def type_for_scope(self, path: str, qualified: str) -> Symbol | None:
        raise NotImplementedError

    def parts(self, cls: Symbol) -> list[Symbol]:
        raise NotImplementedError

    def bases(self, cls: Symbol) -> tuple[Symbol, ...]:
        raise NotImplementedError

    def supertype_edges(self, cls: Symbol) -> list[Edge]:
        raise NotImplementedError

    def own_member(self, cls: Symbol, name: str) -> Symbol | None:
        raise NotImplementedError

    def enclosing_type(self, path: str, from_symbol: str) -> Symbol | None:
        raise NotImplementedError

    def is_local(self, path: str, scope: str, name: str) -> bool:
        """Whether ``name`` is a typed variable of the function around ``scope``."""
        scope = self.snap.binding_scope(path, scope)
        has = self.snap.has_binding
        if not scope or not (has(path, scope, name) or has(path, scope, name + ONE_OF)):
            return False
        own = self.snap.symbol(path, scope)
        return own is not None and own.kind in CALLABLE_KINDS

    def shared_member(self, path: str, scope: str, name: str, member: str) -> Symbol | None:
        """``member`` of the local ``name`` when its bindings give values of several classes
        (``x = A()`` in one branch, ``x = B()`` in another), or it is bound only by calls of
        one function whose returns do (``return|``), and every one of them has the same
        ``member`` (``B`` a subclass of ``A`` that does not override it); else None."""
        key = (path, scope, name, member)
        if key in self._sharing:
            # asked again while answering it: `x = x.__enter__()` binds `x` from a call on `x`
            # itself, so the answer depends on itself — none (following it recursed until
            # Python's stack gave out)
            return None
        self._sharing.add(key)
        try:
            return self._shared_member(path, scope, name, member)
        finally:
            self._sharing.discard(key)

    def _shared_member(self, path: str, scope: str, name: str, member: str) -> Symbol | None:
        scope = self.snap.binding_scope(path, scope)
        edges = self.snap.binding_edges(path, scope, name + ONE_OF) if scope else []
        label = name
        if not edges and scope:  # `h = self.connect()` where `connect` returns one of several
            made = self.snap.binding_edges(path, scope, name)
            only = all(e.kind is EdgeKind.CALL and e.alias == name for e in made)  # no item, no `with`
            fns = {self.resolve(e).symbol for e in made} if only else set()
            fn = fns.pop() if len(fns) == 1 else None
            if fn is not None and fn.kind in CALLABLE_KINDS and self.returns(fn) is None:
                edges, label = self.snap.binding_edges(fn.path, fn.qualified_name, RETURN + ONE_OF), RETURN
        if not edges:
            return None
        found = set()
        for e in edges:
            t = self._edge_type(e, label)
            m = self.member(t, member) if t is not None and t.kind in TYPE_KINDS else None
            if m is None:
                return None
            found.add(m)
        return found.pop() if len(found) == 1 else None

    def class_called(self, path: str, scope: str, name: str) -> tuple[Symbol | None] | None:
        """``(C,)`` when calling ``name`` makes a ``C`` because the name holds that class (the
        binder's ``name()``); ``(None,)`` for a variable of the function around ``scope`` the
        binder follows but that does not resolve to a class (unresolved: never a namesake);
        None when the binder says nothing or the module's binding names no class (the name
        is resolved as any other)."""
        scope = self.snap.binding_scope(path, scope)
        if scope and self.snap.has_binding(path, scope, name + CALLED):
            return (self.bound_type(path, scope, name + CALLED),)
        if scope and self.snap.has_binding(path, scope, name):
            return None
        found = (
            self.bound_type(path, "", name + CALLED)
            if self.snap.has_binding(path, "", name + CALLED)
            else None
        )
        return (found,) if found is not None else None

    def variable_type(self, path: str, scope: str, name: str) -> Symbol | None:
        """The class a local (or module-level) name holds an instance of, when the code says."""
        scope = self.snap.binding_scope(path, scope)
        if self.snap.has_binding(path, scope, name):
            return self.bound_type(path, scope, name)
        return self.bound_type(path, "", name) if scope else None

    def attribute_type(self, cls: Symbol, name: str) -> Symbol | None:
        """The class ``<instance>.<name>`` holds, when the class types it: its own body and
        methods, or (Swift, Kotlin, C#, Rust) an extension of it elsewhere."""
        scopes = {
            (path, scope)
            for path, scope in self.snap.attributes.get(name, [])
            if (path, scope) == (cls.path, cls.qualified_name)
            or (cls.partial and scope == cls.qualified_name and path in {p.path for p in self.parts(cls)})
            or (cls.language in EXTENDED and self.type_for_scope(path, scope) == cls)
        }
        if not scopes and cls.language == "python" and name.isidentifier():
            return self.inherited_attribute(cls, name)
        found = {self.bound_type(path, scope, f"self.{name}") for path, scope in scopes}
        return found.pop() if len(found) == 1 else None

    def inherited_attribute(self, cls: Symbol, name: str) -> Symbol | None:
        """The class a Python attribute ``cls`` does not bind holds, read from its bases in
        any file (``XMLFilterBase(xmlreader.XMLReader)`` using the ``self._cont_handler`` that
        ``XMLReader.__init__`` makes): every class above ``cls`` that binds ``name`` types it,
        all the same class, and none binds it untyped. Each file's record of what its classes
        bind (on its inherit edges, :attr:`.languages.bindings.Marks.bound_attributes`)
        says so; a class in a file with no record, a base that does not resolve (other than
        ``object``) or a method of that name leaves it untyped."""
        key = (cls.path, cls.qualified_name, INHERITED + name)
        if key in self._types:
            return self._types[key]
        self._types[key] = None  # a cycle of bases: nothing
        self._types[key] = found = self._inherited(cls, name)
        return found

    def _inherited(self, cls: Symbol, name: str) -> Symbol | None:
        record = self.snap.bound_attributes(cls.path)
        if record is None or name in record.get(cls.qualified_name, ()) or not self._bases_known(cls):
            return None
        if self.own_member(cls, name) is not None:
            return None
        types: set[Symbol | None] = set()
        seen, queue = {cls}, list(self.bases(cls))
        while queue:
            t = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            if t.language != "python" or t.kind not in TYPE_KINDS or not self._bases_known(t):
                return None
            typed = [
                (p, sc)
                for p, sc in self.snap.attributes.get(name, [])
                if (p, sc) == (t.path, t.qualified_name)
            ]
            if typed:
                types.add(self.bound_type(t.path, t.qualified_name, f"self.{name}"))
            else:
                bound = self.snap.bound_attributes(t.path)
                if bound is None or name in bound.get(t.qualified_name, ()):
                    return None  # not known, or bound to values the code does not type
            if self.own_member(t, name) is not None:
                return None  # a method (or a nested class) of that name
            queue.extend(self.bases(t))
        return types.pop() if len(types) == 1 else None

    def _bases_known(self, cls: Symbol) -> bool:
        """Whether every base a class names resolves to a class of the workspace (``object``
        aside): a base from elsewhere may bind any attribute."""
        return all(
            e.to_name == "object" or self.resolve(e).symbol is not None for e in self.supertype_edges(cls)
        )

    def aliased(self, target: Target | None) -> Target | None:
        """What a module-level alias (``Charset = _charset.Charset``) names: that class or
        function; anything else unchanged."""
        if not isinstance(target, Symbol) or target.kind not in ALIAS_KINDS or "." in target.qualified_name:
            return target
        edges = self.snap.binding_edges(target.path, "", target.name)
        if not edges or not all(e.alias.startswith(IS) for e in edges):
            return target
        key = (target.path, "", IS + target.name)
        if key not in self._types:
            self._types[key] = None  # `A = B` / `B = A`: no alias
            found = {self.resolve(e).symbol for e in edges}
            named = found.pop() if len(found) == 1 else None
            ok = named is not None and (named.kind in TYPE_KINDS or named.kind in CALLABLE_KINDS)
            self._types[key] = named if ok else None
        return self._types[key] or target

    def held_by(self, target: Target | None) -> Target | None:
        """What a Python module-level variable holds (``default = Context()`` → the class
        ``Context``), read where it is bound (in another file too: an import of it, or
        ``models.default``), when its module's bindings state it; anything else unchanged."""
        return self.held(target) or target

    def held(self, target: Target | None) -> Symbol | None:
        """The class a Python module-level variable holds an instance of, or None."""
        if (
            not isinstance(target, Symbol)
            or target.kind not in ALIAS_KINDS
            or "." in target.qualified_name
            or target.language != "python"
        ):
            return None
        edges = self.snap.binding_edges(target.path, "", target.name)
        if not edges:
            return None
        if any(e.alias.startswith(IS) for e in edges):
            return self._held_through(target, edges)
        return self.bound_type(target.path, "", target.name)

    def _held_through(self, target: Symbol, edges: list[Edge]) -> Symbol | None:
        """What a module-level copy of another module-level variable holds
        (``lastResort = _defaultLastResort``, ``_defaultLastResort = _StderrHandler(…)``): that
        variable's value, when every binding of the name is that one copy (an alias of a
        class or function is :meth:`aliased`'s)."""
        if not all(e.alias.startswith(IS) for e in edges):
            return None
        key = (target.path, "", HOLDS + target.name)
        if key not in self._types:
            self._types[key] = None  # `a = b` / `b = a`: nothing
            found = {self.resolve(e).symbol for e in edges}
            source = found.pop() if len(found) == 1 else None
            self._types[key] = self.held(source) if source is not None and source != target else None
        return self._types[key]

    def result_of(self, target: Target | None) -> Symbol | None:
        """What calling ``target`` gives: an instance of a class, a function's annotated return."""
        if not isinstance(target, Symbol):
            return None
        if target.kind in TYPE_KINDS:
            return target
        if target.kind is SymbolKind.CONSTRUCTOR:  # `Foo.init(…)`
            return self.enclosing_type(target.path, target.qualified_name)
        return self.returns(target) if target.kind in CALLABLE_KINDS else None

    def result_on(self, receiver: Target | None, target: Target | None) -> Symbol | None:
        """What calling ``target``, a member of ``receiver``, gives: the receiver itself when
        the method returns it (``q.where(…).all()`` with ``where`` returning ``self``), else
        :meth:`result_of`."""
        if (
            isinstance(receiver, Symbol)
            and receiver.kind in TYPE_KINDS
            and isinstance(target, Symbol)
            and target.kind in CALLABLE_KINDS
            and self.returns_self(target)
        ):
            return receiver
        return self.result_of(target)

    def returns(self, fn: Symbol) -> Symbol | None:
        """The class a function's return annotation names."""
        return self.bound_type(fn.path, fn.qualified_name, RETURN)

    def bound_type(self, path: str, scope: str, name: str) -> Symbol | None:
        edges = self.snap.binding_edges(path, scope, name)
        if not edges:
            return None
        key = (path, scope, name)
        if key in self._types:
            return self._types[key]
        self._types[key] = None  # a binding that depends on itself types nothing
        found = {self._edge_type(e, name) for e in edges}
        t = found.pop() if len(found) == 1 else None
        self._types[key] = t
        return t

    def _edge_type(self, edge: Edge, name: str) -> Symbol | None:
        """The class of the value a marked edge binds to ``name``: the annotation's class, the
        called class, the called function's return annotation (then ``__enter__``'s for
        ``with``), or one item of its declared tuple (``a, b = f()``)."""
        if edge.kind is EdgeKind.REFERENCE and edge.alias.startswith(IN):  # `for p in cmd.params`
            return None if name.endswith((CALLED, VALUES)) else self.attribute_items(edge)
        if name.endswith("}") and self._sdk_shadowed(name, edge.path):
            return None
        sym = self.resolve(edge).symbol
        if sym is None and edge.alias.startswith(HOLDS) and not name.endswith((CALLED, VALUES, ITEMS)):
            return self.class_attribute(edge)
        if sym is None:
            return None
        if name.endswith(CALLED):  # what calling the bound value gives: it holds a class
            if edge.kind is not EdgeKind.CALL:
                # `type[Foo]`, `maker = Foo`; `fix = self._fix`: the method itself is called
                return sym if sym.kind in TYPE_KINDS or sym.kind in CALLABLE_KINDS else None
            if sym.kind in CALLABLE_KINDS and sym.kind is not SymbolKind.CONSTRUCTOR:
                return self.bound_type(sym.path, sym.qualified_name, RETURN + CALLED)  # `-> type[Foo]`
            return None  # a class called gives an instance, and calling that is `__call__`
        part = _part_of(edge.alias, name)
        if part:  # `cmd` of `cmd_name, cmd, args = self.resolve_command(…)`
            if sym.kind not in CALLABLE_KINDS or edge.kind is not EdgeKind.CALL:
                return None
            each = ITEMS if edge.alias.startswith(IN) else ""  # `for name, cmd in f()`: of each item
            return self.bound_type(sym.path, sym.qualified_name, RETURN + each + RETURN_PART + part)
        if edge.alias.startswith(HOLDS):  # `policy=compat32`: what the module's variable holds
            return self.held(sym)
        if edge.alias.startswith(IN):  # `for p in self.get_params()`: an item of what it returns
            items = sym.kind in CALLABLE_KINDS and edge.kind is EdgeKind.CALL
            return self.bound_type(sym.path, sym.qualified_name, RETURN + ITEMS) if items else None
        t = self.result_of(sym) if edge.kind is EdgeKind.CALL else sym if sym.kind in TYPE_KINDS else None
        if edge.kind is EdgeKind.CALL and sym.kind in CALLABLE_KINDS and self.returns_self(sym):
            # `SMTP = default.clone(…)` where `clone` returns its receiver's class: what
            # `default` holds, when the code states it (not the class defining `clone`)
            *receiver, last = edge.to_name.split(".")
            held = self.receiver_type(edge.path, edge.from_symbol, receiver)
            t = held if held is not None and self.member(held, last) == sym else t
        if t is not None and edge.alias.startswith(WITH):
            enter = self.member(t, "__enter__")
            # `__enter__` returning `self` (or `-> Self`) gives the object entered: a `t`,
            # even when a base of `t` defines it
            t = None if enter is None else t if self.returns_self(enter) else self.returns(enter)
        return t

    def class_attribute(self, edge: Edge) -> Symbol | None:
        """What ``mod.C.x`` (a ``holds:`` edge that names no symbol) holds: the attribute ``x``
        of the class ``mod.C`` as that class types it (``implementation = DOMImplementation()``
        in ``Document``'s body)."""
        owner, _, last = edge.to_name.rpartition(".")
        if not owner or not last.isidentifier():
            return None
        cls = self.resolve(replace(edge, to_name=owner, alias="")).symbol
        return self.attribute_type(cls, last) if cls is not None and cls.kind in TYPE_KINDS else None

    def attribute_items(self, edge: Edge) -> Symbol | None:
        """What iterating ``edge``'s ``cmd.params`` (``self.a.params``) gives: the item class the
        class of what ``cmd`` holds states for its attribute (``self.params: list[Parameter]``);
        None when either is not stated."""
        *receiver, last = edge.to_name.split(".")
        t = self.receiver_type(edge.path, edge.from_symbol, receiver)
        return self.attribute_type(t, last + ITEMS) if t is not None else None

    def receiver_type(self, path: str, scope: str, names: list[str]) -> Symbol | None:
        """The class of what ``names`` (``cmd``, ``self.a``, ``models.default``'s parts as
        written in ``scope``) holds: ``self``'s class, or a typed local, parameter or module
        variable of this file, each attribute after it typed by its class; None when any
        part is not stated (or is a call)."""
        if not names or any(not n.isidentifier() for n in names):
            return None
        head, *middle = names
        t = self.enclosing_type(path, scope) if head == "self" else self.variable_type(path, scope, head)
        for part in middle:
            t = self.attribute_type(t, part) if t is not None and t.kind in TYPE_KINDS else None
        return t if t is not None and t.kind in TYPE_KINDS else None

    def _sdk_shadowed(self, name: str, path: str) -> bool:
        """Whether ``name`` is bound through Swift's SDK table (``storage{withLock$0}``,
        ``languages/swift_sdk.py``) while the workspace defines a type of the table's name (a
        project's own ``Mutex``) or a method of the table's name in an extension of that type:
        then its declaration says what its closures get, not the table's."""
        entry = labelled(name)
        if entry is None:
            return False
        fam = family(self.snap.language(path))
        if any(
            s.kind in TYPE_KINDS and family(s.language) == fam for s in self.snap.symbols_named(entry.type)
        ):
            return True
        # `extension Mutex { func withLock(_ body: (Int) -> Void) }`: an overload the table does not know
        return any(
            s.container == entry.type and family(s.language) == fam
            for s in self.snap.symbols_named(entry.method)
        )

    def returns_self(self, fn: Symbol) -> bool:
        """Whether every return of ``fn`` is its receiver or a new object of the receiver's own
        class: ``return self``, ``-> Self``, ``return self.__class__(…)``, a copy of
        ``self.__class__.__new__(self.__class__)`` (the binder types no other ``__new__``)."""
        edges = self.snap.binding_edges(fn.path, fn.qualified_name, RETURN)
        return bool(edges) and all(
            (e.kind is EdgeKind.REFERENCE and (e.to_name == "self" or e.to_name.rpartition(".")[2] == "Self"))
            or (e.kind is EdgeKind.CALL and e.to_name in _OWN_CLASS_MADE and fn.language == "python")
            for e in edges
        )


# calls that make an object of the receiver's own class (a subclass's, called on one)
_OWN_CLASS_MADE = frozenset({"self.__class__", "self.__class__.__new__"})


def _part_of(alias: str, name: str) -> str:
    """The tuple item a mark binds ``name`` to (``1`` of ``cmd@1``), or ""."""
    if PART not in alias:
        return ""
    for label in alias.removeprefix(IN).split(SEPARATOR):
        bound, _, part = label.rpartition(">")[2].partition(PART)
        if bound == name and part:
            return part
    return ""
