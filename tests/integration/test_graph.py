"""The reference graph over a real index: edges stored per file, resolution that follows
changes, multi-hop search, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.freshen import reindex_paths
from codesift.indexer.graph import Graph, callers, implementations
from codesift.indexer.model import EdgeKind
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import MatchType, SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import EDGES, SYMBOLS
from codesift.indexer.sync import index_workspace, open_store

from ..conftest import write_workspace

FILES = {
    "shop/__init__.py": "",
    "shop/base.py": """
        class Repository:
            def save(self, item):
                return item
        """,
    "shop/orders.py": """
        from .base import Repository
        from .pricing import total as compute_total


        class OrderRepository(Repository):
            def place(self, order):
                order.total = compute_total(order.lines)
                return self.save(order)
        """,
    "shop/pricing.py": """
        def total(lines):
            return sum(line_price(line) for line in lines)


        def line_price(line):
            return line.qty * line.unit_price
        """,
    "web/app.py": """
        from shop.orders import OrderRepository


        def checkout(order):
            return OrderRepository().place(order)
        """,
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


@pytest.fixture
def shop(tmp_path: Path, embedder: Embedder) -> Path:
    root = write_workspace(tmp_path / "ws", FILES)
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    return root


def graph_of(root: Path) -> Graph:
    return Graph(open_store(root, load_settings(root)))


def names(sites) -> set[str]:  # type: ignore[no-untyped-def]
    return {s.caller.qualified_name if s.caller else s.path for s in sites}


def test_edges_are_stored_per_file_and_removed_with_it(shop: Path, embedder: Embedder) -> None:
    store = open_store(shop, load_settings(shop))
    assert store.count(EDGES, "path = 'shop/orders.py'") > 0
    (shop / "shop" / "orders.py").unlink()
    index_workspace(shop, load_settings(shop), embedder=embedder, embed=False)
    assert store.count(EDGES, "path = 'shop/orders.py'") == 0


def test_resolution_through_relative_aliased_imports_and_self_into_base(shop: Path) -> None:
    g = graph_of(shop)
    (total,) = g.find("shop.pricing.total")
    assert names(callers(g, total)) == {"OrderRepository.place"}
    (save,) = g.find("Repository.save")
    assert names(callers(g, save)) == {"OrderRepository.place"}
    (repo,) = g.find("Repository")
    assert [i.symbol.qualified_name for i in implementations(g, repo) if i.symbol] == ["OrderRepository"]


SWIFT_PACKAGES = {
    "vapor/Package.swift": "// swift-tools-version:5.9\nimport PackageDescription\n",
    "vapor/Sources/Vapor/Validation/ValidatorResults.swift": """
        public struct ValidatorResults {}
        public protocol ValidatorResult {
            var isFailure: Bool { get }
        }
        """,
    "vapor/Sources/Vapor/Validation/Validators/URL.swift": """
        import Foundation

        extension ValidatorResults {
            public struct URL {
                public let isValidURL: Bool
            }
        }

        extension ValidatorResults.URL: ValidatorResult {
            public var isFailure: Bool { !self.isValidURL }
        }
        """,
    "alamofire/Package.swift": "// swift-tools-version:5.9\nimport PackageDescription\n",
    "alamofire/Source/Core/URLConvertible.swift": """
        import Foundation

        public protocol URLConvertible {
            func asURL() throws -> URL
        }

        extension URL: URLConvertible {
            public func asURL() throws -> URL { self }
        }

        extension String: URLConvertible {
            public func asURL() throws -> URL {
                guard let url = URL(string: self) else { throw URLError(.badURL) }
                return url
            }
        }
        """,
}


def test_swift_packages_foundation_url_is_not_a_nested_namesake(tmp_path: Path, embedder: Embedder) -> None:
    """Alamofire's `extension URL` (Foundation's) is not vapor's `ValidatorResults.URL`."""
    root = write_workspace(tmp_path / "ws", SWIFT_PACKAGES)
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    g = graph_of(root)
    (conv,) = g.find("URLConvertible")
    found = implementations(g, conv)
    assert [(i.symbol, i.name) for i in found] == [(None, "URL"), (None, "String")]
    (nested,) = g.find("ValidatorResults.URL")
    assert "asURL" not in {m.name for m in g.resolver.own_members(nested)}
    (result,) = g.find("ValidatorResult")
    assert [i.name for i in implementations(g, result)] == ["ValidatorResults.URL"]


def test_edges_into_a_changed_file_reresolve_after_reindex(shop: Path, embedder: Embedder) -> None:
    g = graph_of(shop)  # one long-lived graph, as the language server keeps it
    (total,) = g.find("shop.pricing.total")
    assert names(callers(g, total)) == {"OrderRepository.place"}
    # `total` moves to another module; pricing re-exports it. orders.py is not touched.
    (shop / "shop" / "totals.py").write_text("def total(lines):\n    return 0\n")
    (shop / "shop" / "pricing.py").write_text("from .totals import total\n")
    settings = load_settings(shop)
    reindex_paths(shop, settings, ["shop/totals.py", "shop/pricing.py"], embedder=embedder, embed=False)
    (moved,) = g.find("shop.pricing.total")
    assert moved.path == "shop/totals.py"
    assert names(callers(g, moved)) == {"OrderRepository.place"}
    # now it disappears altogether: the call is unresolved, never pinned to a namesake
    (shop / "shop" / "pricing.py").write_text("X = 1\n")
    reindex_paths(shop, settings, ["shop/pricing.py"], embedder=embedder, embed=False)
    place_edges = [e for e in g.snapshot.edges_of("shop/orders.py") if e.kind is EdgeKind.CALL]
    call = next(e for e in place_edges if e.to_name == "compute_total")
    assert g.resolve(call).to_symbol == ""
    assert callers(g, moved) == []


def test_multihop_depth_1_follows_only_direct_references(shop: Path) -> None:
    settings = load_settings(shop)
    store = open_store(shop, settings)
    g = Graph(store)

    def run(hops: int) -> dict[str, tuple[MatchType, tuple[str, ...]]]:
        req = SearchRequest("checkout", mode="bm25", limit=10, hops=hops)
        res = search(store, req, settings, root=shop, graph=g)
        return {h.chunk.symbol: (h.match_type, h.via) for h in res.hits}

    seeds = run(0)
    assert set(seeds) == {"checkout"}
    depth1 = run(1)  # checkout() calls OrderRepository(): the class's chunk
    assert depth1["OrderRepository"] == (MatchType.MULTI_HOP, ("OrderRepository",))
    assert "total" not in depth1 and "Repository" not in depth1  # two hops away
    depth2 = run(2)
    assert depth2["total"] == (MatchType.MULTI_HOP, ("OrderRepository", "total"))
    assert depth2["Repository"] == (MatchType.MULTI_HOP, ("OrderRepository", "Repository"))
    assert depth2["checkout"][0] is not MatchType.MULTI_HOP


def test_multihop_chunk_reached_by_two_paths_scores_both(tmp_path: Path, embedder: Embedder) -> None:
    body = "".join(f"    step_{i} = {i}\n" for i in range(6))  # long enough to be chunks of their own
    source = (
        f"def alpha_entry():\n{body}    shared()\n\n\n"
        f"def alpha_other():\n{body}    shared()\n\n\n"
        f"def shared():\n{body}    return 1\n"
    )
    root = write_workspace(tmp_path / "two", {"m.py": source})
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder, embed=False)
    store = open_store(root, settings)
    res = search(store, SearchRequest("alpha", mode="bm25", limit=10, hops=1), settings, root=root)
    hits = {h.chunk.symbol: h for h in res.hits}
    assert set(hits) == {"alpha_entry", "alpha_other", "shared"}
    a, b = hits["alpha_entry"].score, hits["alpha_other"].score
    assert hits["shared"].match_type is MatchType.MULTI_HOP
    # each chunk once; its score combines both paths: 1 - (1 - a/2)(1 - b/2) > either path alone
    assert hits["shared"].score == pytest.approx(1 - (1 - a / 2) * (1 - b / 2), abs=1e-5)
    assert hits["shared"].score > max(a, b) / 2


def test_cli_callers_impls_and_search_hops_json(shop: Path) -> None:
    cli = [sys.executable, "-m", "codesift.server.cli"]
    out = subprocess.run(
        [*cli, "callers", "shop.pricing.total", "--root", str(shop), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(out)["results"]
    assert [c["caller"]["qualified_name"] for c in data[0]["callers"]] == ["OrderRepository.place"]
    assert data[0]["callers"][0]["from_ranges"][0]["start"]["line"] == 7
    out = subprocess.run(
        [*cli, "impls", "Repository", "--root", str(shop), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert (
        json.loads(out)["results"][0]["implementations"][0]["symbol"]["qualified_name"] == "OrderRepository"
    )
    out = subprocess.run(
        [*cli, "callees", "OrderRepository.place", "--root", str(shop), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert {c["name"] for c in json.loads(out)["results"][0]["callees"]} >= {"total", "Repository.save"}
    out = subprocess.run(
        [*cli, "search", "checkout", "--mode", "bm25", "--hops", "1", "--root", str(shop), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    hits = json.loads(out)["hits"]
    assert any(h["match_type"] == "multi-hop" and h["via"] == ["OrderRepository"] for h in hits)


def test_cli_callees_says_1_candidate_and_2_candidates(tmp_path: Path, embedder: Embedder) -> None:
    source = (
        "def run(x, y):\n    x.save()\n    y.load()\n\n\n"
        "class Repo:\n    def save(self):\n        pass\n\n    def load(self):\n        pass\n\n\n"
        "class Cache:\n    def load(self):\n        pass\n"
    )
    root = write_workspace(tmp_path / "ws", {"m.py": source})
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    out = subprocess.run(
        [sys.executable, "-m", "codesift.server.cli", "callees", "run", "--root", str(root)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # `x` and `y` are parameters of unknown type: their calls are written `?.save`, `?.load`
    assert "?.save (unresolved, 1 candidate) line 2" in out
    assert "?.load (unresolved, 2 candidates) line 3" in out


def test_java_overloads_keep_their_own_callers_through_the_index(tmp_path: Path, embedder: Embedder) -> None:
    """Argument counts and parameter counts go through the store (``edges.args``,
    ``symbols.arity``): `callers` of each overload lists only the calls that take it."""
    source = (
        "package a;\nclass Buf {\n    Buf add(int x) { return this; }\n"
        "    Buf add(String s, int n) { return this; }\n"
        '    void run(Buf b) {\n        b.add(1);\n        b.add("x", 2);\n    }\n}\n'
    )
    root = write_workspace(tmp_path / "ws", {"src/a/Buf.java": source})
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    g = graph_of(root)
    one, two = sorted(g.find("Buf.add"), key=lambda s: s.selection_range.start.line)
    assert [c.from_ranges[0].start.line for c in callers(g, one)] == [6]
    assert [c.from_ranges[0].start.line for c in callers(g, two)] == [7]
    out = subprocess.run(
        [sys.executable, "-m", "codesift.server.cli", "callees", "Buf.run", "--root", str(root)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "Buf.add Buf.java:3 line 6" in out.replace("src/a/", "")
    assert "Buf.add Buf.java:4 line 7" in out.replace("src/a/", "")


@pytest.mark.parametrize(
    "dropped",
    [(["arity", "partial", "params"], ["args", "arg_types"]), (["params"], ["arg_types"])],
    ids=["schema4", "schema5"],
)
def test_an_index_of_a_previous_schema_answers_graph_questions_until_its_rebuild(
    tmp_path: Path, embedder: Embedder, dropped: tuple[list[str], list[str]]
) -> None:
    """An index written before `symbols.arity` / `symbols.partial` / `edges.args` (schema 4)
    or before `symbols.params` / `edges.arg_types` (schema 5) still answers callers and
    symbols (any argument count and types, no partial type) until the next `codesift index`
    rebuilds it; before, `codesift callers` stopped with a KeyError."""
    root = write_workspace(tmp_path / "ws", {"m.py": "def f():\n    g()\n\n\ndef g():\n    pass\n"})
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    store = open_store(root, load_settings(root))
    store.table(SYMBOLS).drop_columns(dropped[0])
    store.table(EDGES).drop_columns(dropped[1])
    g = Graph(open_store(root, load_settings(root)))
    (target,) = g.find("g")
    assert [c.caller.qualified_name for c in callers(g, target) if c.caller] == ["f"]
    out = subprocess.run(
        [sys.executable, "-m", "codesift.server.cli", "callers", "g", "--root", str(root)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "← f m.py:1 line 2" in out.stdout, out.stderr


def test_java_overloads_told_apart_by_argument_types_through_the_index(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Parameter and argument types go through the store (``symbols.params``,
    ``edges.arg_types``): `insert(0, array, element)` inside `addFirst(boolean[], boolean)`
    is `insert(int, boolean[], boolean...)`, not `<T> insert(int, T[], T...)`."""
    source = (
        "package a;\nclass U {\n"
        "    static <T> T[] insert(int i, T[] a, T... v) { return a; }\n"
        "    static boolean[] insert(int i, boolean[] a, boolean... v) { return a; }\n"
        "    static boolean[] addFirst(final boolean[] array, final boolean element) {\n"
        "        return insert(0, array, element);\n    }\n}\n"
    )
    root = write_workspace(tmp_path / "ws", {"src/a/U.java": source})
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    g = graph_of(root)
    generic, booleans = sorted(g.find("U.insert"), key=lambda s: s.selection_range.start.line)
    assert booleans.params == "int,boolean[],boolean..."
    assert [c.from_ranges[0].start.line for c in callers(g, booleans)] == [6]
    assert callers(g, generic) == []


def test_cli_callers_with_none_resolved_says_which_unresolved_calls_may_be_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    """`put(size)` (a field: its type is not read) between `put(int)` and `put(String)` is
    unresolved: `callers` of either says 0 callers and that 1 unresolved call may be it,
    instead of a silent 0."""
    source = (
        "package a;\nclass Two {\n    void put(int x) {}\n    void put(String s) {}\n"
        "    void run() { put(size); } int size;\n}\n"
    )
    root = write_workspace(tmp_path / "ws", {"src/a/Two.java": source})
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    run = [sys.executable, "-m", "codesift.server.cli", "callers", "Two.put", "--root", str(root)]
    plain = subprocess.run(run, capture_output=True, text=True)
    assert plain.returncode == 1
    assert plain.stdout.count("— 0 callers (1 unresolved call may be it: --unresolved lists them)") == 2
    listed = subprocess.run([*run, "--unresolved"], capture_output=True, text=True)
    assert listed.returncode == 0 and listed.stdout.count("line 5 (unresolved: a candidate)") == 2
