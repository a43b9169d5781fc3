"""Search end to end over a real index (real LanceDB FTS, real model, real rg)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.errors import IndexMissingError
from codesift.indexer.model import ChunkKind
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.names import SymbolMatch
from codesift.indexer.search.results import Filters, MatchType, SearchRequest, Source
from codesift.indexer.search.symbol_words import find_by_words, query_words
from codesift.indexer.search.symbols import SymbolIndex, find_symbols
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import index_workspace, open_store

from ..conftest import SAMPLE_FILES, write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    files = dict(SAMPLE_FILES)
    files["Sources/Auth/Login.swift"] = """
        protocol AuthProtocol {
            func login(user: String) -> Bool
        }

        struct TokenAuth: AuthProtocol {
            func login(user: String) -> Bool {
                return refreshToken(for: user)
            }
        }
        """
    files["Sources/Auth/Tests/LoginTests.swift"] = """
        func testLogin() {
            let auth = TokenAuth()
            assert(auth.login(user: "x"))
        }
        """
    files["app/data.py"] = '''
        def describe(record):
            """Describe the user's (data) record."""
            return f"user's (data): {record}"
        '''
    root = write_workspace(tmp_path_factory.mktemp("search") / "ws", files)
    index_workspace(root, load_settings(root), embedder=embedder)
    return root


def run(root: Path, embedder: Embedder, request: SearchRequest, settings: Settings | None = None):  # type: ignore[no-untyped-def]
    settings = settings or load_settings(root)
    return search(open_store(root, settings), request, settings, root=root, embedder=embedder)


def symbols_of(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.chunk.symbol for h in result.hits]


def test_bm25_finds_camel_case_identifier_by_its_words_and_by_itself(
    indexed: Path, embedder: Embedder
) -> None:
    for q in ("validate credentials", "validateCredentials"):
        res = run(indexed, embedder, SearchRequest(q, mode="bm25"))
        assert res.hits, q
        assert res.hits[0].chunk.path == "app/auth.py", q
        assert "def validateCredentials" in res.hits[0].chunk.text
        assert res.hits[0].match_type is MatchType.BM25


def test_bm25_func_login_parens_finds_login(indexed: Path, embedder: Embedder) -> None:
    res = run(indexed, embedder, SearchRequest("func login()", mode="bm25"))
    assert any("login" in h.chunk.symbol.lower() for h in res.hits[:3])


def test_bm25_quotes_and_parens_are_sanitised(indexed: Path, embedder: Embedder) -> None:
    res = run(indexed, embedder, SearchRequest('"user\'s (data)"', mode="bm25"))
    assert res.hits and res.hits[0].chunk.path == "app/data.py"


def test_bm25_empty_or_all_syntax_query_returns_empty_without_error(
    indexed: Path, embedder: Embedder
) -> None:
    res = run(indexed, embedder, SearchRequest("'\"*()", mode="bm25"))
    assert res.hits == ()
    assert any("no searchable words" in n for n in res.report.notes)


def test_hybrid_with_all_syntax_keywords_still_returns_vector_results(
    indexed: Path, embedder: Embedder
) -> None:
    res = run(
        indexed,
        embedder,
        SearchRequest("()", semantic_query="retry failed uploads with backoff", exact_keywords="()"),
    )
    # The vector source alone answers; the ranking stage orders its hits (file coherence
    # lifts app/config.py's parse_config beside retry_upload in this six-file workspace).
    assert res.hits and all(h.sources == (Source.SEMANTIC,) for h in res.hits)
    assert "retry_upload" in symbols_of(res)[:2]
    assert res.report.per_source[Source.BM25] == 0


def test_vector_search_is_cosine_and_respects_limit(indexed: Path, embedder: Embedder) -> None:
    res = run(indexed, embedder, SearchRequest("read the JSON configuration file", mode="vector", limit=2))
    assert len(res.hits) <= 2
    # The file's import block ("import json") and parse_config are both near the query.
    assert res.hits[0].chunk.path == "app/config.py" and "parse_config" in symbols_of(res)
    assert 0.5 < res.hits[0].score <= 1.0  # cosine similarity


def test_vector_score_threshold_drops_results_at_or_beyond_the_distance(
    indexed: Path, embedder: Embedder
) -> None:
    loose = run(
        indexed,
        embedder,
        SearchRequest("upload", mode="vector", vector_score_threshold=2.0, min_similarity=-1.0),
    )
    strict = run(indexed, embedder, SearchRequest("upload", mode="vector", vector_score_threshold=0.0))
    assert loose.hits and strict.hits == ()
    assert strict.report.dropped_by_threshold == len(loose.hits)
    assert any("dropped" in n for n in strict.report.notes)
    assert any("no results" in n for n in strict.report.notes)


def test_vector_min_similarity_keeps_only_scores_at_or_above(indexed: Path, embedder: Embedder) -> None:
    res = run(indexed, embedder, SearchRequest("upload retries", mode="vector", min_similarity=0.3))
    assert all(h.score >= 0.3 for h in res.hits)


def test_hybrid_found_by_several_sources_ranks_first(indexed: Path, embedder: Embedder) -> None:
    res = run(
        indexed, embedder, SearchRequest("where do we retry failed uploads", exact_keywords="retry_upload")
    )
    top = res.hits[0]
    assert top.chunk.symbol == "retry_upload"
    assert top.match_type is MatchType.HYBRID
    assert {Source.SEMANTIC, Source.BM25, Source.GREP} <= set(top.sources)


def test_hybrid_default_limit_is_20_and_each_source_overfetches_3x(
    tmp_path: Path, embedder: Embedder
) -> None:
    files = {f"pkg/m{i}.py": f"def handler_{i}(token):\n    return refresh(token, {i})\n" for i in range(70)}
    root = write_workspace(tmp_path / "many", files)
    index_workspace(root, load_settings(root), embedder=embedder)
    res = run(root, embedder, SearchRequest("refresh token handler"))
    assert len(res.hits) == 20
    assert all(0 < n <= 60 for n in res.report.per_source.values())
    assert max(res.report.per_source.values()) == 60


def test_filters_are_applied_inside_the_query_not_after_the_limit(tmp_path: Path, embedder: Embedder) -> None:
    files = {
        f"noise/n{i}.py": f"def refresh_token_{i}():\n    return 'refresh token {i}'\n" for i in range(40)
    }
    files["Sources/Auth/Keep.swift"] = 'func keepRefresh() -> String {\n    return "refresh token"\n}\n'
    files["Sources/Auth/Tests/KeepTests.swift"] = 'func testKeep() {\n    _ = "refresh token"\n}\n'
    root = write_workspace(tmp_path / "filters", files)
    index_workspace(root, load_settings(root), embedder=embedder)
    for mode in ("bm25", "vector", "hybrid"):
        res = run(
            root,
            embedder,
            SearchRequest(
                "refresh token",
                mode=mode,  # type: ignore[arg-type]
                limit=1,
                filters=Filters(include=("Sources/Auth/**",), exclude=("**/Tests/**",)),
                vector_score_threshold=2.0,
            ),
        )
        assert [h.chunk.path for h in res.hits] == ["Sources/Auth/Keep.swift"], mode
    ext = run(
        root, embedder, SearchRequest("refresh token", mode="bm25", filters=Filters(include=("*.swift",)))
    )
    assert {h.chunk.path for h in ext.hits} == {
        "Sources/Auth/Keep.swift",
        "Sources/Auth/Tests/KeepTests.swift",
    }
    lang = run(
        root,
        embedder,
        SearchRequest("refresh token", mode="bm25", limit=50, filters=Filters(languages=("swift",))),
    )
    assert {h.chunk.language for h in lang.hits} == {"swift"}
    kind = run(
        root,
        embedder,
        SearchRequest("refresh token", mode="bm25", filters=Filters(kinds=(ChunkKind.FUNCTION,))),
    )
    assert kind.hits and {h.chunk.kind for h in kind.hits} == {ChunkKind.FUNCTION}
    proj = run(
        root, embedder, SearchRequest("refresh token", mode="bm25", filters=Filters(projects=("elsewhere",)))
    )
    assert proj.hits == ()
    own = run(
        root, embedder, SearchRequest("refresh token", mode="bm25", filters=Filters(projects=("filters",)))
    )
    assert own.hits


def test_hits_carry_chunk_score_match_type_highlights_sources_and_report(
    indexed: Path, embedder: Embedder
) -> None:
    res = run(indexed, embedder, SearchRequest("validate credentials password"))
    assert res.hits
    for h in res.hits:
        c = h.chunk
        assert c.id and c.path and c.project == "ws" and c.language and c.kind and c.content_hash
        assert 1 <= c.start_line <= c.end_line
        assert 0.0 <= h.score <= 1.0
        assert h.sources
        assert (indexed / c.path).is_file()  # results cite the real path
        for a, b in h.highlights:
            assert 0 <= a < b <= len(c.text)
    top = res.hits[0]
    assert any(top.chunk.text[a:b].lower() in ("validatecredentials", "password") for a, b in top.highlights)
    r = res.report
    assert r.chunks == len(res.hits)
    assert r.unique_files == len({h.chunk.path for h in res.hits})
    assert r.chars == sum(len(h.chunk.text) for h in res.hits)
    assert set(r.per_source) == {"semantic", "bm25", "grep"}
    assert {"semantic", "bm25", "grep", "total"} <= set(r.millis)


def test_stale_flag_marks_hits_whose_file_changed_since_indexing(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "stale")
    index_workspace(root, load_settings(root), embedder=embedder)
    path = root / "app/upload.py"
    path.write_text(path.read_text() + "\n# edited\n")
    res = run(root, embedder, SearchRequest("retry_upload", mode="bm25"))
    flags = {h.chunk.path: h.stale for h in res.hits}
    assert flags["app/upload.py"] is True
    res = run(root, embedder, SearchRequest("validateCredentials", mode="bm25"))
    assert all(not h.stale for h in res.hits)


def test_report_says_when_vectors_are_pending(tmp_path: Path, embedder: Embedder) -> None:
    root = write_workspace(tmp_path / "pending")
    index_workspace(root, load_settings(root), embedder=embedder, embed=False)
    res = run(root, embedder, SearchRequest("retry failed uploads"))
    assert res.hits  # BM25 and grep answer while vectors fill in
    assert any("index incomplete" in n for n in res.report.notes)


def test_search_over_a_missing_index_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(IndexMissingError, match="codesift index"):
        open_store(tmp_path, Settings())
    res = subprocess.run([*CODESIFT, "search", "x", "--root", str(tmp_path)], capture_output=True, text=True)
    assert res.returncode == 1 and "codesift index" in res.stderr  # README: 1, nothing there


def test_cli_search_json_has_the_documented_shape(indexed: Path) -> None:
    res = subprocess.run(
        [*CODESIFT, "search", "retry failed uploads", "--keywords", "retry upload", "--limit", "3", "--json"],
        capture_output=True,
        text=True,
        cwd=indexed / "app",
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert len(data["hits"]) <= 3
    hit = data["hits"][0]
    for key in (
        "path",
        "start_line",
        "end_line",
        "score",
        "match_type",
        "sources",
        "symbol",
        "kind",
        "language",
        "text",
        "highlights",
        "stale",
    ):
        assert key in hit
    assert hit["symbol"] == "retry_upload"
    assert {"chars", "unique_files", "chunks", "per_source", "millis"} <= set(data["report"])


def test_cli_grep_prints_passages_as_json(indexed: Path) -> None:
    res = subprocess.run(
        [*CODESIFT, "grep", r"def \w+_upload", "--regex", "--root", str(indexed), "--json"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    passages = json.loads(res.stdout)["passages"]
    assert passages[0]["path"] == "app/upload.py"
    assert {"path", "start_line", "end_line", "match_lines", "text"} <= set(passages[0])
    assert passages[0]["start_line"] == 1


def test_cli_grep_invalid_regex_is_a_clear_error(indexed: Path) -> None:
    res = subprocess.run(
        [*CODESIFT, "grep", "foo(", "--regex", "--root", str(indexed)], capture_output=True, text=True
    )
    assert res.returncode == 2
    assert "regex" in res.stderr.lower()


def test_symbol_search_exact_name_first_and_a_class_brings_its_methods(indexed: Path) -> None:
    store = Store(str(indexed / ".codesift"))
    hits = find_symbols(store, "AuthService")
    assert hits[0].symbol.qualified_name == "AuthService" and hits[0].match is SymbolMatch.EXACT
    members = [h.symbol.qualified_name for h in hits if h.match is SymbolMatch.MEMBER]
    assert {"AuthService.validateCredentials", "AuthService.login"} <= set(members)
    hits = find_symbols(store, "login")
    assert hits[0].symbol.name == "login"
    fuzzy = find_symbols(store, "valCred")
    assert fuzzy and fuzzy[0].symbol.name == "validateCredentials"


def test_a_few_words_match_a_symbols_name_container_and_path(indexed: Path) -> None:
    store = Store(str(indexed / ".codesift"))
    # "auth" is in each login's container or path, "login" is its name: the exact names
    # first, then the names that hold a word (testLogin, in Sources/Auth/Tests)
    hits = find_by_words(store, query_words("Auth  LOGIN"), limit=10)
    exact = [h.symbol.qualified_name for h in hits if h.match is SymbolMatch.EXACT]
    assert set(exact) == {"AuthService.login", "AuthProtocol.login", "TokenAuth.login"}
    assert [h.symbol.qualified_name for h in hits[: len(exact)]] == exact
    assert "testLogin" in [h.symbol.name for h in hits[len(exact) :]]
    assert "validateCredentials" not in [h.symbol.name for h in hits]
    # each word may hold the name: "config" is in parse_config's name and path
    assert [h.symbol.name for h in find_by_words(store, ["parse", "config"], limit=10)] == ["parse_config"]
    # a word in no name, container or path matches nothing (no fuzzy letters-in-order)
    assert find_by_words(store, ["parse", "yaml"], limit=10) == []
    assert query_words("one") == [] and query_words("parse a long sentence here") == []


def test_the_symbol_index_once_built_is_left_out_of_full_collections(indexed: Path) -> None:
    # a full collection over the stdlib's ~385k symbol-table objects held the GIL ~145 ms
    gc.unfreeze()
    try:
        index = SymbolIndex(Store(str(indexed / ".codesift")))
        table = index.table()
        assert table.symbols and gc.get_freeze_count() >= len(table.symbols)
    finally:
        gc.unfreeze()


def test_cli_symbols_with_a_few_words_answers_the_name_they_describe(indexed: Path) -> None:
    res = subprocess.run(
        [*CODESIFT, "symbols", "auth validate", "--root", str(indexed), "--json"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    names = [s["symbol"]["qualified_name"] for s in json.loads(res.stdout)["symbols"]]
    assert names == ["AuthService.validateCredentials"]


def test_cli_symbols_json(indexed: Path) -> None:
    env = {**os.environ}
    res = subprocess.run(
        [*CODESIFT, "symbols", "parse_config", "--root", str(indexed), "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    first = json.loads(res.stdout)["symbols"][0]
    assert first["symbol"]["qualified_name"] == "parse_config" and first["symbol"]["path"] == "app/config.py"


def test_symbol_search_camel_hump_ranks_before_substring_and_fuzzy(indexed: Path) -> None:
    store = Store(str(indexed / ".codesift"))
    hits = find_symbols(store, "vC")
    assert hits[0].symbol.name == "validateCredentials" and hits[0].match is SymbolMatch.CAMEL_HUMP
    hits = find_symbols(store, "fetUs")
    assert hits[0].symbol.qualified_name == "ApiClient.fetchUser"
    ranks = [h.match for h in find_symbols(store, "a") if h.match is not SymbolMatch.MEMBER]
    assert ranks == sorted(ranks)  # members follow their container; the rest best match first


def test_symbol_index_sees_a_saved_file_without_reloading_everything(
    tmp_path: Path, embedder: Embedder
) -> None:
    from codesift.indexer.freshen import reindex_paths
    from codesift.indexer.search.symbols import SymbolIndex

    root = write_workspace(tmp_path / "ws")
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder, embed=False)
    store = open_store(root, settings)
    index = SymbolIndex(store)
    assert find_symbols(store, "retry_upload", index=index)[0].symbol.name == "retry_upload"
    base = index.table()
    upload = root / "app" / "upload.py"
    upload.write_text(upload.read_text().replace("def retry_upload(", "def resend_blob("))
    reindex_paths(root, settings, ["app/upload.py"], embedder=embedder, embed=False)
    names = [h.symbol.name for h in find_symbols(store, "resend_blob", index=index)]
    assert names[0] == "resend_blob"
    assert "retry_upload" not in [h.symbol.name for h in find_symbols(store, "retry_upload", index=index)]
    assert index.table() is base  # the changed file came in as a delta
    (root / "app" / "upload.py").unlink()
    reindex_paths(root, settings, ["app/upload.py"], embedder=embedder, embed=False)
    assert "resend_blob" not in [h.symbol.name for h in find_symbols(store, "resend_blob", index=index)]
    assert find_symbols(store, "AuthService", index=index)[0].symbol.name == "AuthService"


def test_bm25_finds_identifiers_whole_or_split_from_the_split_column(tmp_path: Path) -> None:
    from codesift.indexer.search.keyword import bm25

    files = dict(SAMPLE_FILES)
    files["app/maths.py"] = '''
        def flächeBerechnen(breite, höhe):
            """Berechnet die Fläche: größe mal höhe (вычислить площадь)."""
            return breite * höhe
        '''
    root = write_workspace(tmp_path / "ws", files)
    settings = load_settings(root)
    index_workspace(root, settings, embed=False)
    store = open_store(root, settings)
    for query in ("validateCredentials", "validate credentials", "retry_upload"):
        assert bm25(store, query, 5), query
    assert bm25(store, "validateCredentials", 5)[0].chunk.path == "app/auth.py"
    assert bm25(store, "flächeBerechnen breite", 5)[0].chunk.path == "app/maths.py"
    for query in ("Fläche", "größe", "площадь", "flächeBerechnen", "höhe"):
        hits = bm25(store, query, 5)
        assert hits and hits[0].chunk.path == "app/maths.py", query


def test_a_one_shot_symbol_search_answers_as_the_long_lived_index(tmp_path: Path, embedder: Embedder) -> None:
    """``find_symbols`` without an index (the CLI with no server) reads only the symbols
    that can match and their namesakes and members; the answer must be the one a
    ``SymbolIndex`` of every symbol gives, for every kind of match and limit."""
    from codesift.indexer.search.symbols import SymbolIndex

    root = write_workspace(tmp_path / "ws")
    swift = root / "Sources"
    swift.mkdir()
    (swift / "Token.swift").write_text("struct TokenAuth {\n    func check() -> Bool { return true }\n}\n")
    (swift / "Token+Login.swift").write_text(  # members declared away from their type
        "extension TokenAuth {\n    func loginUser(name: String) -> Bool { return check() }\n}\n"
    )
    (root / "app" / "again.py").write_text(  # a namesake of AuthService in another file
        "class AuthService:\n    def logout(self):\n        return None\n\n"
        "def get_user_settings():\n    return {}\n\ndef getUserSettings():\n    return {}\n"
    )
    settings = load_settings(root)
    index_workspace(root, settings, embedder=embedder, embed=False)
    store = open_store(root, settings)
    index = SymbolIndex(store)
    queries = [
        "AuthService",
        "authservice",
        "TokenAuth",
        "login",
        "valCred",
        "vC",
        "fetUs",
        "gUS",
        "get_us",
        "getUS",
        "a",
        "us",
        "AuthService.login",
        "TokenAuth.loginUser",
        "Outer.",
        "nothing_like_this",
    ]
    for query in queries:
        for limit in (1, 3, 50):
            expected = find_symbols(store, query, limit=limit, index=index)
            assert find_symbols(store, query, limit=limit) == expected, (query, limit)
    members = [h.symbol.name for h in find_symbols(store, "TokenAuth") if h.match is SymbolMatch.MEMBER]
    assert {"check", "loginUser"} <= set(members)
    # a few words: one read of the table for every word, the same answer
    for words in (["auth", "login"], ["token", "user"], ["get", "settings", "user"], ["no", "such"]):
        for limit in (1, 50):
            expected = find_by_words(store, words, limit=limit, index=index)
            assert find_by_words(store, words, limit=limit) == expected, (words, limit)
    assert [h.symbol.name for h in find_by_words(store, ["token", "user"], limit=5)] == ["loginUser"]


def test_the_exact_source_looks_deeper_for_a_long_query_than_for_a_question(
    indexed: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BM25's pool, which the exact source matches: 4× the depth for an issue-sized query
    (an identifier it names may rank deep), 2× for a question (see ``exact.SHORT_POOL``)."""
    from codesift.indexer.search import exact, hybrid

    asked: list[int] = []
    real = hybrid.bm25

    def spy(store, query, limit, where=None):  # type: ignore[no-untyped-def]
        asked.append(limit)
        return real(store, query, limit, where)

    monkeypatch.setattr(hybrid, "bm25", spy)
    settings = load_settings(indexed)
    depth = settings.search.overfetch * settings.search.limit
    run(indexed, embedder, SearchRequest("where do we retry failed uploads", mode="hybrid"))
    issue = " ".join(["the upload fails and retry_upload never gives up on the client"] * 5)
    found = run(indexed, embedder, SearchRequest(issue, mode="hybrid"))
    assert asked == [depth * exact.SHORT_POOL, depth * exact.POOL] and exact.SHORT_POOL < exact.POOL
    assert found.hits and found.hits[0].chunk.path == "app/upload.py"
