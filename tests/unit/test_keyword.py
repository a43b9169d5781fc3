"""Query handling for BM25: sanitising, identifier terms, keyword extraction; filters."""

from __future__ import annotations

import random
import re

import pytest

from codesift.indexer.errors import QueryError
from codesift.indexer.model import ChunkKind
from codesift.indexer.search.filters import filters_sql, glob_regex, path_allowed
from codesift.indexer.search.hybrid import _plan, grep_pattern
from codesift.indexer.search.keyword import extract_keywords, query_terms, sanitize
from codesift.indexer.search.ranking.query import plurals
from codesift.indexer.search.report import highlight_spans, highlighter
from codesift.indexer.search.results import Filters, SearchRequest
from codesift.indexer.settings import Settings


@pytest.mark.parametrize(
    ("query", "clean"),
    [
        ("func login()", "func login"),
        ('"user\'s (data)"', "user s data"),
        ("a* AND (b OR c)~2", "a AND b OR c 2"),
    ],
)
def test_bm25_query_syntax_characters_are_sanitised(query: str, clean: str) -> None:
    assert sanitize(query) == clean


@pytest.mark.parametrize("query", ["", "   ", "()", "'\"*():~^"])
def test_all_syntax_query_sanitises_to_nothing(query: str) -> None:
    assert sanitize(query) == ""


def test_identifier_query_terms_include_whole_and_parts() -> None:
    assert query_terms("validateCredentials") == ["validatecredentials", "validate", "credentials"]
    assert query_terms("validate credentials") == ["validate", "credentials"]


def _keywords(request: SearchRequest) -> str:
    return _plan(request, Settings()).keywords


def test_keywords_extracted_when_missing_empty_or_identical() -> None:
    q = "where do we retry failed uploads"
    assert _keywords(SearchRequest(q)) == "retry failed uploads"
    assert _keywords(SearchRequest(q, exact_keywords="")) == "retry failed uploads"
    assert _keywords(SearchRequest(q, exact_keywords=q)) == "retry failed uploads"
    assert _keywords(SearchRequest(q, exact_keywords="retry_upload")) == "retry_upload"
    assert extract_keywords("what calls validateCredentials()") == "validateCredentials"


def test_bm25_in_hybrid_gets_every_word_and_identifiers_feed_the_exact_source() -> None:
    plan = _plan(SearchRequest("how a tRPC router is created and procedures are registered"), Settings())
    assert plan.keywords == "tRPC"  # the exact-match (grep) source
    for word in ("tRPC", "router", "created", "procedures", "registered"):
        assert word in plan.bm25_query.split()
    given = _plan(SearchRequest("anything at all", exact_keywords="retry_upload"), Settings())
    assert given.bm25_query == "retry_upload"  # the caller's keywords are BM25's too


def test_bm25_gets_base_forms_and_plurals_of_the_query_words_it_does_not_stem() -> None:
    plan = _plan(SearchRequest("how are a file's chunks replaced in the index"), Settings())
    terms = plan.bm25_query.split()
    assert {"chunk", "replace", "files", "indexes"} <= set(terms)  # write_files, replace_rows
    alone = _plan(
        SearchRequest("how are a file's chunks replaced", mode="bm25"), Settings()
    ).bm25_query.split()
    assert {"chunk", "replace"} <= set(alone) and "files" not in alone  # BM25 alone ranks worse with them
    assert plurals("class") == ["classes"] and plurals("query") == ["queries"] and plurals("key") == ["keys"]
    assert plurals("chunks") == [] and plurals("is") == []


def test_grep_pattern_is_an_escaped_alternation() -> None:
    assert grep_pattern("retry_upload a.b") == r"retry_upload|a\.b"
    assert grep_pattern("()") == ""


def test_highlight_spans_are_character_offsets_merged() -> None:
    text = "déf validateCredentials(user)"
    spans = highlight_spans(text, ["validate", "credentials"])
    assert [text[a:b] for a, b in spans] == ["validateCredentials"]


def test_highlights_of_ascii_text_matched_lower_cased_equal_the_case_insensitive_match() -> None:
    rng = random.Random(5)
    alphabet = "abcXYZ_.(*) \n\t"
    terms_sets = [["ab", "c.x"], ["XYZ", "b"], ["a(", "*"], ["zz"], ["B_C", "bc", "yz"]]
    for terms in terms_sets:
        rx = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
        spans_of = highlighter(terms)
        for _ in range(300):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            want: list[tuple[int, int]] = []
            for m in rx.finditer(text):
                if want and m.start() <= want[-1][1]:
                    want[-1] = (want[-1][0], max(want[-1][1], m.end()))
                else:
                    want.append((m.start(), m.end()))
            assert spans_of(text) == tuple(want), (terms, text)
    # a text with a character whose lower case is longer keeps the case-insensitive match
    text = "İ ab AB"
    assert [text[a:b] for a, b in highlighter(["ab"])(text)] == ["ab", "AB"]


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("Sources/Auth/**", "Sources/Auth/Login.swift", True),
        ("Sources/Auth/**", "Other/Sources/Auth/Login.swift", False),
        ("*.swift", "a/b/c.swift", True),
        ("*.swift", "a/b/c.swiftx", False),
        ("**/Tests/**", "pkg/Tests/x.swift", True),
        ("**/Tests/**", "pkg/TestsX/x.swift", False),
        ("tests/", "a/tests/b.py", True),
    ],
)
def test_filter_globs_follow_gitignore_rules(glob: str, path: str, hit: bool) -> None:
    assert bool(re.match(glob_regex(glob), path)) is hit
    assert path_allowed(path, Filters(include=(glob,))) is hit
    assert path_allowed(path, Filters(exclude=(glob,))) is (not hit)


def test_filters_become_one_sql_where_clause() -> None:
    sql = filters_sql(
        Filters(
            include=("src/**",),
            exclude=("**/tests/**",),
            languages=("python",),
            kinds=(ChunkKind.FUNCTION,),
            projects=("p",),
        )
    )
    assert sql is not None
    assert "regexp_like(path" in sql and "NOT (" in sql
    assert "language IN ('python')" in sql and "kind IN ('function')" in sql and "project IN ('p')" in sql
    assert filters_sql(Filters()) is None


def test_bad_glob_is_a_query_error() -> None:
    with pytest.raises(QueryError):
        glob_regex("  ")


def test_semantic_weight_in_a_settings_file_moves_the_keyword_weight_as_the_flag_does() -> None:
    from codesift.indexer.search.results import Source
    from codesift.indexer.settings import load_settings

    by_file = _plan(
        SearchRequest("retry uploads"), load_settings(overrides={"search": {"semantic_weight": 0.9}})
    )
    by_flag = _plan(SearchRequest("retry uploads", semantic_weight=0.9), Settings())
    assert by_file.weights[Source.BM25] == pytest.approx(by_flag.weights[Source.BM25]) == pytest.approx(0.1)
