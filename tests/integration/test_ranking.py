"""The ranking stage end to end: a real index (LanceDB, tree-sitter, the bundled
model) of a generated workspace where tests, docs and examples use the same words
as the code that does the thing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.references import file_references
from codesift.indexer.search.results import Filters, MatchType, SearchRequest, SearchResult, Source
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import index_workspace, open_store

from ..conftest import write_workspace

pytestmark = pytest.mark.slow

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]

FILES: dict[str, str] = {
    "src/termui/progress.py": """
        import sys


        class ProgressBar:
            def __init__(self, length, width=30):
                self.length = length
                self.width = width
                self.pos = 0

            def render_progress(self):
                filled = int(self.width * self.pos / max(self.length, 1))
                line = "[" + "#" * filled + "-" * (self.width - filled) + "]"
                sys.stdout.write("\\r" + line)
                sys.stdout.flush()

            def update(self, steps):
                self.pos += steps
                self.render_progress()
        """,
    "tests/test_progress.py": """
        from termui.progress import ProgressBar


        def test_progress_bar_is_rendered(capsys):
            bar = ProgressBar(10)
            bar.update(5)
            assert "#####" in capsys.readouterr().out  # the progress bar is rendered


        def test_progress_bar_renders_full_width(capsys):
            bar = ProgressBar(4, width=4)
            bar.update(4)
            assert "[####]" in capsys.readouterr().out
        """,
    "docs/progress.md": """
        # The progress bar

        How is the progress bar rendered? The progress bar is rendered on one line
        and redrawn in place each time it is updated.
        """,
    "examples/progress_demo.py": '''
        from termui.progress import ProgressBar


        def main():
            """Show how the progress bar is rendered while work goes on."""
            bar = ProgressBar(100)
            for _ in range(100):
                bar.update(1)
        ''',
    "src/core.py": '''
        import typing


        @typing.overload
        def main(args: None = None) -> None: ...


        @typing.overload
        def main(args: list[str]) -> int: ...


        def main(args=None):
            """Parse the arguments, invoke the callback and exit."""
            return invoke(args or [])


        def invoke(args):
            return len(args)
        ''',
    "src/auth.py": '''
        from .checks import validateCredentials


        def login(user, password):
            """Log a user in."""
            if not validateCredentials(user, password):
                raise PermissionError("denied")
            return user
        ''',
    "src/checks.py": '''
        import hashlib

        STORE = {}


        def validateCredentials(user, password):
            """Compare the password's hash with the stored hash for this user."""
            digest = hashlib.sha256(password.encode()).hexdigest()
            return STORE.get(user) == digest
        ''',
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings().embed)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    ws = write_workspace(tmp_path_factory.mktemp("ranking") / "ws", FILES)
    index_workspace(ws, load_settings(ws), embedder=embedder)
    return ws


def run(root: Path, embedder: Embedder, request: SearchRequest, **search_settings: object) -> SearchResult:
    settings = load_settings(root, overrides={"search": search_settings} if search_settings else None)
    return search(open_store(root, settings), request, settings, root=root, embedder=embedder)


def test_search_answers_with_the_implementing_code_before_tests_docs_and_examples(
    root: Path, embedder: Embedder
) -> None:
    res = run(root, embedder, SearchRequest("how is the progress bar rendered"))
    top = res.hits[0].chunk
    assert top.path == "src/termui/progress.py" and "def render_progress" in top.text
    assert "rank" in res.report.millis  # the stage's own cost is reported


def test_a_query_asking_for_tests_gets_the_tests(root: Path, embedder: Embedder) -> None:
    res = run(root, embedder, SearchRequest("test that the progress bar is rendered"))
    assert res.hits[0].chunk.path == "tests/test_progress.py"


def test_an_include_filter_under_tests_turns_the_test_prior_off(root: Path, embedder: Embedder) -> None:
    res = run(root, embedder, SearchRequest("progress bar rendered", filters=Filters(include=("tests/**",))))
    assert res.hits and all(h.chunk.path.startswith("tests/") for h in res.hits)


def test_a_symbol_query_finds_its_definition_first(root: Path, embedder: Embedder) -> None:
    res = run(root, embedder, SearchRequest("ProgressBar"))
    top = res.hits[0]
    assert top.chunk.path == "src/termui/progress.py" and top.chunk.symbol.startswith("ProgressBar")
    assert Source.SYMBOL in top.sources


def test_overload_stubs_fold_into_the_definition(root: Path, embedder: Embedder) -> None:
    res = run(root, embedder, SearchRequest("main()"))
    mains = [h for h in res.hits if h.chunk.path == "src/core.py" and h.chunk.symbol == "main"]
    assert len(mains) == 1 and "invoke the callback" in mains[0].chunk.text
    assert res.hits[0] is mains[0]


def test_scores_do_not_change_with_the_limit(root: Path, embedder: Embedder) -> None:
    few = run(root, embedder, SearchRequest("check the password of a user", limit=3))
    many = run(root, embedder, SearchRequest("check the password of a user", limit=20))
    assert [(h.chunk.id, h.score) for h in few.hits] == [(h.chunk.id, h.score) for h in many.hits[:3]]


def test_rank_rrf_gives_the_bare_fusion(root: Path, embedder: Embedder) -> None:
    bare = run(root, embedder, SearchRequest("how is the progress bar rendered"), rank="rrf")
    assert "rank" not in bare.report.millis
    assert all(Source.SYMBOL not in h.sources for h in bare.hits)
    ranked = run(root, embedder, SearchRequest("how is the progress bar rendered"))
    assert [h.chunk.id for h in bare.hits] != [h.chunk.id for h in ranked.hits]


def test_group_by_file_answers_each_file_once(root: Path, embedder: Embedder) -> None:
    res = run(root, embedder, SearchRequest("progress bar", group_by="file"))
    paths = [h.chunk.path for h in res.hits]
    assert len(paths) == len(set(paths)) >= 3
    assert paths[0] == "src/termui/progress.py"


def test_multihop_neighbours_are_scored_against_the_query(root: Path, embedder: Embedder) -> None:
    # S3: login is a hit; with --hops the credential check it calls joins the page,
    # scored by its own match to the query, not half of login's score.
    query = "log the user in and compare the password hash"
    res = run(
        root, embedder, SearchRequest(query, limit=3, hops=2, filters=Filters(include=("src/auth.py",)))
    )
    assert [h.chunk.symbol for h in res.hits if h.match_type is MatchType.MULTI_HOP] == []  # filtered out
    res = run(
        root, embedder, SearchRequest(query, limit=2, hops=2, filters=Filters(exclude=("src/checks.py",)))
    )
    assert all(h.chunk.path != "src/checks.py" for h in res.hits)
    seeds = run(root, embedder, SearchRequest("log a user in", limit=1))
    assert seeds.hits[0].chunk.symbol == "login"
    hops = run(root, embedder, SearchRequest("log a user in and check the password hash", limit=2, hops=2))
    symbols = [h.chunk.symbol for h in hops.hits]
    assert "validateCredentials" in symbols


def test_cli_files_prints_one_line_per_file(root: Path) -> None:
    out = subprocess.run(
        [*CODESIFT, "search", "progress bar", "--files", "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    hits = json.loads(out.stdout)["hits"]
    paths = [h["path"] for h in hits]
    assert len(paths) == len(set(paths)) and paths[0] == "src/termui/progress.py"


def test_reference_counts_come_from_the_index_and_follow_its_writes(root: Path, embedder: Embedder) -> None:
    store = open_store(root, load_settings(root))
    counts = file_references(store)
    # ProgressBar is imported and called by the test and by the example;
    # validateCredentials by auth.py; nothing names what a test file defines
    assert counts["src/termui/progress.py"] == 2
    assert counts["src/checks.py"] == 1
    assert "tests/test_progress.py" not in counts
    assert file_references(store) is counts  # remembered until the next write


def test_a_new_file_naming_a_definition_raises_its_files_count(tmp_path: Path, embedder: Embedder) -> None:
    ws = write_workspace(tmp_path / "ws", {k: FILES[k] for k in ("src/auth.py", "src/checks.py")})
    settings = load_settings(ws)
    index_workspace(ws, settings, embedder=embedder)
    store = open_store(ws, settings)
    assert file_references(store) == {"src/checks.py": 1}
    (ws / "src/admin.py").write_text(
        "from .checks import validateCredentials\n\n\ndef sudo(user, pw):\n"
        "    return validateCredentials(user, pw)\n",
        encoding="utf-8",
    )
    index_workspace(ws, settings, embedder=embedder)
    assert file_references(store) == {"src/checks.py": 2}


def test_the_servers_writer_counts_references_after_a_save(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesift.indexer.search import references
    from codesift.server.projects import Embedders, Project

    ws = write_workspace(tmp_path / "ws", {k: FILES[k] for k in ("src/auth.py", "src/checks.py")})
    index_workspace(ws, load_settings(ws), embedder=embedder)
    project = Project(ws, load_settings(ws), Embedders())
    try:
        (ws / "src/admin.py").write_text(
            "from .checks import validateCredentials\n\n\ndef sudo(user, pw):\n"
            "    return validateCredentials(user, pw)\n",
            encoding="utf-8",
        )
        project.writer._paths(["src/admin.py"])

        def counted_again(store: object) -> dict[str, int]:
            raise AssertionError("the next search counted again")

        monkeypatch.setattr(references, "_count", counted_again)
        assert file_references(project.store()) == {"src/checks.py": 2}  # counted by the writer
    finally:
        project.close()
