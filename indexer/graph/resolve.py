"""Names → definitions: lexical scope, same file, imports, same package, a unique global.

The order, for a reference ``head.rest…`` written in file F inside definition D:

1. ``self`` / ``this`` / ``cls`` / ``Self`` (and a Go method's receiver): the class
   around D, then its bases; ``super``: the bases only.
2. Lexical scope: the containers of D, innermost first. A class's members are
   visible unqualified only in languages where they are (Java, C#, Kotlin,
   Swift, C++); namespaces and modules always.
3. The top level of F.
4. F's imports: an alias binds a module or a name; relative imports, re-exports
   (``from .x import y`` in a package ``__init__``, ``export {a} from``) and
   star imports are followed.
5. The same package: the directory, for Go, Java and Kotlin.
6. A unique definition of that name anywhere — only in languages where a bare
   name can reach another file without an import (C, C++, C#, Swift, Java,
   Kotlin). In Python, JavaScript, TypeScript, Rust and Go such a name is a
   builtin, a local or a global we cannot see: taking a namesake elsewhere
   would be a guess.

The rest of the path walks members: of a module (its top level, submodules,
re-exports) or of a class (its members, extension / impl members, then its
bases); an extension or impl (``extension URL``) belongs to the type it names, and a
bare name never names a type nested in another type (``ValidatorResults.URL``), which
only its container spells. Anything else — a receiver whose type is unknown (``?.m``, ``obj.m``),
two definitions with the same claim — stays unresolved with its candidates:
every definition of that last name. Never a guess.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..languages.bindings import CALLED
from ..model import ANY_ARITY, Edge, EdgeKind, Symbol, SymbolKind, takes
from .bound import BoundTypes
from .modules import MAX_DEPTH, Module, ModuleFinder, Target, absolute_module, family
from .overloads import FINAL_SUPERTYPES, Fit, choices
from .snapshot import CALLABLE_KINDS, OVERLOADING, TYPE_KINDS, Snapshot, python_module

_SELF_WORDS = {
    "python": frozenset({"self", "cls"}),
    "rust": frozenset({"self", "Self"}),
    "swift": frozenset({"self", "Self"}),
    "go": frozenset({"self"}),  # the parser writes a method's receiver as `self`
}
_THIS = frozenset({"this"})
_CLASS_SCOPE = frozenset({"java", "csharp", "kotlin", "swift", "cpp", "cuda"})
_GLOBAL_FALLBACK = frozenset({"c", "cpp", "cuda", "csharp", "swift", "java", "kotlin"})
_PACKAGE_DIR = frozenset({"go", "java", "kotlin"})
_OPEN_NAMESPACES = frozenset({"csharp"})
# languages whose reference edges other than calls are all type positions (a parameter's,
# a field's, a return type, a base list): they name types and namespaces only
_TYPE_POSITIONS = frozenset({"java", "csharp", "kotlin"})
# a namespace's members, declared in any file
# JDK interfaces that declare no method: a class implementing one inherits nothing from it
_MARKERS = frozenset({"Serializable", "Cloneable", "RandomAccess", "EventListener"})
# the methods of `Object`, which every Java class inherits: their parameters
_OBJECT_METHODS = {
    "equals": ("Object",),
    "hashCode": ("",),
    "toString": ("",),
    "getClass": ("",),
    "clone": ("",),
    "finalize": ("",),
    "notify": ("",),
    "notifyAll": ("",),
    "wait": ("", "long", "long,int"),
}
# supertypes a Java class may have without naming them (a record's, an enum's)
_IMPLIED = frozenset({"Record", "Enum", "Comparable", "Serializable", "Constable"})
_NAMESPACE_KINDS = frozenset({SymbolKind.NAMESPACE, SymbolKind.MODULE, SymbolKind.PACKAGE})


# answers ``in_module`` keeps before it starts again (a few hundred bytes each)
_IN_MODULE_MAX = 200_000
# Edges whose answer is remembered (with the import answers and shared unresolved ones);
# past it, forgotten between two questions. Unbounded, a long session's call hierarchies
# and searches with hops would come to remember every edge of the index (368k on the
# stdlib, ~80 MiB); the memory probe's questions resolve ~17k.
MEMO_MAX = 32_768


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a reference means: one definition (or module), or the candidates it might mean."""

    symbol: Symbol | None = None
    module: Module | None = None
    candidates: tuple[Symbol, ...] = ()

    @property
    def resolved(self) -> bool:
        return self.symbol is not None or self.module is not None


_UNRESOLVED = Resolution()


class Resolver(BoundTypes, ModuleFinder):
    """Resolution over one snapshot, memoised until the snapshot changes. What a typed
    receiver holds (``ctx: Context``, ``x = Foo()``) it asks of :class:`.bound.BoundTypes`."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snap = snapshot
        self._generation = -1
        self._memo: dict[tuple[str, int, int, str, EdgeKind], Resolution] = {}
        self._sharing: set[tuple[str, str, str, str]] = set()  # shared_member questions open now
        self._bases: dict[Symbol, tuple[Symbol, ...]] = {}
        self._imports: dict[tuple[str, int, int, str, str], Target | None] = {}
        # a name's answer in a module at a depth (``in_module``): C's includes and Python's
        # star imports reach the same headers along many paths (a kernel file's call walked
        # ~2,300 of them, 31 s for 451 calls), each walked once
        self._in_module: dict[tuple[str, tuple[str, ...], str, int], Target | None] = {}
        self._types: dict[tuple[str, str, str], Symbol | None] = {}
        self._subtypes: dict[tuple[str, str], Fit] = {}
        self._overloads: dict[tuple[Symbol, str], list[Symbol] | None] = {}
        self._java_supers: dict[Symbol, tuple[tuple[Symbol, ...], frozenset[str]]] = {}
        # an unresolved reference's answer, one per (last name, family): every edge of that
        # name shares it (a tuple of candidates an edge took ~1.9 MiB for 5.7k on the stdlib)
        self._unresolved: dict[tuple[str, str], Resolution] = {}
        self._resolving = 0  # resolve() calls open now (one resolves others on its way)

    def _fresh(self) -> None:
        if self._generation != self.snap.generation:
            self._memo.clear()
            self._bases.clear()
            self._imports.clear()
            self._in_module.clear()
            self._types.clear()
            self._subtypes.clear()
            self._overloads.clear()
            self._java_supers.clear()
            self._unresolved.clear()
            self._generation = self.snap.generation

    # ----- public --------------------------------------------------------------------

    def resolve(self, edge: Edge) -> Resolution:
        """What ``edge`` refers to."""
        self._fresh()
        key = (edge.path, edge.line, edge.column, edge.to_name, edge.kind)
        found = self._memo.get(key)
        if found is None:
            if not self._resolving and len(self._memo) + len(self._imports) >= MEMO_MAX:
                # between questions only: an import being resolved marks itself in
                # ``_imports`` against cycles, and that mark must stay while it runs
                self._memo.clear()
                self._imports.clear()
                self._unresolved.clear()
            self._resolving += 1
            try:
                found = self._resolve(edge)
            finally:
                self._resolving -= 1
            self._memo[key] = found
        return found

    def resolved_edge(self, edge: Edge) -> Edge:
        """``edge`` with ``to_symbol`` / ``candidates`` filled in (qualified names)."""
        from dataclasses import replace

        r = self.resolve(edge)
        if r.symbol is not None:
            return replace(edge, to_symbol=r.symbol.qualified_name)
        if r.module is not None:
            return replace(edge, to_symbol=r.module.name)
        return replace(edge, candidates=tuple(f"{c.path}:{c.qualified_name}" for c in r.candidates))

    def parts(self, cls: Symbol) -> list[Symbol]:
        """The declarations of one type: a C# partial type's parts, in the files' order
        (the first stands for the type), else the type alone."""
        if not cls.partial:
            return [cls]
        fam = family(cls.language)
        found = [
            s
            for s in self.snap.symbols_named(cls.name)
            if s.partial and s.qualified_name == cls.qualified_name and family(s.language) == fam
        ]
        return found or [cls]

    def _homes(self, cls: Symbol) -> list[str]:
        """The files a type is declared in (a partial type's parts may share one)."""
        return list(dict.fromkeys(p.path for p in self.parts(cls)))

    def bases(self, cls: Symbol) -> tuple[Symbol, ...]:
        """The resolved direct supertypes of a class (its own header, its extensions / impls)."""
        self._fresh()
        cls = self.parts(cls)[0]
        found = self._bases.get(cls)
        if found is None:
            self._bases[cls] = ()  # a cycle reads "no bases" instead of recursing
            out: list[Symbol] = []
            for e in self.supertype_edges(cls):
                r = self.resolve(e)
                if r.symbol is not None and r.symbol != cls and r.symbol not in out:
                    out.append(r.symbol)
            found = self._bases[cls] = tuple(out)
        return found

    def supertype_edges(self, cls: Symbol) -> list[Edge]:
        """Inherit / implement edges of a class: in its header, and in extensions / impls elsewhere."""
        out = [
            e
            for path in self._homes(cls)
            for e in self.snap.edges_from(path, cls.qualified_name)
            if e.kind in (EdgeKind.INHERIT, EdgeKind.IMPLEMENT)
        ]
        for e in self.snap.supertype_edges_in(cls.qualified_name):
            elsewhere = e.path != cls.path and self.snap.symbol(e.path, e.from_symbol) is None
            if elsewhere and self.type_for_scope(e.path, e.from_symbol) == cls:
                out.append(e)
        return out

    def member(self, cls: Symbol, name: str, *, own: bool = True) -> Symbol | None:
        """``name`` in a class, its extensions / impls, then its bases (breadth first)."""
        seen: set[Symbol] = set()
        queue = [cls] if own else list(self.bases(cls))
        while queue:
            t = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            found = self.own_member(t, name)
            if found is not None:
                return found
            queue.extend(self.bases(t))
        return None

    def own_member(self, cls: Symbol, name: str) -> Symbol | None:
        for path in self._homes(cls):
            for s in self.snap.members_of(path, cls.qualified_name):
                if s.name == name:
                    return s
        for e in self.snap.imports_binding(cls.path, name):
            if e.from_symbol == cls.qualified_name:  # `from email.iterators import walk` in a class body
                found = self.import_target(e, 0)
                return found if isinstance(found, Symbol) else None
        fam = family(cls.language)
        for s in self.snap.detached_of(cls.qualified_name):
            if s.name == name and family(s.language) == fam and self._same_owner(s, cls):
                return s
        return None

    def own_members(self, cls: Symbol) -> list[Symbol]:
        """Members defined in the class itself and its extensions / impls."""
        fam = family(cls.language)
        out = [s for path in self._homes(cls) for s in self.snap.members_of(path, cls.qualified_name)]
        out += [
            s
            for s in self.snap.detached_of(cls.qualified_name)
            if family(s.language) == fam and self._same_owner(s, cls)
        ]
        return out

    def _same_owner(self, member: Symbol, cls: Symbol) -> bool:
        if member.path == cls.path:
            return True
        if cls.language == "go":  # methods live in the type's package
            return posixpath.dirname(member.path) == posixpath.dirname(cls.path)
        return self.type_for_scope(member.path, member.container) == cls

    def type_for_scope(self, path: str, qualified: str) -> Symbol | None:
        """The type an impl / extension / receiver scope named ``qualified`` in ``path`` extends."""
        own = self.snap.symbol(path, qualified)
        if own is not None:
            return own if own.kind in TYPE_KINDS else None
        if self.local_class(path, qualified):
            return None
        name = qualified.rsplit(".", 1)[-1]
        lang = self.snap.language(path)
        named = [
            s for s in self.snap.symbols_named(name) if s.kind in TYPE_KINDS and self._spells(qualified, s)
        ]
        same_file = [s for s in named if s.path == path]
        if len(same_file) == 1:
            return same_file[0]
        fam = family(lang)
        types = [s for s in named if family(s.language) == fam]
        if lang == "go":
            types = [s for s in types if posixpath.dirname(s.path) == posixpath.dirname(path)]
        return types[0] if len(types) == 1 or _one_type(types) else None

    def _spells(self, scope: str, t: Symbol) -> bool:
        """Whether an extension / impl scope can name type ``t``: a type at the top of its
        file or namespace by its name (``extension URL``), a type nested in another type
        only with its container (``extension ValidatorResults.URL``). A bare ``URL``
        outside ``ValidatorResults`` is never its nested ``URL`` but some other one
        (Foundation's): unresolved, not wrong."""
        path, container = t.name, t.container
        while container:
            own = self.snap.symbol(t.path, container)
            if own is not None and own.kind in _NAMESPACE_KINDS:
                break  # a namespace / module: its types are reached by name (or a `use`)
            outer, _, last = container.rpartition(".")
            path, container = f"{last}.{path}", outer
        return "." not in path or scope == path or scope.endswith("." + path)

    def self_type(self, path: str, from_symbol: str) -> Symbol | None:
        """What a bare Rust ``Self`` names: the type of the impl around it. In a trait it is
        whichever type implements the trait, unknown here."""
        cls = self.enclosing_type(path, from_symbol)
        return cls if cls is not None and cls.kind is not SymbolKind.INTERFACE else None

    def local_class(self, path: str, scope: str) -> bool:
        """Whether a scope with no symbol is a class declared inside a function (Python)."""
        outer = self.snap.symbol(path, scope.rpartition(".")[0]) if "." in scope else None
        return outer is not None and outer.kind in CALLABLE_KINDS and self.snap.language(path) == "python"

    def enclosing_type(self, path: str, from_symbol: str) -> Symbol | None:
        """The class around a definition (the nearest container that is a type or an impl scope)."""
        parts = from_symbol.split(".") if from_symbol else []
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            own = self.snap.symbol(path, prefix)
            if own is not None and own.kind in TYPE_KINDS:
                return own
            if own is None:
                t = self.type_for_scope(path, prefix)
                if t is not None:
                    return t
        return None

    # ----- resolution --------------------------------------------------------------

    def _resolve(self, edge: Edge) -> Resolution:
        if edge.kind is EdgeKind.IMPORT:
            bound = self.import_target(edge, 0)
            if isinstance(bound, Module):
                return Resolution(module=bound)
            if isinstance(bound, Symbol):
                return Resolution(symbol=bound)
            return _UNRESOLVED
        parts = edge.to_name.split(".")
        lang = self.snap.language(edge.path)
        # `Foo().m`, `self.make().m`: a part written as a call stands for what the call returns
        called = [p.endswith("()") for p in parts]
        names = [p.removesuffix("()") for p in parts]
        call = edge.kind is EdgeKind.CALL
        head, rest = names[0], names[1:]
        target: Target | None = None
        nxt = 1
        # `cls` outside a class (`def loads(s, *, cls=None)`) is a variable like any other
        plain_cls = head == "cls" and lang == "python"
        plain_cls = plain_cls and self.enclosing_type(edge.path, edge.from_symbol) is None
        if head in _SELF_WORDS.get(lang, _THIS) and rest and not plain_cls:
            cls = self.enclosing_type(edge.path, edge.from_symbol)
            # `self.x.m()` where the class types `x`, else a member of the class
            typed = cls is not None and len(rest) > 1 and not called[1]
            held = self.attribute_type(cls, rest[0]) if typed and cls is not None else None
            if rest[0] == "__class__" and lang == "python":
                held = cls  # `self.__class__(…)`: the class (or a subclass, as `self.m` is)
            made = cls is not None and lang == "python" and (called[1] or (len(rest) == 1 and call))
            # `self.maker(…)` where the class holds a class in `maker`: that class is called
            held = (self.attribute_type(cls, rest[0] + CALLED) if made and cls is not None else None) or held
            target = held or (self.member(cls, rest[0]) if cls is not None else None)
            target = self.result_on(cls, target) if called[1] else target
            nxt = 2
        elif head == "cls" and not rest and not plain_cls and lang == "python" and edge.kind is EdgeKind.CALL:
            target = self.enclosing_type(edge.path, edge.from_symbol)  # `cls(…)` in a classmethod
        elif head == "Self" and not rest and lang == "rust":
            target = self.self_type(edge.path, edge.from_symbol)  # `-> Self` in an impl
        elif head == "super" and rest:
            cls = self.enclosing_type(edge.path, edge.from_symbol)
            target = self.member(cls, rest[0], own=False) if cls is not None else None
            target = self.result_of(target) if called[1] else target
            nxt = 2
        elif (
            head != "?"
            and lang == "python"
            and (called[0] or (not rest and call))
            and (made_by := self.class_called(edge.path, edge.from_symbol, head))
        ):
            # `k(…)` / `k().m` where `k` holds a class (`k: type[Foo]`, `k = f()` with
            # `f() -> type[Foo]`) or a method (`fix = self._fix`): that is called
            target = made_by[0]
            target = self.result_of(target) if rest and called[0] else target
        elif (
            lang == "kotlin"
            and call
            and not rest
            and (held := self.variable_type(edge.path, edge.from_symbol, head)) is not None
            and (invoke := self.member(held, "invoke")) is not None
        ):
            # `start(…)` where the parameter or local `start: CoroutineStart` has an
            # `operator fun invoke`: that is what runs (a function-typed one is `?.start`)
            target = invoke
        elif head != "?":
            variable = bool(rest) and not called[0]
            held = self.variable_type(edge.path, edge.from_symbol, head) if variable else None
            # a function's typed variable shadows every namesake outside it, typed or not here
            local = held is not None or (variable and self.is_local(edge.path, edge.from_symbol, head))
            owner = (
                self.attribute_owner(edge.path, edge.from_symbol, head)
                if variable and not local and lang in _TYPE_POSITIONS
                else None
            )
            if owner is not None:  # `_writer.Flush()`: `this._writer`, typed or not
                held, local = self.attribute_type(owner, head), True
            target = held if local else self.aliased(self.name_in_scope(edge, head, lang))
            target = self.result_of(target) if called[0] else (self.held_by(target) if variable else target)
            shared = (
                self.shared_member(edge.path, edge.from_symbol, head, rest[0])
                if variable and held is None
                else None
            )
            if shared is not None:  # `x.m` where every value `x` may hold has the same `m`
                target = self.result_of(shared) if called[1] else shared
                nxt = 2
        for i in range(nxt, len(names)):
            if target is None:
                break
            held = None
            if (
                i < len(names) - 1
                and not called[i]
                and isinstance(target, Symbol)
                and target.kind in TYPE_KINDS
            ):
                held = self.attribute_type(target, names[i])  # `request.auth.login`: a typed attribute
            made = called[i] or (i == len(names) - 1 and call)
            if made and lang == "python" and isinstance(target, Symbol) and target.kind in TYPE_KINDS:
                held = self.attribute_type(target, names[i] + CALLED)  # `ctx.maker(…)`: a held class
            receiver = target
            target = held or self.aliased(self.member_of(target, names[i], 0))
            if called[i]:
                target = self.result_on(receiver, target)
            elif i < len(names) - 1:
                target = self.held_by(target)  # `models.default.m`: what the module's name holds
        if isinstance(target, Symbol):
            target = self.parts(target)[0]  # a partial type's parts: the first stands for it
            return self._overload(edge, target) if call else Resolution(symbol=target)
        if target is not None and edge.kind is not EdgeKind.CALL:
            return Resolution(module=target)
        key = (edge.last_name, family(lang))
        found = self._unresolved.get(key)
        if found is None:
            found = self._unresolved[key] = Resolution(candidates=self.candidates(edge, lang))
        return found

    def attribute_owner(self, path: str, from_symbol: str, name: str) -> Symbol | None:
        """The class whose field or property ``name`` is, when code in ``from_symbol`` writes
        it without ``this.`` (Java, C#, Kotlin: a local or parameter of that name would have
        shadowed it, and their binders record every local, typed or not): the class around
        the code, else its nearest base that binds it; None when none does."""
        places = self.snap.attributes.get(name)
        cls = self.enclosing_type(path, from_symbol) if places else None
        seen: set[Symbol] = set()
        queue = [cls] if cls is not None else []
        while queue:
            t = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            homes = set(self._homes(t))
            if any(p in homes and scope == t.qualified_name for p, scope in places or ()):
                return t
            queue.extend(self.bases(t))
        return None

    def _overload(self, edge: Edge, found: Symbol) -> Resolution:
        """A call that reached a method with overloads (same name, same class — in any part
        of a C# partial class):
        the one overload whose parameters take the call's argument count, else unresolved
        with the overloads that might be meant (``add(int)`` / ``add(String)`` both take one:
        which one the types choose is not known here)."""
        if found.kind not in CALLABLE_KINDS or found.language not in OVERLOADING:
            return Resolution(symbol=found)
        owner = self.snap.symbol(found.path, found.container) if found.container else None
        homes = self._homes(owner) if owner is not None else [found.path]
        overloads = [
            s
            for path in homes
            for s in self.snap.members_of(path, found.container)
            if s.name == found.name and s.kind in CALLABLE_KINDS
        ]
        java = found.language == "java" and owner is not None and edge.args >= 0
        inherited = self._java_overloads(owner, found.name, edge.args) if java and owner is not None else None
        if inherited is not None:
            overloads = inherited
        if len(overloads) < 2:
            if java and not takes(found.arity, edge.args):
                # Java: it takes another count (`format(obj)` of `java.text.Format`, inherited)
                return Resolution(candidates=(found,))
            return Resolution(symbol=found)
        fits = [s for s in overloads if takes(s.arity, edge.args)]
        if len(fits) == 1:
            return Resolution(symbol=fits[0])
        if len(fits) > 1 and edge.arg_types and inherited is not None:
            # the argument types the code states against each overload's parameters
            picked = choices([(s.params, s) for s in fits], edge.arg_types, self.java_subtype)
            if len(picked) == 1 and isinstance(picked[0], Symbol):
                return Resolution(symbol=picked[0])
            if picked:
                return Resolution(candidates=tuple(s for s in fits if s in picked))
        return Resolution(candidates=tuple(fits or overloads))

    def _java_overloads(self, owner: Symbol, name: str, count: int) -> list[Symbol] | None:
        """The methods named ``name`` a Java class declares and inherits, its own first (an
        override stands for what it overrides); None when a supertype is outside the
        workspace (it may declare one more), or when one of ``Object``'s methods takes
        ``count`` arguments and nothing in the workspace overrides it (``clone()``)."""
        self._fresh()
        key = (owner, name)
        if key not in self._overloads:
            self._overloads[key] = self._declared_and_inherited(owner, name)
        found = self._overloads[key]
        if found is None:
            return None
        for params in _OBJECT_METHODS.get(name, ()):
            if len(params.split(",")) - (not params) == count and not any(s.params == params for s in found):
                return None
        return found

    def _declared_and_inherited(self, owner: Symbol, name: str) -> list[Symbol] | None:
        every: dict[str, Symbol] = {}
        seen = {owner}
        queue = [owner]
        while queue:
            cls = queue.pop(0)
            for path in self._homes(cls):
                for s in self.snap.members_of(path, cls.qualified_name):
                    if s.name == name and s.kind in CALLABLE_KINDS:
                        # an override has the parameters of what it overrides
                        key = f"{s.arity}:{s.params}" if s.arity != ANY_ARITY else f"?{id(s)}"
                        every.setdefault(key, s)
            bases, outside = self._supers(cls)
            if not outside <= _MARKERS:
                return None
            for base in bases:
                if base not in seen:
                    seen.add(base)
                    queue.append(base)
        return list(every.values())

    def _supers(self, cls: Symbol) -> tuple[tuple[Symbol, ...], frozenset[str]]:
        """A Java class's supertypes in the workspace, and the names of those outside it."""
        found = self._java_supers.get(cls)
        if found is None:
            bases: list[Symbol] = []
            outside: set[str] = set()
            for e in self.supertype_edges(cls):
                base = self.resolve(e).symbol
                if base is None or base.kind not in TYPE_KINDS:
                    outside.add(e.last_name)
                elif base not in bases:
                    bases.append(base)
            found = self._java_supers[cls] = (tuple(bases), frozenset(outside))
        return found

    def java_subtype(self, sub: str, sup: str) -> Fit:
        """Whether the Java class named ``sub`` is a subtype of the one named ``sup``
        (simple names), by the workspace's class hierarchy: ``Fit.MAYBE`` when a type on
        the way is outside the workspace, or several classes of that name disagree."""
        if sub == sup or sup == "Object":
            return Fit.YES
        self._fresh()
        key = (sub, sup)
        found = self._subtypes.get(key)
        if found is None:
            classes = [
                s for s in self.snap.symbols_named(sub) if s.language == "java" and s.kind in TYPE_KINDS
            ]
            if not classes:
                known = FINAL_SUPERTYPES.get(sub)
                found = Fit.MAYBE if known is None else (Fit.YES if sup in known else Fit.NO)
            else:
                answers = {self._reaches(c, sup) for c in classes}
                found = answers.pop() if len(answers) == 1 else Fit.MAYBE
            self._subtypes[key] = found
        return found

    def _reaches(self, cls: Symbol, sup: str) -> Fit:
        """Whether a supertype named ``sup`` is among a class's (breadth first); ``NO``
        only when every supertype on the way is in the workspace."""
        complete = True
        seen = {cls}
        queue = [cls]
        while queue:
            t = queue.pop(0)
            if t.kind is SymbolKind.ENUM:
                complete = False  # `Enum`, `Comparable`, `Serializable`: implied
            bases, outside = self._supers(t)
            if sup in outside:
                return Fit.YES
            complete = complete and outside <= _MARKERS  # those have no supertypes of their own
            for base in bases:
                if base.name == sup:
                    return Fit.YES
                if base not in seen:
                    seen.add(base)
                    queue.append(base)
        return Fit.NO if complete and sup not in _IMPLIED else Fit.MAYBE

    # ----- names ----------------------------------------------------------------------

    def candidates(self, edge: Edge, lang: str) -> tuple[Symbol, ...]:
        name = edge.last_name
        fam = family(lang)
        return tuple(s for s in self.snap.symbols_named(name) if family(s.language) == fam)

    def name_in_scope(self, edge: Edge, head: str, lang: str) -> Target | None:
        path = edge.path
        snap = self.snap
        # lexical: the containers around the reference, innermost first
        parts = edge.from_symbol.split(".") if edge.from_symbol else []
        in_namespace = False
        for i in range(len(parts), 0, -1):  # from the scope itself: a type's body sees its members
            prefix = ".".join(parts[:i])
            own = snap.symbol(path, prefix)
            # C#: `namespace A.B.C { … }` is inside `A.B` and `A` too, which have no symbol here
            outer = own is None and in_namespace and lang in _OPEN_NAMESPACES
            if outer or (own is not None and own.kind in _NAMESPACE_KINDS):
                in_namespace = True
                inner = snap.symbol(path, f"{prefix}.{head}") or self.namespace_member(prefix, head, lang)
                if inner is not None:
                    return inner
            elif lang in _CLASS_SCOPE:
                cls = own if own is not None and own.kind in TYPE_KINDS else self.type_for_scope(path, prefix)
                if cls is not None:
                    found = self.member(cls, head)
                    # a type named in a class body (`class R : JsonReader`) is the type, not
                    # the constructor of a base named like it; a call may be the constructor.
                    # Where every reference is a type position (Java, C#, Kotlin), a member that
                    # is no type is not it either: `private Base64Encoder Base64Encoder { … }`
                    # (C#'s "Color Color") has the class as its type, not itself
                    ctor = found is not None and found.kind is SymbolKind.CONSTRUCTOR and found.name == head
                    type_only = edge.kind is not EdgeKind.CALL and (ctor or lang in _TYPE_POSITIONS)
                    if found is not None and not (type_only and found.kind not in TYPE_KINDS):
                        return found
        top = snap.top_level(path, head)
        if top is not None:
            return top
        for e in reversed(snap.imports_binding(path, head)):
            if not _visible_from(e.from_symbol, edge.from_symbol):
                continue  # an import inside another function binds the name there only
            target = self.import_target(e, 0)
            if target is not None:
                return target
        for e in snap.star_imports_of(path):
            if lang in _OPEN_NAMESPACES and e.module:
                found_in_ns = self.namespace_member(e.module, head, lang)  # `using A.B;`
                if found_in_ns is not None:
                    return found_in_ns
                continue
            mod = self.import_target(e, 0)
            if isinstance(mod, Module):
                found_in = self.in_module(mod, head, 1)
                if found_in is not None:
                    return found_in
        fam = family(lang)
        if lang in _PACKAGE_DIR:
            here = posixpath.dirname(path)
            for other in snap.dirs.get(here, []):
                s = snap.top_level(other, head)
                if s is not None and family(snap.language(other)) == fam:
                    return s
        if lang in _GLOBAL_FALLBACK:
            unique = [
                s
                for s in snap.symbols_named(head)
                if family(s.language) == fam
                and s.kind is not SymbolKind.METHOD
                and "." not in s.qualified_name
            ]
            if len(unique) == 1 or _one_type(unique):
                return unique[0]
        return None

    def namespace_member(self, namespace: str, name: str, lang: str) -> Symbol | None:
        """``name`` declared in ``namespace`` in any file (C#: a namespace spans files), when
        exactly one definition claims it (the parts of a partial class are more than one)."""
        if lang not in _OPEN_NAMESPACES:
            return None
        want, fam = f"{namespace}.{name}", family(lang)
        found = [
            s for s in self.snap.symbols_named(name) if s.qualified_name == want and family(s.language) == fam
        ]
        return found[0] if len(found) == 1 or _one_type(found) else None

    def member_of(self, target: Target, name: str, depth: int) -> Target | None:
        if isinstance(target, Module):
            return self.in_module(target, name, depth + 1)
        if target.kind in TYPE_KINDS or target.kind in _NAMESPACE_KINDS:
            inner = self.snap.symbol(target.path, f"{target.qualified_name}.{name}")
            if inner is not None:
                return inner
            if target.kind is SymbolKind.MODULE and target.language == "rust":
                file = self.rust_module_file(target)  # `mod bound;`: its items are in bound.rs
                return self.in_module(Module(file, (file,)), name, depth + 1) if file else None
            return self.member(target, name) if target.kind in TYPE_KINDS else None
        return None  # a function or variable: the type of what it returns is unknown

    def in_module(self, mod: Module, name: str, depth: int) -> Target | None:
        """``name`` in a module: its top level, a submodule, a re-export, a star import."""
        if depth > MAX_DEPTH:
            return None
        key = (mod.name, mod.paths, name, depth)
        if key in self._in_module:
            return self._in_module[key]
        if len(self._in_module) >= _IN_MODULE_MAX:
            self._in_module.clear()
        found = self._in_module[key] = self._find_in_module(mod, name, depth)
        return found

    def _find_in_module(self, mod: Module, name: str, depth: int) -> Target | None:
        for p in mod.paths:
            s = self.snap.top_level(p, name)
            if s is not None:
                return s
        if mod.name in self.snap.python_modules or (mod.paths and mod.paths[0].endswith("__init__.py")):
            here = python_module(mod.paths[0]) if mod.paths else mod.name  # by path: never ambiguous
            # the workspace's own root package is "" (`from . import sessions` in its `api.py`)
            sub = self.python_module(f"{here}.{name}" if here else name)
            if sub is not None:
                return sub
        for p in mod.paths:
            for e in reversed(self.snap.imports_binding(p, name)):
                target = self.import_target(e, depth + 1)
                if target is not None:
                    return target
        for p in mod.paths:
            for e in self.snap.star_imports_of(p):
                inner = self.import_target(e, depth + 1)
                if isinstance(inner, Module) and inner != mod:
                    found = self.in_module(inner, name, depth + 1)
                    if found is not None:
                        return found
        return None

    # ----- imports ------------------------------------------------------------------

    def import_target(self, edge: Edge, depth: int) -> Target | None:
        """What an import edge binds: a module (``to_name`` "" or ``*``) or a definition."""
        key = (edge.path, edge.line, edge.column, edge.module, edge.to_name)
        if key in self._imports:
            return self._imports[key]
        self._imports[key] = None  # a cycle of re-exports resolves to nothing
        found = self._import_target(edge, depth) if depth <= MAX_DEPTH else None
        self._imports[key] = found
        return found

    def _import_target(self, edge: Edge, depth: int) -> Target | None:
        lang = self.snap.language(edge.path)
        name = edge.to_name
        mod: Module | None
        if lang == "python":
            absolute = absolute_module(edge.module, edge.path)
            if not name and edge.alias == absolute.split(".")[0] and not edge.module.startswith("."):
                absolute = edge.alias  # `import a.b` binds `a`
            mod = self.python_module(absolute)
        elif family(lang) == "js":
            mod = self.js_module(edge.path, edge.module)
        elif lang == "go":
            mod = self.go_package(edge.module)
        elif family(lang) == "c" and edge.module and not edge.module.startswith("<") and name == "*":
            mod = self.header(edge.path, edge.module)
        else:
            walked = self.rust_path(edge, depth) if lang == "rust" else None
            if walked is not None:
                return walked
            return self.qualified([*edge.module.split("."), name] if name not in ("", "*") else [], lang)
        if mod is None:
            return None
        if name in ("", "*"):
            return mod
        if name == "default" and family(lang) == "js":
            return self.snap.top_level(mod.paths[0], "default") if mod.paths else None
        return self.in_module(mod, name, depth + 1)


def _visible_from(scope: str, here: str) -> bool:
    """Whether a name bound in ``scope`` (an import's) is visible in code of ``here``: the
    top level, or ``here`` itself and what it contains."""
    return not scope or here == scope or here.startswith(scope + ".")


def _one_type(found: list[Symbol]) -> bool:
    """Whether several definitions are the parts of one partial type (C#): one type."""
    return len({s.qualified_name for s in found}) == 1 and all(s.partial for s in found)
