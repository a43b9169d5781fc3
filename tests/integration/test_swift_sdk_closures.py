"""Issue 15's S3 scenario on a vapor-shaped workspace: ``login`` stores through
``self.storage.withLock { $0.insert(instance) }`` on a ``Mutex<AuthenticationStorage>``, and
``--hops 2`` from ``login`` reaches what it calls (real index, real LanceDB)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codesift.indexer.embed import make_embedder
from codesift.indexer.graph import Graph, callees
from codesift.indexer.research import code_research
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import MatchType, SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_workspace, open_store

from ..conftest import write_workspace

FILES = {
    "Sources/Vapor/Authentication/Authentication.swift": """
        import Synchronization

        extension Request {
            public var auth: Authentication { .init() }

            public final class Authentication: Sendable {
                let storage = Mutex<AuthenticationStorage>(.init())
            }
        }

        extension Request.Authentication {
            public func login(_ instance: Int) {
                self.storage.withLock { $0.insert(instance) }
            }
        }

        struct AuthenticationStorage: Sendable {
            private var entries: [Int] = []

            mutating func insert(_ instance: Int) {
                self.entries.append(instance)
                remember(instance)
            }
        }
        """,
    "Sources/Vapor/Authentication/Remember.swift": """
        func remember(_ instance: Int) {
            print(instance)
        }
        """,
    "Sources/Vapor/Request/Request.swift": """
        public final class Request {
            init() {}
        }
        """,
    "Sources/Development/routes.swift": """
        func routes(_ req: Request) {
            req.auth.login(1)
        }
        """,
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_workspace(tmp_path_factory.mktemp("swift-sdk") / "ws", FILES)
    index_workspace(root, load_settings(root), embedder=make_embedder(Settings().embed), embed=False)
    return root


def test_what_calls_login_and_what_login_calls_through_a_mutex(ws: Path) -> None:
    settings = load_settings(ws)
    store = open_store(ws, settings)
    result = code_research(store, "what calls login()", settings, root=ws)
    assert [(f.name, f.relation) for f in result.findings] == [("routes", "caller")]
    g = Graph(store)
    (login,) = g.find("Request.Authentication.login")
    called = {c.callee.qualified_name for c in callees(g, login) if c.callee is not None}
    assert "AuthenticationStorage.insert" in called


def test_search_hops_2_from_login_reaches_what_it_calls(ws: Path) -> None:
    settings = load_settings(ws)
    store = open_store(ws, settings)

    def run(hops: int) -> dict[str, MatchType]:
        req = SearchRequest("login", mode="bm25", limit=10, hops=hops)
        return {h.chunk.symbol: h.match_type for h in search(store, req, settings, root=ws).hits}

    one = run(1)  # login's chunk calls AuthenticationStorage.insert: the struct's chunk
    assert one["AuthenticationStorage"] is MatchType.MULTI_HOP and "remember" not in one
    two = run(2)
    assert two.get("remember") is MatchType.MULTI_HOP  # login → insert → remember


def test_cli_callees_of_login_name_the_storage_s_insert(ws: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "codesift.server.cli", "callees", "login", "--root", str(ws), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    names = {c["name"] for r in json.loads(out)["results"] for c in r["callees"]}
    assert "AuthenticationStorage.insert" in names
