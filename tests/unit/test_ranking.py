"""The ranking stage, rule by rule, on hand-made candidates (no index: the symbol
table and chunk loader are dictionaries here; the integration tests use real ones)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa
import pytest

from codesift.indexer.model import Chunk, ChunkKind, Position, Span, Symbol, SymbolKind
from codesift.indexer.search.ranking import (
    Candidate,
    Ranker,
    asked_roles,
    definition_lookup,
    rank_files,
    understand,
)
from codesift.indexer.search.ranking.boosts import (
    COMPOUND_BOOST,
    _words_held,
    boost_compound_names,
    boost_referenced_files,
    boost_word_coverage,
)
from codesift.indexer.search.ranking.query import bm25_text, semantic_text
from codesift.indexer.search.ranking.roles import FileRole, file_role, superseded
from codesift.indexer.search.ranking.select import is_declaration
from codesift.indexer.search.references import count_references, named_edges
from codesift.indexer.search.results import Filters, Source


def chunk(
    path: str,
    symbol: str = "",
    *,
    line: int = 1,
    text: str = "x = 1",
    kind: ChunkKind = ChunkKind.FUNCTION,
    language: str = "python",
) -> Chunk:
    cid = f"{path}:{line}"
    return Chunk(cid, path, "ws", language, kind, symbol, line, line + 3, text, cid)


def symbol_for(c: Chunk, name: str) -> Symbol:
    span = Span(Position(c.start_line - 1, 0), Position(c.end_line - 1, 0))
    return Symbol(name, c.symbol or name, SymbolKind.CLASS, c.path, c.language, span, span, "", c.id)


def ranker(table: Sequence[tuple[Chunk, str]] = ()) -> Ranker:
    """A ranker over a little symbol table: (chunk, the name it defines)."""

    def lookup(names: Sequence[str]) -> list[Symbol]:
        want = {n.lower() for n in names}
        return [symbol_for(c, n) for c, n in table if n.lower() in want]

    def load(ids: Sequence[str]) -> dict[str, Chunk]:
        return {c.id: c for c, _ in table if c.id in ids}

    return Ranker(lookup, load)


def ranked_paths(cands: Sequence[Candidate]) -> list[str]:
    return [c.chunk.path for c in cands]


def fused(*chunks_and_scores: tuple[Chunk, float]) -> list[Candidate]:
    return [Candidate(c, s, (Source.BM25,)) for c, s in chunks_and_scores]


# ----- query understanding --------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "symbol"),
    [
        ("HTTPAdapter", "HTTPAdapter"),
        ("field_validator", "field_validator"),
        ("Sinatra::Base", "Sinatra::Base"),
        ("Store.write_files", "Store.write_files"),
        ("login()", "login"),
        ("session", ""),  # a plain word is a words query
        ("how is the progress bar rendered", ""),
    ],
)
def test_a_symbol_query_is_told_from_a_words_query(query: str, symbol: str) -> None:
    assert understand(query).symbol == symbol


def test_identifiers_embedded_in_words_are_found() -> None:
    intent = understand("how a tRPC router is created and where safeParse calls parse_input()")
    assert set(intent.names) >= {"tRPC", "safeParse", "parse_input"}
    assert "router" in intent.words and "how" not in intent.words


def test_a_long_query_keeps_identifiers_for_bm25_and_its_title_for_the_model() -> None:
    issue = "QuerySet.bulk_create crashes on conflicts\n\n" + "When I call it the thing fails. " * 20
    issue += "Traceback: File django/db/models/query.py in _batched_insert\n"
    intent = understand(issue)
    assert intent.long
    terms = bm25_text(intent).split()
    assert "QuerySet.bulk_create" in " ".join(terms) or "bulk_create" in terms
    assert len(terms) <= 48
    meaning = semantic_text(intent)
    assert meaning.startswith("QuerySet.bulk_create crashes on conflicts")
    assert "_batched_insert" in meaning


def test_a_query_naming_a_role_asks_for_it() -> None:
    assert FileRole.TEST in understand("test for the progress bar").asked_roles
    assert FileRole.EXAMPLE in understand("an example of a group command").asked_roles
    assert not understand("how is the progress bar rendered").asked_roles


# ----- file roles -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/click/termui.py", FileRole.SOURCE),
        ("tests/test_termui.py", FileRole.TEST),
        ("pkg/foo_test.go", FileRole.TEST),
        ("Sources/AuthTests/LoginTests.swift", FileRole.TEST),
        ("src/app.spec.ts", FileRole.TEST),
        ("examples/repo/repo.py", FileRole.EXAMPLE),
        ("docs/usage.md", FileRole.DOCS),
        ("README.rst", FileRole.DOCS),
        ("vendor/lib/x.go", FileRole.VENDORED),
        ("single_include/nlohmann/json.hpp", FileRole.VENDORED),
        ("dist/app.min.js", FileRole.MINIFIED),
        ("api/service_pb2.py", FileRole.GENERATED),
        ("types/index.d.ts", FileRole.DECLARATION),
        ("src/click/__init__.py", FileRole.REEXPORT),
        ("src/_compat/shim.py", FileRole.COMPAT),
    ],
)
def test_file_roles_from_paths(path: str, role: FileRole) -> None:
    assert file_role(path) is role


def test_a_file_without_a_grammar_is_unknown() -> None:
    assert file_role("test/nvm_exec", "") is FileRole.TEST  # a test folder wins
    assert file_role("bin/nvm-exec", "") is FileRole.UNKNOWN


def test_an_include_filter_under_tests_asks_for_tests() -> None:
    assert FileRole.TEST in asked_roles(Filters(include=("tests/**",)))
    assert asked_roles(Filters(include=("src/**",))) == frozenset()


# ----- the rules --------------------------------------------------------------------


def test_source_code_ranks_above_tests_docs_and_examples_at_equal_retrieval() -> None:
    cands = fused(
        (chunk("tests/test_progress.py", "test_bar", text="def test_bar(): ..."), 1.0),
        (chunk("docs/progress.md", kind=ChunkKind.WINDOW, language="markdown"), 0.99),
        (chunk("examples/bar.py", "main"), 0.98),
        (chunk("src/termui.py", "render_progress"), 0.97),
    )
    out = ranker().rank(cands, understand("how is the progress bar rendered"), frozenset())
    assert ranked_paths(out)[0] == "src/termui.py"


def test_role_prior_is_off_when_the_query_or_filter_asks_for_tests() -> None:
    cands = fused(
        (chunk("tests/test_progress.py", "test_bar"), 1.0),
        (chunk("src/termui.py", "render_progress"), 0.97),
    )
    by_query = ranker().rank(cands, understand("test for the progress bar"), frozenset())
    assert ranked_paths(by_query)[0] == "tests/test_progress.py"
    words = understand("progress bar rendering")
    by_filter = ranker().rank(cands, words, asked_roles(Filters(include=("tests/**",))))
    assert ranked_paths(by_filter)[0] == "tests/test_progress.py"


def test_an_older_version_folder_is_a_legacy_copy_when_a_newer_version_is_a_candidate() -> None:
    assert superseded(["src/v3/types.ts", "src/v4/core/api.ts", "src/util.ts"]) == {"src/v3/types.ts"}
    # The same file outside the version folder is the current one.
    assert superseded(["pkg/v1/fields.py", "pkg/fields.py", "pkg/v1/schema.py"]) == {"pkg/v1/fields.py"}
    # One version alone, or a version the query names, is not superseded.
    assert superseded(["api/v1/users.py", "api/models.py"]) == set()
    assert superseded(["src/v3/types.ts", "src/v4/types.ts"], "zod v3 ZodType") == set()


def test_the_current_version_ranks_above_its_older_copy_at_equal_retrieval() -> None:
    cands = fused(
        (chunk("src/v3/types.ts", "ZodString", language="typescript"), 1.0),
        (chunk("src/v4/core/types.ts", "ZodString", language="typescript"), 0.9),
    )
    words = understand("string schema with min and max length checks")
    assert ranked_paths(ranker().rank(cands, words, frozenset()))[0] == "src/v4/core/types.ts"
    named = understand("string schema in zod v3")
    assert ranked_paths(ranker().rank(cands, named, frozenset()))[0] == "src/v3/types.ts"


def test_the_definition_of_a_named_symbol_comes_first_even_when_retrieval_missed_it() -> None:
    user = chunk("src/client.py", "Client.send", text="adapter = HTTPAdapter()")
    definition = chunk("src/adapters.py", "HTTPAdapter", kind=ChunkKind.CLASS, text="class HTTPAdapter:")
    cands = fused((user, 1.0))
    out = ranker([(definition, "HTTPAdapter")]).rank(cands, understand("HTTPAdapter"), frozenset())
    assert ranked_paths(out)[0] == "src/adapters.py"
    assert Source.SYMBOL in out[0].sources


def test_coherence_does_not_lift_a_busy_file_past_the_definition_a_symbol_query_names() -> None:
    # serde's "Visitor": retrieval found many chunks of private/de.rs that use visitors
    # and missed the trait itself; the symbol table brings it and it stays first.
    users = [chunk("src/private/de.rs", f"deserialize_{i}", line=i * 10, language="rust") for i in range(6)]
    trait = chunk("src/de/mod.rs", "Visitor", line=1270, kind=ChunkKind.CLASS, language="rust")
    cands = fused(*[(c, 1.0 - i * 0.01) for i, c in enumerate(users)])
    out = ranker([(trait, "Visitor")]).rank(cands, understand("Visitor"), frozenset())
    assert out[0].chunk.symbol == "Visitor"


def test_a_symbol_query_matches_path_parts_whole_not_by_prefix() -> None:
    # "Vitest" names the class in node/core.ts, not the file vite.ts.
    vite = chunk("node/types/vite.ts", "UserConfig", language="typescript")
    core = chunk("node/core.ts", "Vitest", kind=ChunkKind.CLASS, language="typescript")
    cands = fused((vite, 1.0), (core, 0.3))
    out = ranker([(core, "Vitest")]).rank(cands, understand("Vitest"), frozenset())
    assert ranked_paths(out)[0] == "node/core.ts"


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("Mutex and Semaphore for coroutine synchronization", "sync/Mutex.kt"),
        ("Semaphore and Mutex for coroutine synchronization", "sync/Semaphore.kt"),
        ("absl::StrSplit and StrJoin for splitting and joining", "strings/str_split.h"),
    ],
)
def test_a_file_named_by_an_earlier_query_word_leads_one_a_later_word_names(query: str, first: str) -> None:
    # kotlinx.coroutines' "Mutex and Semaphore …" asks for Mutex.kt first: a question
    # names its subject first, so an earlier word in a file's name weighs more.
    mutex = chunk("sync/Mutex.kt", "lock", language="kotlin")
    semaphore = chunk("sync/Semaphore.kt", "acquire", language="kotlin")
    split = chunk("strings/str_split.h", "StrSplit", language="cpp")
    join = chunk("strings/str_join.h", "StrJoin", language="cpp")
    pairs = (mutex, semaphore) if "Mutex" in query else (join, split)
    for order in (pairs, pairs[::-1]):  # whichever retrieval put first
        out = ranker().rank(fused((order[0], 1.0), (order[1], 1.0)), understand(query), frozenset())
        assert ranked_paths(out)[0] == first


def test_the_definition_leads_over_a_file_whose_name_contains_the_symbol() -> None:
    # "Vitest": node/plugins/vitestResolver.ts is found by every source and its name
    # holds the word; the class Vitest in node/core.ts is still the answer.
    resolver = chunk("node/plugins/vitestResolver.ts", "VitestProjectResolver", language="typescript")
    core = chunk("node/core.ts", "Vitest", kind=ChunkKind.CLASS, language="typescript")
    cands = fused((resolver, 1.0), (core, 0.5))
    out = ranker([(core, "Vitest")]).rank(cands, understand("Vitest"), frozenset())
    assert ranked_paths(out) == ["node/core.ts", "node/plugins/vitestResolver.ts"]


def test_a_symbol_querys_name_behind_a_sigil_is_a_definition_after_the_exact_one() -> None:
    # zod: "ZodError" names the public class in v4/classic/errors.ts and the core
    # $ZodError in v4/core/errors.ts, which a chunk that only uses it outranked.
    user = chunk("v4/classic/parse.ts", "safeParse", language="typescript")
    public = chunk("v4/classic/errors.ts", "ZodError", kind=ChunkKind.CLASS, language="typescript")
    core = chunk("v4/core/errors.ts", "$ZodError", kind=ChunkKind.CLASS, language="typescript")
    cands = fused((user, 1.0), (public, 0.5), (core, 0.4))
    out = ranker([(public, "ZodError"), (core, "$ZodError")]).rank(cands, understand("ZodError"), frozenset())
    assert ranked_paths(out) == ["v4/classic/errors.ts", "v4/core/errors.ts", "v4/classic/parse.ts"]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("ZodError", ["ZodError", "$ZodError", "_ZodError"]),
        ("_OptionParser", ["_OptionParser", "$_OptionParser"]),
        ("Sinatra::Base", ["Base", "$Base", "_Base"]),
        ("how is a ZodError shown", ["ZodError"]),  # a words query: the name as written
    ],
)
def test_a_symbol_query_looks_its_name_up_behind_each_sigil_too(query: str, names: list[str]) -> None:
    assert definition_lookup(understand(query)) == names


def test_a_file_named_after_the_symbol_wins_among_its_definitions() -> None:
    plural = chunk(
        "gson/TypeAdapters.java", "TypeAdapters.TypeAdapter", kind=ChunkKind.CLASS, language="java"
    )
    exact = chunk("gson/TypeAdapter.java", "TypeAdapter", kind=ChunkKind.CLASS, language="java")
    cands = fused((plural, 1.0), (exact, 0.9))
    table = [(plural, "TypeAdapter"), (exact, "TypeAdapter")]
    out = ranker(table).rank(cands, understand("TypeAdapter"), frozenset())
    assert ranked_paths(out)[0] == "gson/TypeAdapter.java"


def test_a_qualified_query_prefers_the_member_of_that_container() -> None:
    other = chunk("src/cache.py", "Cache.write_files", line=10)
    want = chunk("indexer/store.py", "Store.write_files", line=40)
    cands = fused((other, 1.0), (want, 0.95))
    table = [(other, "write_files"), (want, "write_files")]
    out = ranker(table).rank(cands, understand("Store.write_files"), frozenset())
    assert ranked_paths(out)[0] == "indexer/store.py"


def test_query_words_in_a_file_name_lift_that_file() -> None:
    cands = fused(
        (chunk("src/core.py", "Command.main"), 1.0),
        (chunk("src/shell_completion.py", "BashComplete.source"), 0.97),
    )
    out = ranker().rank(cands, understand("shell completion for bash"), frozenset())
    assert ranked_paths(out)[0] == "src/shell_completion.py"


def test_a_type_whose_whole_compound_name_the_query_spells_is_lifted() -> None:
    # click's "shell completion for bash": BashComplete, not a helper that only says completion.
    helper = chunk("click/shell_completion.py", "get_completion_class", line=456)
    bash = chunk("click/shell_completion.py", "BashComplete", line=304, kind=ChunkKind.CLASS)
    out = ranker().rank(
        fused((helper, 1.0), (bash, 0.97)), understand("shell completion for bash"), frozenset()
    )
    assert out[0].chunk.symbol == "BashComplete"


def test_a_type_whose_members_are_candidates_leaves_the_answer_to_them() -> None:
    # "how is the progress bar rendered": the method that renders, not the ProgressBar header.
    header = chunk("click/_termui_impl.py", "ProgressBar", line=40, kind=ChunkKind.CLASS)
    render = chunk("click/_termui_impl.py", "ProgressBar.render_progress", line=236, kind=ChunkKind.METHOD)
    out = ranker().rank(
        fused((header, 1.0), (render, 0.95)), understand("how is the progress bar rendered"), frozenset()
    )
    assert out[0].chunk.symbol == "ProgressBar.render_progress"


def test_a_chunk_holding_more_of_the_query_words_ranks_first() -> None:
    # click's "how are exceptions shown …": the class that shows the error and holds the
    # exit code (five of the query's words, "shown" by its stem) over one that only exits.
    exits = chunk("pkg/one.py", "quit_now", text="def quit_now(code):\n    raise SystemExit(code)  # exit")
    shows = chunk(
        "pkg/two.py",
        "Failure",
        kind=ChunkKind.CLASS,
        text=(
            "class Failure(Exception):\n    exit_code = 1\n"
            "    def show(self):\n        echo(self.message)  # to the user"
        ),
    )
    query = understand("how are exceptions shown to the user and the exit code set")
    out = ranker().rank(fused((exits, 1.0), (shows, 0.95)), query, frozenset())
    assert out[0].chunk.symbol == "Failure"


@pytest.mark.parametrize(
    ("text", "word", "held"),
    [
        ("raise Exit(exit_code)", "code", True),  # a part after "_"
        ("class ClickException(Exception):", "exceptions", True),  # camel part, by stem
        ("self.show()", "shown", True),  # "shown" ~ show
        ("HTTPServer()", "server", True),  # after an acronym
        ("offset = decode(x)", "set", False),  # inside a word: not a part
        ("offset = decode(x)", "code", False),
        ("settings.reset()", "set", False),  # a three-letter word matches whole only
        ("x.set_value()", "set", True),
    ],
)
def test_a_query_word_is_held_as_an_identifier_part(text: str, word: str, held: bool) -> None:
    assert _words_held(text, [word]) == int(held)


def test_word_coverage_leaves_a_symbol_query_alone() -> None:
    scores = {"a": 1.0, "b": 0.9}
    chunks = {
        "a": chunk("pkg/a.py", "a", text="nothing here"),
        "b": chunk("pkg/b.py", "b", text="exit code exception shown user"),
    }
    boost_word_coverage(scores, chunks, understand("ClickException"), 1.0)
    assert scores == {"a": 1.0, "b": 0.9}


def test_a_one_word_type_name_is_not_lifted_by_that_word_alone() -> None:
    # "mutex" in a query does not make every class Mutex the answer.
    impl = chunk("sync/a.kt", "withPermit", line=10)
    mutex = chunk("sync/b.kt", "Mutex", line=40, kind=ChunkKind.CLASS)
    out = ranker().rank(
        fused((impl, 1.0), (mutex, 0.97)), understand("mutex and semaphore usage"), frozenset()
    )
    assert out[0].chunk.symbol == "withPermit"


def test_overload_stubs_fold_into_the_definition() -> None:
    stub = chunk("src/core.py", "Command.main", line=10, text="@overload\ndef main(self) -> None: ...")
    stub2 = chunk(
        "src/core.py", "Command.main", line=14, text="@typing.overload\ndef main(self, a) -> int: ..."
    )
    impl = chunk("src/core.py", "Command.main", line=20, text="def main(self, *a):\n    return run()")
    assert is_declaration(stub) and is_declaration(stub2) and not is_declaration(impl)
    cands = fused((stub, 1.0), (stub2, 0.99), (impl, 0.5))
    out = ranker().rank(cands, understand("main entry point"), frozenset())
    assert [c.chunk.start_line for c in out] == [20]
    assert out[0].score == 1.0


def test_a_short_wrapper_answers_after_the_function_it_calls() -> None:
    # click's "how is the progress bar rendered": __enter__ (three lines calling
    # self.render_progress()) led every source; the implementing method comes first.
    enter = chunk(
        "click/_termui_impl.py",
        "ProgressBar.__enter__",
        line=115,
        text="def __enter__(self):\n    self.entered = True\n    self.render_progress()\n    return self",
        kind=ChunkKind.METHOD,
    )
    render = chunk("click/_termui_impl.py", "ProgressBar.render_progress", line=236, kind=ChunkKind.METHOD)
    render = dataclasses.replace(render, end_line=300, text="def render_progress(self):\n    ...")
    other = chunk("click/termui.py", "progressbar", line=352)
    cands = fused((enter, 1.0), (other, 0.7), (render, 0.5))
    out = ranker().rank(cands, understand("how is the progress bar rendered"), frozenset())
    symbols = [c.chunk.symbol for c in out]
    assert symbols[0] == "ProgressBar.render_progress"
    assert sorted(symbols) == sorted(["ProgressBar.render_progress", "ProgressBar.__enter__", "progressbar"])


def test_a_name_inside_a_longer_name_is_not_a_call_to_it() -> None:
    rerun = chunk("a.py", "again", text="def again():\n    rerun()\n")
    run = chunk("a.py", "run", line=100)
    out = ranker().rank(fused((rerun, 1.0), (run, 0.5)), understand("how does it start"), frozenset())
    assert [c.chunk.symbol for c in out] == ["again", "run"]


def test_a_long_function_calling_another_candidate_is_not_a_wrapper() -> None:
    caller = chunk("a.py", "main", text="def main():\n    run()\n", kind=ChunkKind.FUNCTION)
    caller = dataclasses.replace(caller, end_line=caller.start_line + 40)
    run = chunk("a.py", "run", line=100)
    out = ranker().rank(fused((caller, 1.0), (run, 0.5)), understand("how does it start"), frozenset())
    assert [c.chunk.symbol for c in out] == ["main", "run"]


def test_a_c_prototype_is_a_declaration_but_a_definition_is_not() -> None:
    proto = chunk("src/x.h", "parse", text="int parse(const char *s);", language="c")
    body = chunk("src/x.c", "parse", text="int parse(const char *s) {\n return 0;\n}", language="c")
    assert is_declaration(proto) and not is_declaration(body)


def test_one_file_does_not_fill_the_page() -> None:
    same = [(chunk("src/big.py", f"f{i}", line=i * 10), 1.0 - i * 0.001) for i in range(8)]
    other = (chunk("src/other.py", "g"), 0.95)
    out = ranker().rank(fused(*same, other), understand("do the thing"), frozenset())
    assert ranked_paths(out)[:3].count("src/big.py") <= 2
    assert "src/other.py" in ranked_paths(out)[:3]


def test_a_file_with_several_good_chunks_lifts_its_best_past_a_near_tie() -> None:
    lone = chunk("src/lone.py", "helper")
    pair = [chunk("src/pair.py", "render", line=1), chunk("src/pair.py", "draw", line=20)]
    cands = [
        Candidate(lone, 1.0, (Source.BM25, Source.SEMANTIC), (1, 3)),
        Candidate(pair[0], 0.98, (Source.BM25, Source.SEMANTIC), (2, 1)),
        Candidate(pair[1], 0.97, (Source.BM25, Source.SEMANTIC), (3, 2)),
    ]
    out = ranker().rank(cands, understand("draw the bar"), frozenset())
    assert ranked_paths(out)[0] == "src/pair.py"  # the sources disagree: coherence decides


def test_coherence_never_lifts_a_chunk_past_the_one_every_source_put_first() -> None:
    # The workspace of the VS Code test: AuthService first in grep, BM25 and vectors;
    # web/client.js has two chunks that mention "user" (ranks 2 and 3 everywhere).
    auth = chunk("app/auth.py", "AuthService")
    client = [chunk("web/client.js", "formatName", line=12), chunk("web/client.js", "ApiClient", line=1)]
    every = (Source.GREP, Source.BM25, Source.SEMANTIC)
    cands = [
        Candidate(auth, 1.0, every, (1, 1, 1)),
        Candidate(client[0], 0.975, every, (2, 2, 3)),
        Candidate(client[1], 0.96, every, (3, 3, 4)),
    ]
    out = ranker().rank(cands, understand("how do we check a user's password"), frozenset())
    assert [c.chunk.symbol for c in out][:2] == ["AuthService", "formatName"]
    assert out[1].score > 0.975  # it still gained, up to just below AuthService


def test_scores_lie_in_zero_one_best_first() -> None:
    cands = fused((chunk("src/a.py", "A"), 0.9), (chunk("src/b.py", "B"), 0.5))
    table = [(cands[1].chunk, "B")]
    out = ranker(table).rank(cands, understand("B"), frozenset())
    scores = [c.score for c in out]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores) and scores[0] == 1.0


def test_file_level_ranking_adds_evidence_from_a_files_other_chunks() -> None:
    a = chunk("src/a.py", "one", line=1)
    b = chunks_b = [chunk("src/b.py", f"f{i}", line=i * 10) for i in range(3)]
    scores = {a.id: 1.0, **{c.id: 0.8 for c in chunks_b}}
    table = {c.id: c for c in [a, *b]}
    order = rank_files(scores, table)
    assert [table[cid].path for cid, _ in order] == ["src/b.py", "src/a.py"]


@pytest.mark.parametrize(
    "query", ["HTTPAdapter", "Sinatra::Base", "Store.write_files", "where is parse_args defined", "session"]
)
def test_the_names_a_search_looks_up_before_ranking_are_the_ones_the_stage_asks_for(query: str) -> None:
    # hybrid asks the symbol table for definition_lookup(intent) while its sources run,
    # and hands that answer to the stage: it must be what the stage would have asked.
    asked: list[list[str]] = []

    def lookup(names: Sequence[str]) -> list[Symbol]:
        asked.append(list(names))
        return []

    intent = understand(query)
    Ranker(lookup, lambda ids: {}).rank(fused((chunk("src/a.py", "f"), 1.0)), intent, frozenset())
    assert asked == ([definition_lookup(intent)] if definition_lookup(intent) else [])


# ----- the file-reference prior -----------------------------------------------------


def test_a_file_other_files_use_goes_before_a_sibling_holding_the_same_words() -> None:
    used = chunk("src/strutil.py", "glue")
    sibling = chunk("src/texts.py", "stitch")
    cands = fused((sibling, 1.0), (used, 0.99))
    query = understand("combine several pieces")
    plain = ranker().rank(cands, query, frozenset())
    assert ranked_paths(plain) == ["src/texts.py", "src/strutil.py"]
    counts = {"src/strutil.py": 12}
    out = Ranker(ranker().lookup, ranker().load, references=lambda: counts).rank(cands, query, frozenset())
    assert ranked_paths(out) == ["src/strutil.py", "src/texts.py"]


def test_files_no_other_file_names_keep_their_order() -> None:
    cands = fused((chunk("src/a.py", "a"), 1.0), (chunk("src/b.py", "b"), 0.9))
    out = Ranker(ranker().lookup, ranker().load, references=dict).rank(cands, understand("a b"), frozenset())
    assert [c.score for c in out] == [1.0, 0.9]


def test_reference_counts_are_other_files_naming_what_a_file_defines() -> None:
    # a.py defines Foo and Bar; b.py and c.py name Foo, b.py names Bar twice, a.py
    # names its own Foo (not counted); `get` is defined in four files (it says nothing
    # about which one another file uses); an edge may reach no name at all.
    names = pa.array(["Foo", "Bar", "get", "get", "get", "get", "Baz"])
    def_paths = pa.array(["a.py", "a.py", "a.py", "b.py", "c.py", "d.py", "d.py"])
    edge_paths = pa.array(["b.py", "c.py", "a.py", "b.py", "b.py", "e.py", "e.py", "d.py"])
    edge_names = pa.array(["Foo", "Foo", "Foo", "Bar", "Bar", "get", None, "Baz"])
    assert count_references(names, def_paths, edge_paths, edge_names) == {"a.py": 2}
    assert (
        count_references(pa.array([], pa.string()), pa.array([], pa.string()), edge_paths, edge_names) == {}
    )


def test_only_a_used_files_best_chunk_gains() -> None:
    best, other, elsewhere = (
        chunk("src/a.py", "f", line=1),
        chunk("src/a.py", "g", line=20),
        chunk("src/b.py", "h"),
    )
    scores = {best.id: 1.0, other.id: 0.5, elsewhere.id: 0.6}
    boost_referenced_files(scores, {c.id: c for c in (best, other, elsewhere)}, {"src/a.py": 20})
    assert scores[best.id] > 1.0 and scores[other.id] == 0.5 and scores[elsewhere.id] == 0.6


def test_a_call_through_a_receiver_is_not_counted_as_naming_a_definition() -> None:
    # `text.lower()` as written names any type's `lower`: not a use of util.py's
    edges = pa.table(
        {
            "path": ["a.py", "b.py", "c.py", "d.py"],
            "last_name": ["lower", "lower", "Util", "lower"],
            "to_name": ["text.lower", "lower", "Util", "lower"],
            "kind": ["call", "call", "inherit", "import"],
        }
    )
    assert named_edges(edges).column("path").to_pylist() == ["b.py", "c.py", "d.py"]


def test_adjacent_query_words_written_as_one_identifier_lift_the_chunk_more_when_it_names_it() -> None:
    query = understand("how the root window is set up at startup")  # pairs: root window, window set
    chunks = {
        "apart": chunk("x/a.hs", "setup", text="setup root = do window <- create"),
        "uses": chunk("x/b.hs", "startup", text="startup = do rootWindow <- openDisplay"),
        "names": chunk("x/c.hs", "initRootWindow", text="initRootWindow d = root_window d"),
    }
    scores = dict.fromkeys(chunks, 1.0)
    boost_compound_names(scores, chunks, query, 1.0)
    assert scores["apart"] == 1.0  # both words, not as one name: word coverage's business
    assert scores["uses"] == pytest.approx(1.0 + COMPOUND_BOOST * 1 / 2)  # one of the 2 pairs
    assert scores["names"] == pytest.approx(1.0 + COMPOUND_BOOST * 2 / 2)  # in the text and in its name
    before = dict.fromkeys(chunks, 1.0)
    boost_compound_names(before, chunks, understand("RootWindow"), 1.0)  # a symbol query: off
    assert before == dict.fromkeys(chunks, 1.0)


def test_adjacent_query_words_cut_to_three_letters_as_code_abbreviates_them_count_as_one_identifier() -> None:
    # click: "how are environment variables read for options" is answered by
    # `Option.value_from_envvar`, whose code says `envvar`, never "environment".
    query = understand("how are environment variables read for options")
    chunks = {
        "envvar": chunk("core.py", "Option.value_from_envvar", text="rv = self.resolve_envvar_value(ctx)"),
        "env_var": chunk("util.py", "load", text="value = os.environ[env_var]"),
        "env": chunk("testing.py", "CliRunner.make_env", text="rv = dict(self.env)"),
    }
    scores = dict.fromkeys(chunks, 1.0)
    boost_compound_names(scores, chunks, query, 1.0)
    pairs = 3  # environment variables, variables read, read options
    assert scores["envvar"] == pytest.approx(1.0 + COMPOUND_BOOST * 2 / pairs)  # text and name
    assert scores["env_var"] == pytest.approx(1.0 + COMPOUND_BOOST * 1 / pairs)
    assert scores["env"] == 1.0  # one word's letters are not the pair
