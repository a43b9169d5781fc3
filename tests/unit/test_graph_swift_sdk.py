"""Swift SDK closures (``indexer/languages/swift_sdk.py``): ``$0`` of ``Mutex<Foo>.withLock``
and ``NIOLockedValueBox<Foo>.withLockedValue`` is a ``Foo`` where the code states the
receiver's type with its argument, and anything else stays unresolved with candidates."""

from __future__ import annotations

import pytest

from codesift.indexer.graph import callees
from codesift.indexer.languages.bindings import as_written
from codesift.indexer.languages.swift_sdk import SIGNATURES, labelled
from codesift.indexer.model import EdgeKind

from .test_graph_resolve import graph_of, one

STORE = "struct Store {\n    mutating func insert(_ x: Int) {}\n    var items: [Int] { [] }\n}\n"


def closure_call(
    code: str, *, extra: dict[str, str] | None = None, imports: str = "Synchronization"
) -> str | None:
    """What ``$0.insert`` in ``Use.swift`` resolves to (None: unresolved, with candidates)."""
    head = "".join(f"import {m}\n" for m in imports.split()) if imports else ""
    g = graph_of({"Store.swift": STORE, **(extra or {}), "Use.swift": head + code})
    (edge,) = [
        e
        for e in g.snapshot.edges_of("Use.swift")
        if e.kind is EdgeKind.CALL and e.to_name.endswith(".insert")
    ]
    r = g.resolver.resolve(edge)
    if r.symbol is not None:
        return r.symbol.qualified_name
    assert [c.qualified_name for c in r.candidates] == ["Store.insert"]
    return None


@pytest.mark.parametrize(
    ("code", "imports"),
    [
        # a property initialised with the type and its argument (vapor's Authentication)
        (
            "final class Auth {\n    let storage = Mutex<Store>(.init())\n"
            "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n",
            "Synchronization",
        ),
        # a property annotated so, used through an extension, in parentheses, optional
        (
            "final class Auth {\n    let storage: Mutex<Store?> = .init(nil)\n}\n"
            "extension Auth {\n    func login() { storage0(); self.storage.withLock({ $0?.insert(1) }) }\n"
            "    func storage0() {}\n}\n",
            "Synchronization",
        ),
        # swift-nio's box, a local, and the module written in the type
        (
            "func f() {\n    let box = NIOLockedValueBox<Store>(Store())\n"
            "    box.withLockedValue { $0.insert(1) }\n}\n",
            "NIOConcurrencyHelpers",
        ),
        (
            "func f(m: Synchronization.Mutex<Store>) {\n    m.withLockIfAvailable() { $0.insert(1) }\n}\n",
            "Synchronization",
        ),
        # a receiver reached through typed names: a parameter's property
        (
            "final class Auth {\n    let storage: NIOLockedValueBox<Store>\n    init() { fatalError() }\n}\n"
            "func f(auth: Auth) {\n    auth.storage.withLockedValue {\n        $0.insert(1)\n    }\n}\n",
            "NIOConcurrencyHelpers",
        ),
        # the module-level box, where no function binds its name
        (
            "let box = Mutex<Store>(Store())\nfunc f() {\n    box.withLock { $0.insert(1) }\n}\n",
            "Synchronization",
        ),
    ],
)
def test_swift_sdk_closure_argument_is_the_stated_generic_argument(code: str, imports: str) -> None:
    assert closure_call(code, imports=imports) == "Store.insert"


def test_swift_sdk_closure_argument_through_a_property_declared_in_another_file() -> None:
    auth = (
        "import Synchronization\nextension Request {\n    public final class Authentication {\n"
        "        let storage = Mutex<Store>(.init())\n    }\n}\nfinal class Request {}\n"
    )
    use = (
        "extension Request.Authentication {\n    func login() { self.storage.withLock { $0.insert(1) } }\n}\n"
    )
    assert closure_call(use, extra={"Auth.swift": auth}, imports="") == "Store.insert"


@pytest.mark.parametrize(
    "code",
    [
        # the file does not import the module that declares the type
        "final class Auth {\n    let storage = Mutex<Store>(.init())\n"
        "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n",
    ],
)
def test_swift_sdk_table_needs_the_module_imported(code: str) -> None:
    assert closure_call(code, imports="Foundation") is None


@pytest.mark.parametrize(
    "code",
    [
        # the argument is not stated (`Mutex(Store())` infers it)
        "final class Auth {\n    let storage = Mutex(Store())\n"
        "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n",
        # a generic parameter is whatever the caller says
        "final class Auth<T> {\n    let storage: Mutex<T>\n    init() { fatalError() }\n"
        "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n",
        # another method than the table's (NIOLockedValueBox has no withLock; a labelled
        # `body:` is not the SDK's `_ body`; a closure after an argument is another method)
        "final class Auth {\n    let storage = NIOLockedValueBox<Store>(Store())\n"
        "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n",
        "final class Auth {\n    let storage = Mutex<Store>(Store())\n"
        "    func login() { self.storage.withLock(body: { $0.insert(1) }) }\n}\n",
        "final class Auth {\n    let storage = Mutex<Store>(Store())\n"
        "    func login() { self.storage.withLock(1) { $0.insert(1) } }\n}\n",
        # `$0` of a closure nested inside the SDK's closure
        "final class Auth {\n    let storage = Mutex<Store>(Store())\n"
        "    func login() { self.storage.withLock { $0.items.forEach { $0.insert(1) } } }\n}\n",
        # a local bound otherwise too in its function; a parameter of the closure's name
        "func f(other: Store?) {\n    let m = Mutex<Store>(Store())\n    if let m = other { print(m) }\n"
        "    m.withLock { $0.insert(1) }\n}\n",
        # a function binding the module-level box's name: its own `box`, untyped
        "let box = Mutex<Store>(Store())\nfunc f(box: Other) {\n    box.withLock { $0.insert(1) }\n}\n",
        # a variadic parameter is an array of them
        "func f(_ ms: Mutex<Store>...) {\n    ms.withLock { $0.insert(1) }\n}\n",
        # an argument that is no plain type
        "final class Auth {\n    let storage = Mutex<[Store]>([])\n"
        "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n",
        # a property written without `self.`: the parser does not know it is one
        "final class Auth {\n    let storage = Mutex<Store>(Store())\n"
        "    func login() { storage.withLock { $0.insert(1) } }\n}\n",
    ],
)
def test_swift_sdk_closure_argument_not_stated_stays_unresolved(code: str) -> None:
    assert closure_call(code, imports="Synchronization NIOConcurrencyHelpers") is None


def test_swift_sdk_a_workspace_type_of_the_table_s_name_wins() -> None:
    """A project's own ``Mutex`` (swift-argument-parser has one): its ``withLock`` says what
    its closure gets, which the graph does not read — never the table's answer."""
    own = "struct Mutex<Value> {\n    func withLock(_ body: (inout Int) -> Void) {}\n}\n"
    code = (
        "final class Auth {\n    let storage = Mutex<Store>(Store())\n"
        "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n"
    )
    assert closure_call(code) == "Store.insert"
    assert closure_call(code, extra={"Mutex.swift": own}) is None
    # an overload of the table's method the workspace declares on the SDK's type
    overload = "import Synchronization\nextension Mutex {\n    func withLock(_ body: (Int) -> Void) {}\n}\n"
    assert closure_call(code, extra={"Lock.swift": overload}) is None


def test_swift_sdk_unresolved_closure_call_is_shown_as_written() -> None:
    g = graph_of(
        {
            "Use.swift": "import Synchronization\nfinal class Auth {\n    let storage = Mutex<Gone>(Gone())\n"
            "    func login() { self.storage.withLock { $0.insert(1) } }\n}\n"
        }
    )
    names = [c.name for c in callees(g, one(g, "login"))]
    assert "$0.insert" in names
    assert as_written("self.storage{withLock$0}.insert") == "$0.insert"


def test_swift_sdk_table_labels_name_their_type() -> None:
    assert [labelled("self.x{" + e.method + "$0}") for e in SIGNATURES] == list(SIGNATURES)
    assert labelled("x{}") is None and labelled("x") is None and labelled("x{other$0}") is None


def test_swift_sdk_type_argument_is_a_reference_edge_only_where_it_types_a_closure() -> None:
    """The reference edge at ``Foo`` of ``Mutex<Foo>`` carries the binding; a generic
    parameter (``Mutex<T>``) is whatever the caller says: no edge to a type named ``T``."""
    code = (
        "import Synchronization\nfinal class Auth<T> {\n    let storage: Mutex<T>\n"
        "    let other = Mutex<Store>(Store())\n    init() { fatalError() }\n}\n"
    )
    g = graph_of({"Store.swift": STORE, "T.swift": "struct T {}\n", "Use.swift": code})
    refs = {e.to_name for e in g.snapshot.edges_of("Use.swift") if e.kind is EdgeKind.REFERENCE}
    assert "Store" in refs and "T" not in refs
