"""A real ``codesift mcp`` process driven by the mcp SDK's own client over stdio.

One indexed workspace per module; each test starts its own server process with
the options it needs.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_workspace
from codesift.server.mcp import TOOL_NAMES

from ..conftest import SAMPLE_FILES, write_workspace

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

SERVER = [sys.executable, "-m", "codesift.server.cli", "mcp"]
SUMMARY = re.compile(
    r"^\[(\w+)\] (\d+) (chunks?|passages?|symbols?|callers?|implementations?|findings?) "
    r"from (\d+) unique files?, ([\d,]+) characters? "
    r"\(budget ([\d,]+)\)"
)
BIG_LINES = 400  # big.txt: over the budget of a small server, under max_file_bytes
HELPER_CALLERS = 60  # app/many.py: callers of helper(), far over a small budget

# A workspace for the reference graph: a base class and two subclasses, compute_total called from
# two files (and invoice, one of them, from a third), an unresolvable call, a much-called helper.
GRAPH_FILES: dict[str, str] = {
    "app/__init__.py": "",
    "app/shapes.py": '''
        """Shapes and their areas."""


        class Shape:
            """A plane figure."""

            def area(self):
                raise NotImplementedError


        class Circle(Shape):
            def __init__(self, r):
                self.r = r

            def area(self):
                return 3.14159 * self.r * self.r


        class Square(Shape):
            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side * self.side


        def measure(thing):
            return thing.area()
        ''',
    "app/totals.py": """
        def compute_total(values):
            return sum(values)


        def report(values):
            return f"total {compute_total(values)}"
        """,
    "app/billing.py": """
        from app.totals import compute_total


        def invoice(lines):
            total = compute_total(lines)
            return {"total": total}
        """,
    "app/shop.py": """
        from app.billing import invoice


        def checkout(cart):
            return invoice(cart)
        """,
    "app/many.py": "def helper(x):\n    return x + 1\n"
    + "".join(f"\n\ndef use_{i}(x):\n    return helper(x) * {i}\n" for i in range(HELPER_CALLERS)),
}


class Answer:
    """One tool answer: its text and whether the server flagged it as an error."""

    def __init__(self, text: str, is_error: bool) -> None:
        self.text = text
        self.is_error = is_error

    @property
    def first(self) -> str:
        return self.text.split("\n", 1)[0]

    def summary(self) -> tuple[str, int, int, int]:
        """(tool, results, unique files, characters) from the first line, checked against the text."""
        m = SUMMARY.match(self.first)
        assert m, self.first
        chars = int(m.group(5).replace(",", ""))
        assert chars == len(self.text), (chars, len(self.text))
        return m.group(1), int(m.group(2)), int(m.group(4)), chars

    def cited(self) -> list[str]:
        """``path:start-end`` of every result, in order."""
        return re.findall(r"^(?:--- \d+\. |\s*)(\S+:\d+-\d+)  ", self.text, re.MULTILINE)


class Client:
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, tool: str, **args: object) -> Answer:
        res = await self.session.call_tool(tool, args)
        assert len(res.content) == 1
        block = res.content[0]
        assert block.type == "text"
        answer = Answer(block.text, bool(res.is_error))
        assert answer.text.startswith("[ERROR:") == answer.is_error, answer.text
        return answer


@asynccontextmanager
async def mcp_client(*args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            yield Client(s)


@pytest.fixture(scope="module")
def xdg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The module's index is built before the per-test XDG fixture runs: isolate it too."""
    with pytest.MonkeyPatch.context() as mp:
        base = tmp_path_factory.mktemp("xdg-module")
        for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            mp.setenv(name, str(base / name.lower()))
        yield


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory, xdg: None) -> dict[str, Path]:
    """An indexed workspace (with binary, big and symlinked files), an extra root, an outside folder."""
    base = tmp_path_factory.mktemp("mcp")
    files = dict(SAMPLE_FILES)
    files[".codesift.toml"] = "[index]\nmax_file_bytes = 16384\n"
    files["docs/big.txt"] = "".join(f"line {n} of a long text file\n" for n in range(1, BIG_LINES + 1))
    ws = write_workspace(base / "ws", files)
    (ws / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (ws / "huge.txt").write_text("x" * 20_000 + "\n", encoding="utf-8")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (ws / "escape.txt").symlink_to(outside / "secret.txt")
    extra = base / "extra"
    extra.mkdir()
    (extra / "notes.md").write_text("# extra notes\n", encoding="utf-8")
    index_workspace(ws, load_settings(ws))
    text_only = write_workspace(base / "text-only")
    index_workspace(text_only, load_settings(text_only), embed=False)
    unindexed = write_workspace(base / "unindexed")
    graph = write_workspace(base / "graph", GRAPH_FILES)
    index_workspace(graph, load_settings(graph))
    return {
        "ws": ws,
        "outside": outside,
        "extra": extra,
        "text_only": text_only,
        "unindexed": unindexed,
        "graph": graph,
    }


async def test_tools_are_listed_with_documented_arguments_and_defaults(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        tools = {t.name: t for t in (await c.session.list_tools()).tools}
    assert list(tools) == list(TOOL_NAMES)
    assert {"find_callers", "find_implementations", "code_research"} <= set(tools)
    for tool in tools.values():
        assert tool.description and "20,000 characters" in tool.description
        assert tool.annotations is not None and tool.annotations.read_only_hint
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
    hybrid = tools["hybrid_search"].input_schema
    assert hybrid["required"] == ["semantic_query"]
    assert {"exact_keywords", "limit", "offset", "include", "exclude", "languages", "kinds"} <= set(
        hybrid["properties"]
    )
    assert "10" in hybrid["properties"]["limit"]["description"]
    assert hybrid["properties"]["offset"]["default"] == 0
    kinds = hybrid["properties"]["kinds"]["anyOf"][0]["items"]["enum"]
    assert set(kinds) == {"function", "method", "class", "block", "window"}
    assert tools["grep_search"].input_schema["properties"]["regex"]["default"] is False
    assert hybrid["properties"]["hops"]["default"] == 0
    callers = tools["find_callers"].input_schema
    assert callers["required"] == ["name"]
    assert callers["properties"]["depth"]["default"] == 1
    assert callers["properties"]["include_unresolved"]["default"] is False
    assert tools["find_implementations"].input_schema["required"] == ["name"]
    assert tools["code_research"].input_schema["required"] == ["question"]


async def test_hybrid_search_cites_paths_and_summarises(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        a = await c.call(
            "hybrid_search",
            semantic_query="check a user's password against the stored hash",
            exact_keywords="validateCredentials",
        )
        tool, chunks, files, _ = a.summary()
        assert (tool, a.is_error) == ("hybrid_search", False)
        assert 1 <= chunks <= 10 and files >= 1
        assert a.cited()[0].startswith("app/auth.py:")
        assert len(a.cited()) == chunks and len({c.split(":")[0] for c in a.cited()}) == files
        assert "validateCredentials" in a.text

        only_js = await c.call(
            "hybrid_search", semantic_query="fetch a user", include=["web/**"], languages=["javascript"]
        )
        assert only_js.cited() and all(p.startswith("web/client.js:") for p in only_js.cited())
        functions = await c.call("hybrid_search", semantic_query="user", kinds=["function"])
        assert functions.cited() and "class ApiClient" not in functions.text


async def test_search_pages_with_limit_and_offset(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        first = await c.call("hybrid_search", semantic_query="user login credentials", limit=2)
        assert first.summary()[1] == 2
        more = re.search(
            r"^\[MORE\] (?:at least )?(\d+) more chunks?: call hybrid_search again with offset=2",
            first.text,
            re.M,
        )
        assert more
        second = await c.call("hybrid_search", semantic_query="user login credentials", limit=2, offset=2)
        assert second.first.endswith(f"results 3-{2 + min(2, int(more.group(1)))}")
        assert not set(first.cited()) & set(second.cited())
        last = await c.call("hybrid_search", semantic_query="user login credentials", limit=100)
        assert last.text.rstrip().endswith("[END] no more chunks.")


async def test_vector_search_finds_by_meaning(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        a = await c.call("vector_search", query="retry failed uploads with exponential backoff")
        assert a.summary()[0] == "vector_search"
        assert a.cited()[0].startswith("app/upload.py:4-")
        assert "(semantic)" in a.text


async def test_an_empty_or_blank_query_returns_no_results_and_no_error(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        for query in ("", "   "):
            hybrid = await c.call("hybrid_search", semantic_query=query)
            vector = await c.call("vector_search", query=query)
            for a in (hybrid, vector):
                assert not a.is_error and a.summary()[1] == 0, a.text


async def test_grep_search_passages_and_errors(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        a = await c.call("grep_search", pattern="retry_upload")
        assert a.summary()[1:3] == (1, 1)
        assert a.cited() == ["app/upload.py:1-11"]
        assert re.search(r"^\s+4: def retry_upload", a.text, re.M)  # match line marked
        assert re.search(r"^\s+5- ", a.text, re.M)  # context line

        rx = await c.call("grep_search", pattern=r"def \w+\(self", regex=True, languages=["python"])
        assert rx.cited() and all(p.startswith("app/auth.py") for p in rx.cited())

        none = await c.call("grep_search", pattern="no_such_identifier_anywhere")
        assert not none.is_error and none.summary()[1] == 0
        assert "[NOTE] no match for 'no_such_identifier_anywhere'" in none.text

        bad = await c.call("grep_search", pattern="(", regex=True)
        assert bad.first.startswith("[ERROR: INVALID_ARGUMENT]")


async def test_grep_search_pages_past_a_thousand_passages_and_answers_alike_each_time(
    tmp_path: Path,
) -> None:
    root = tmp_path / "many"
    for f in range(1_300):  # 1,300 files with one match each: 1,300 passages
        (root / f"d{f % 13}").mkdir(parents=True, exist_ok=True)
        (root / f"d{f % 13}" / f"m{f:04}.txt").write_text(f"line one\nneedle {f}\nline three\n")
    for f in range(6):  # 12,000 passages (matches 25 lines apart): past the engine's default cut of 10,000
        lines = (f"haystack {n}\n" if n % 25 == 0 else "-\n" for n in range(50_000))
        (root / f"big{f}.txt").write_text("".join(lines))
    async with mcp_client("--root", str(root)) as c:
        page = await c.call("grep_search", pattern="needle", context=0, limit=50, offset=1_200)
        assert not page.is_error, page.first
        assert len(page.cited()) == 50 and page.summary()[1] == 50
        assert "offset=1250" in page.text
        last = await c.call("grep_search", pattern="needle", context=0, limit=50, offset=1_250)
        assert len(last.cited()) == 50 and "[END]" in last.text
        one = await c.call("grep_search", pattern="haystack", context=0, limit=5, offset=11_000)
        two = await c.call("grep_search", pattern="haystack", context=0, limit=5, offset=11_000)
        assert one.text == two.text and len(one.cited()) == 5, one.text[:500]
        assert "12,000 passages in 6 files in all" in one.text


async def test_symbol_search_lists_definitions(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        a = await c.call("symbol_search", name="AuthService")
        assert a.summary()[0] == "symbol_search"
        assert a.cited()[0].startswith("app/auth.py:") and "class AuthService  (exact match)" in a.text
        assert "method AuthService.login" in a.text  # a class brings its members
        methods = await c.call("symbol_search", name="AuthService", kinds=["method"])
        assert "class AuthService" not in methods.text and "AuthService.login" in methods.text
        none = await c.call("symbol_search", name="zzzNothingLikeThis")
        assert not none.is_error and "[NOTE] no symbol matches" in none.text
        bad = await c.call("symbol_search", name="x", kinds=["gadget"])
        assert bad.first.startswith("[ERROR: INVALID_ARGUMENT] unknown symbol kind 'gadget'")


async def test_read_file_text_ranges_and_allowed_roots(places: dict[str, Path]) -> None:
    ws, extra = places["ws"], places["extra"]
    async with mcp_client("--root", str(ws), "--allow-root", str(extra)) as c:
        a = await c.call("read_file", path="app/config.py")
        head, body = a.text.split("\n", 1)
        assert head.startswith("[read_file] app/config.py: lines 1-10 of 10")
        assert body == (ws / "app" / "config.py").read_text(encoding="utf-8")
        part = await c.call("read_file", path=str(ws / "app" / "auth.py"), start_line=6, end_line=7)
        assert (
            part.text.split("\n", 1)[1]
            == 'class AuthService:\n    """Checks users against the password store."""\n'
        )
        notes = await c.call("read_file", path=str(extra / "notes.md"))
        assert notes.text.endswith("# extra notes\n") and not notes.is_error


READ_ERRORS = {
    "app/missing.py": "NOT_FOUND",
    "../outside/secret.txt": "ACCESS_DENIED",
    "app/../../outside/secret.txt": "ACCESS_DENIED",
    "%2e%2e/outside/secret.txt": "ACCESS_DENIED",
    "/etc/passwd": "ACCESS_DENIED",
    "file:///etc/passwd": "ACCESS_DENIED",
    "escape.txt": "ACCESS_DENIED",  # a symlink leaving the root
    "blob.bin": "BINARY_FILE",
    "huge.txt": "FILE_TOO_LARGE",
    "app": "NOT_A_FILE",
}


async def test_read_file_errors(places: dict[str, Path]) -> None:
    ws = places["ws"]
    async with mcp_client("--root", str(ws)) as c:
        for name, code in READ_ERRORS.items():
            a = await c.call("read_file", path=name)
            assert a.is_error and a.first.startswith(f"[ERROR: {code}] "), (name, a.text)
            if code == "ACCESS_DENIED":
                assert f"allowed roots: {os.path.realpath(ws)}" in a.text
            assert "secret\n" not in a.text


async def test_read_file_absolute_uri_outside_is_denied(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        for name in (str(places["outside"] / "secret.txt"), (places["outside"] / "secret.txt").as_uri()):
            a = await c.call("read_file", path=name)
            assert a.first.startswith("[ERROR: ACCESS_DENIED]"), a.text
        bad = await c.call("read_file", path="app/auth.py", start_line=500)
        assert bad.first.startswith("[ERROR: INVALID_RANGE]")


async def test_index_status_reports_the_index(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        a = await c.call("index_status")
    assert a.first.startswith("[index_status] 1 workspace root")
    assert re.search(r"files: \d+ indexed", a.text) and "(complete)" in a.text


async def test_missing_index_says_how_to_build_it(places: dict[str, Path]) -> None:
    root = places["unindexed"]
    async with mcp_client("--root", str(root)) as c:
        for tool, args in (
            ("hybrid_search", {"semantic_query": "login"}),
            ("vector_search", {"query": "login"}),
            ("symbol_search", {"name": "login"}),
            ("find_callers", {"name": "login"}),
            ("find_implementations", {"name": "AuthService"}),
            ("code_research", {"question": "what calls login"}),
            ("index_status", {}),
        ):
            a = await c.call(tool, **args)
            assert a.first.startswith("[ERROR: INDEX_MISSING]"), (tool, a.text)
            assert f"codesift index {root}" in a.text
        grep = await c.call("grep_search", pattern="retry_upload")  # grep needs no index
        assert not grep.is_error and grep.summary()[1] == 1


async def test_incomplete_index_is_said(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["text_only"])) as c:
        hybrid = await c.call("hybrid_search", semantic_query="retry uploads", exact_keywords="retry_upload")
        assert "[NOTE] index incomplete" in hybrid.text
        assert hybrid.cited()[0].startswith("app/upload.py:")  # BM25 and grep still answer
        vector = await c.call("vector_search", query="retry uploads")
        assert vector.summary()[1] == 0 and "[NOTE] index incomplete" in vector.text
        status = await c.call("index_status")
        assert "pending — index incomplete" in status.text


async def test_bad_arguments_are_explicit_errors(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["ws"])) as c:
        a = await c.call("hybrid_search", semantic_query="login", limit=0)
        assert a.first.startswith("[ERROR: INVALID_ARGUMENT] limit must be between 1 and 100")
        b = await c.call("hybrid_search", semantic_query="login", include=["["])
        assert b.first.startswith("[ERROR: INVALID_ARGUMENT]")
        e = await c.call("read_file", path="")
        assert e.first.startswith("[ERROR: INVALID_PATH]")


async def test_answers_fit_the_budget(places: dict[str, Path]) -> None:
    budget = 2_000
    async with mcp_client("--root", str(places["ws"]), "--budget", str(budget)) as c:
        hybrid = await c.call("hybrid_search", semantic_query="user login password", limit=10)
        _, shown, _, chars = hybrid.summary()
        assert chars <= budget and shown >= 1
        assert "did not fit the 2,000-character budget" in hybrid.text
        assert re.search(rf"offset={shown}\b", hybrid.text)

        grep = await c.call("grep_search", pattern="line", include=["docs/**"], context=0)
        _, passages, _, chars = grep.summary()
        assert chars <= budget and passages >= 1
        assert re.search(
            rf"\[MORE\] [\d,]+ more passages?: call grep_search again with offset={passages}", grep.text
        )

        big = await c.call("read_file", path="docs/big.txt")
        assert len(big.text) <= budget and not big.is_error
        m = re.search(r"\[MORE\] lines (\d+)-400 not shown .*start_line=(\d+)\)", big.text)
        assert m and m.group(1) == m.group(2)
        rest = await c.call("read_file", path="docs/big.txt", start_line=int(m.group(2)))
        assert rest.text.split("\n", 2)[1] == f"line {m.group(2)} of a long text file"


async def test_two_roots_cite_absolute_paths(places: dict[str, Path]) -> None:
    ws, text_only = places["ws"], places["text_only"]
    async with mcp_client("--root", str(ws), "--root", str(text_only)) as c:
        a = await c.call("grep_search", pattern="retry_upload")
        assert sorted(a.cited()) == sorted(
            f"{os.path.realpath(r)}/app/upload.py:1-11" for r in (ws, text_only)
        )
        s = await c.call("symbol_search", name="parse_config")
        assert all(p.startswith("/") for p in s.cited()) and len(s.cited()) == 2


async def test_a_project_filter_picks_roots_by_name_and_an_unknown_one_is_named(
    places: dict[str, Path],
) -> None:
    ws, text_only = places["ws"], places["text_only"]
    only = os.path.realpath(text_only)
    async with mcp_client("--root", str(ws), "--root", str(text_only)) as c:
        a = await c.call("grep_search", pattern="retry_upload", projects=["text-only"])
        assert a.cited() == [f"{only}/app/upload.py:1-11"]
        s = await c.call("symbol_search", name="parse_config", projects=["text-only"])
        assert len(s.cited()) == 1 and s.cited()[0].startswith(only)
        h = await c.call("hybrid_search", semantic_query="retry upload", projects=["text-only"])
        assert h.cited() and all(p.startswith(only) for p in h.cited())
        bad = await c.call("hybrid_search", semantic_query="retry upload", projects=["nope"])
        assert bad.first.startswith("[ERROR: INVALID_ARGUMENT] argument 'projects': no project named 'nope'")
        assert "text-only" in bad.first and "ws" in bad.first


async def test_find_callers_cites_call_sites(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["graph"])) as c:
        a = await c.call("find_callers", name="compute_total")
        assert a.summary()[:3] == ("find_callers", 2, 2)
        assert a.cited() == ["app/billing.py:4-6", "app/totals.py:5-6"]
        assert "function invoice  calls compute_total at line 5" in a.text
        assert re.search(r"^\s+5: total = compute_total\(lines\)$", a.text, re.M)  # the call site, quoted
        assert "UNRESOLVED" not in a.text and a.text.rstrip().endswith("[END] no more callers.")

        chain = await c.call("find_callers", name="compute_total", depth=2)
        assert chain.cited() == ["app/billing.py:4-6", "app/totals.py:5-6", "app/shop.py:4-5"]
        assert "function checkout  calls invoice at line 5 (depth 2)" in chain.text

        # thing.area() cannot be resolved: hidden by default, marked when asked for
        certain = await c.call("find_callers", name="Shape.area")
        assert certain.summary()[1] == 0 and not certain.is_error
        assert "[NOTE] 1 possible caller whose calls could not be resolved not shown" in certain.text
        possible = await c.call("find_callers", name="Shape.area", include_unresolved=True)
        assert possible.cited() == ["app/shapes.py:27-28"]
        assert (
            "function measure  calls Shape.area at line 28  UNRESOLVED: possible caller only" in possible.text
        )

        bad = await c.call("find_callers", name="compute_total", depth=0)
        assert bad.first.startswith("[ERROR: INVALID_ARGUMENT] depth must be between 1 and")


async def test_find_implementations_says_how(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["graph"])) as c:
        a = await c.call("find_implementations", name="Shape")
        assert a.summary()[:3] == ("find_implementations", 2, 1)
        assert a.cited() == ["app/shapes.py:11-16", "app/shapes.py:19-24"]
        assert "subclass: class Circle  of Shape" in a.text
        assert re.search(r"^\s+11: class Circle\(Shape\):$", a.text, re.M)
        overrides = await c.call("find_implementations", name="Shape.area")
        assert overrides.cited() == ["app/shapes.py:15-16", "app/shapes.py:23-24"]
        assert "override: method Circle.area  of Shape.area" in overrides.text
        leaf = await c.call("find_implementations", name="Circle")
        assert leaf.summary()[1] == 0 and "[NOTE] nothing in the index implements" in leaf.text


async def test_graph_tools_unknown_name_is_not_found(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["graph"])) as c:
        for tool in ("find_callers", "find_implementations"):
            a = await c.call(tool, name="comput_totl")
            assert a.first.startswith("[ERROR: NOT_FOUND] no definition named 'comput_totl'"), a.text
            assert "compute_total (app/totals.py:1)" in a.text  # the nearest name, to try next
        research = await c.call("code_research", question="what calls no_such_function")
        assert not research.is_error and "no definition named 'no_such_function'" in research.text


async def test_code_research_answers_markdown(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["graph"])) as c:
        a = await c.call("code_research", question="what calls compute_total?")
        assert a.summary()[:3] == ("code_research", 3, 3)  # depth 3: checkout comes through invoice
        assert "# Callers: compute_total" in a.text
        assert "- `invoice` — app/billing.py:4 (calls at line 5)" in a.text
        assert "  - `checkout` — app/shop.py:4" in a.text
        impls = await c.call("code_research", question="implementations of Shape")
        assert "- **subclass** `Circle` — app/shapes.py:11-16" in impls.text
        assert impls.text.rstrip().endswith("[END] no more lines.")


async def test_hybrid_search_hops_follow_the_graph(places: dict[str, Path]) -> None:
    async with mcp_client("--root", str(places["graph"])) as c:
        flat = await c.call("hybrid_search", semantic_query="checkout a cart", exact_keywords="checkout")
        assert "(graph)" not in flat.text
        hop = await c.call(
            "hybrid_search", semantic_query="checkout a cart", exact_keywords="checkout", hops=1
        )
        assert hop.cited()[0] == "app/shop.py:4-5"
        # invoice is a hit on its own (vectors) and the hop from checkout reaches it too
        assert re.search(
            r"app/billing\.py:4-6  function invoice .*\((?:\w+\+)*graph\)  via invoice", hop.text
        )
        bad = await c.call("hybrid_search", semantic_query="checkout", hops=9)
        assert bad.first.startswith("[ERROR: INVALID_ARGUMENT] hops must be between 0 and 3")


async def test_graph_answers_fit_the_budget(places: dict[str, Path]) -> None:
    budget = 2_000
    async with mcp_client("--root", str(places["graph"]), "--budget", str(budget)) as c:
        a = await c.call("find_callers", name="helper", limit=100)
        _, shown, _, chars = a.summary()
        assert chars <= budget and 1 <= shown < HELPER_CALLERS
        assert a.first.endswith(f"results 1-{shown} of {HELPER_CALLERS}")
        more = HELPER_CALLERS - shown
        assert re.search(
            rf"\[MORE\] {more} more callers: call find_callers again with offset={shown}\b", a.text
        )
        rest = await c.call("find_callers", name="helper", limit=100, offset=shown)
        assert rest.cited() and not set(a.cited()) & set(rest.cited())

        research = await c.call("code_research", question="callers of helper")
        assert len(research.text) <= budget and research.summary()[3] <= budget
        assert re.search(r"^\[MORE\] \d+ lines did not fit the 2,000-character budget", research.text, re.M)
