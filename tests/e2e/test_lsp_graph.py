"""Call hierarchy, implementations, references and research over the reference graph, end to end:
a real server process, a pytest-lsp client, a generated Python + Go workspace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from ..conftest import resident_kib, write_workspace
from .conftest import indexed, initialize, start_client, wait_for

pytestmark = pytest.mark.slow

FILES = {
    "shapes/__init__.py": "",
    "shapes/base.py": '''
        """Shapes."""


        class Shape:
            def area(self):
                return 0

            def describe(self):
                return f"area {self.area()}"


        class Square(Shape):
            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side * self.side
        ''',
    "shapes/util.py": """
        def total(values):
            return sum(values)


        def scaled(values, factor):
            return [v * factor for v in values]
        """,
    "shapes/report.py": """
        from shapes.base import Square
        from shapes.util import scaled
        from shapes.util import total as add_up


        def summary(shapes):
            areas = [s.area() for s in shapes]
            return add_up(areas)


        def report(sides):
            squares = [Square(s) for s in sides]
            note, big = "😀", scaled(sides, 2)
            return summary(squares) + add_up(big)
        """,
    "geo/geo.go": """
        package geo

        type Measurer interface {
        \tMeasure() float64
        }

        type Line struct {
        \tLength float64
        }

        func (l Line) Measure() float64 {
        \treturn l.Length
        }
        """,
}


@pytest.fixture
def gws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "gws", FILES)


@pytest_asyncio.fixture
async def graph_client(gws: Path) -> AsyncIterator[LanguageClient]:
    c = await start_client()
    c.init_result = await initialize(c, gws)  # type: ignore[attr-defined]
    await indexed(c)
    yield c
    await c.shutdown_session()
    await c.stop()


def lines_of(ws: Path, rel: str) -> list[str]:
    return (ws / rel).read_text(encoding="utf-8").split("\n")


def at(ws: Path, rel: str, line: int, word: str, nth: int = 0) -> lsp.Position:
    """The 0-based position of the ``nth`` ``word`` on 0-based ``line``, in UTF-16 units."""
    text = lines_of(ws, rel)[line]
    col = -1
    for _ in range(nth + 1):
        col = text.index(word, col + 1)
    return lsp.Position(line=line, character=len(text[:col].encode("utf-16-le")) // 2)


def span(ws: Path, rel: str, line: int, word: str, nth: int = 0) -> lsp.Range:
    start = at(ws, rel, line, word, nth)
    return lsp.Range(start=start, end=lsp.Position(line=line, character=start.character + len(word)))


def doc(ws: Path, rel: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=(ws / rel).as_uri())


async def prepare(client: LanguageClient, ws: Path, rel: str, pos: lsp.Position) -> lsp.CallHierarchyItem:
    items = await client.text_document_prepare_call_hierarchy_async(
        lsp.CallHierarchyPrepareParams(text_document=doc(ws, rel), position=pos)
    )
    assert items is not None and len(items) == 1
    return items[0]


@pytest.mark.asyncio
async def test_initialize_advertises_call_hierarchy_implementation_and_references(
    graph_client: LanguageClient,
) -> None:
    caps = graph_client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.call_hierarchy_provider
    assert caps.implementation_provider
    assert caps.references_provider
    assert caps.execute_command_provider is not None
    assert "codesift.research" in caps.execute_command_provider.commands


@pytest.mark.asyncio
async def test_incoming_calls_list_both_callers_with_call_sites_through_an_aliased_import(
    graph_client: LanguageClient, gws: Path
) -> None:
    item = await prepare(graph_client, gws, "shapes/util.py", at(gws, "shapes/util.py", 0, "total"))
    assert item.name == "total" and item.kind == lsp.SymbolKind.Function
    assert item.selection_range == span(gws, "shapes/util.py", 0, "total")
    calls = await graph_client.call_hierarchy_incoming_calls_async(
        lsp.CallHierarchyIncomingCallsParams(item=item)
    )
    assert calls is not None
    by_name = {c.from_.name: c for c in calls}
    assert set(by_name) == {"summary", "report"}
    report_uri = (gws / "shapes/report.py").as_uri()
    assert all(c.from_.uri == report_uri for c in calls)
    assert list(by_name["summary"].from_ranges) == [span(gws, "shapes/report.py", 7, "add_up")]
    assert list(by_name["report"].from_ranges) == [span(gws, "shapes/report.py", 13, "add_up")]


@pytest.mark.asyncio
async def test_prepare_call_hierarchy_on_a_call_site_means_the_called_function(
    graph_client: LanguageClient, gws: Path
) -> None:
    item = await prepare(graph_client, gws, "shapes/report.py", at(gws, "shapes/report.py", 13, "add_up"))
    assert item.name == "total" and item.uri == (gws / "shapes/util.py").as_uri()


@pytest.mark.asyncio
async def test_outgoing_calls_list_only_resolved_callees_with_call_sites(
    graph_client: LanguageClient, gws: Path
) -> None:
    rel = "shapes/report.py"
    report = await prepare(graph_client, gws, rel, at(gws, rel, 10, "report"))
    calls = await graph_client.call_hierarchy_outgoing_calls_async(
        lsp.CallHierarchyOutgoingCallsParams(item=report)
    )
    assert calls is not None
    assert [c.to.name for c in calls] == ["Square", "scaled", "summary", "total"]
    ranges = {c.to.name: list(c.from_ranges) for c in calls}
    # After the emoji (two UTF-16 code units): the range is in the client's units.
    assert ranges["scaled"] == [span(gws, rel, 12, "scaled")]
    assert ranges["scaled"][0].start.character == lines_of(gws, rel)[12].index("scaled") + 1
    assert ranges["total"] == [span(gws, rel, 13, "add_up")]
    # `s.area()` on an unknown receiver stays unresolved: not listed as a call.
    summary = await prepare(graph_client, gws, rel, at(gws, rel, 5, "summary"))
    calls = await graph_client.call_hierarchy_outgoing_calls_async(
        lsp.CallHierarchyOutgoingCallsParams(item=summary)
    )
    assert calls is not None and [c.to.name for c in calls] == ["total"]


@pytest.mark.asyncio
async def test_implementation_of_a_base_class_lists_the_subclass_and_of_a_method_its_override(
    graph_client: LanguageClient, gws: Path
) -> None:
    rel = "shapes/base.py"
    found = await graph_client.text_document_implementation_async(
        lsp.ImplementationParams(text_document=doc(gws, rel), position=at(gws, rel, 3, "Shape"))
    )
    assert found == [lsp.Location(uri=(gws / rel).as_uri(), range=span(gws, rel, 11, "Square"))]
    found = await graph_client.text_document_implementation_async(
        lsp.ImplementationParams(text_document=doc(gws, rel), position=at(gws, rel, 4, "area"))
    )
    assert found == [lsp.Location(uri=(gws / rel).as_uri(), range=span(gws, rel, 15, "area"))]


@pytest.mark.asyncio
async def test_implementation_of_a_go_interface_lists_the_struct_whose_methods_satisfy_it(
    graph_client: LanguageClient, gws: Path
) -> None:
    rel = "geo/geo.go"
    found = await graph_client.text_document_implementation_async(
        lsp.ImplementationParams(text_document=doc(gws, rel), position=at(gws, rel, 2, "Measurer"))
    )
    assert found == [lsp.Location(uri=(gws / rel).as_uri(), range=span(gws, rel, 6, "Line"))]


@pytest.mark.asyncio
async def test_references_list_call_sites_and_the_declaration_when_asked(
    graph_client: LanguageClient, gws: Path
) -> None:
    util, report = "shapes/util.py", "shapes/report.py"
    report_uri = (gws / report).as_uri()

    async def refs(include: bool) -> list[lsp.Location]:
        got = await graph_client.text_document_references_async(
            lsp.ReferenceParams(
                text_document=doc(gws, util),
                position=at(gws, util, 0, "total"),
                context=lsp.ReferenceContext(include_declaration=include),
            )
        )
        assert got is not None
        return list(got)

    imported = lsp.Range(start=at(gws, report, 2, "total"), end=span(gws, report, 2, "add_up").end)
    without = await refs(False)
    assert without == [
        lsp.Location(uri=report_uri, range=imported),  # `total as add_up`
        lsp.Location(uri=report_uri, range=span(gws, report, 7, "add_up")),
        lsp.Location(uri=report_uri, range=span(gws, report, 13, "add_up")),
    ]
    declaration = lsp.Location(uri=(gws / util).as_uri(), range=span(gws, util, 0, "total"))
    assert await refs(True) == [declaration, *without]


@pytest.mark.asyncio
async def test_research_what_calls_answers_markdown_with_locations(
    graph_client: LanguageClient, gws: Path
) -> None:
    result = await graph_client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="codesift.research", arguments=[{"question": "what calls total?"}])
    )
    assert isinstance(result, dict)
    (answer,) = result["results"]
    assert answer["kind"] == "callers"
    findings = {f["name"]: f for f in answer["findings"]}
    assert set(findings) == {"summary", "report"}
    loc = graph_client.protocol._converter.structure(findings["summary"]["location"], lsp.Location)
    assert loc == lsp.Location(
        uri=(gws / "shapes/report.py").as_uri(),
        range=lsp.Range(start=lsp.Position(line=5, character=0), end=lsp.Position(line=8, character=0)),
    )
    markdown = result["markdown"]
    assert "# Callers: total" in markdown
    assert "`summary` — shapes/report.py:6" in markdown and "`report` — shapes/report.py:11" in markdown


@pytest.mark.asyncio
async def test_research_with_links_makes_each_location_a_link_to_the_file_at_its_line(
    graph_client: LanguageClient, gws: Path
) -> None:
    result = await graph_client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(
            command="codesift.research", arguments=[{"question": "what calls total?", "links": True}]
        )
    )
    assert isinstance(result, dict)
    markdown = result["markdown"]
    report = (gws / "shapes/report.py").as_uri().removeprefix("file://")
    assert f"`summary` — [shapes/report.py:6]({report}#L6)" in markdown, markdown
    assert f"`report` — [shapes/report.py:11]({report}#L11)" in markdown, markdown


@pytest.mark.asyncio
async def test_search_with_hops_reaches_the_called_function(graph_client: LanguageClient) -> None:
    result = await graph_client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(
            command="codesift.search", arguments=[{"query": "summary", "mode": "bm25", "hops": 1}]
        )
    )
    assert isinstance(result, dict)
    hops = [h for h in result["hits"] if h["matchType"] == "multi-hop"]
    assert hops and any(h["path"] == "shapes/util.py" for h in hops)


@pytest.mark.asyncio
async def test_idle_server_drops_its_graph_and_symbol_index_and_answers_the_same_after(
    gws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODESIFT_INDEXES_IDLE_S", "1")
    client = await start_client()
    try:
        await initialize(client, gws)
        await indexed(client)

        async def answers() -> tuple[list[str], list[str]]:
            item = await prepare(client, gws, "shapes/util.py", at(gws, "shapes/util.py", 0, "total"))
            calls = await client.call_hierarchy_incoming_calls_async(
                lsp.CallHierarchyIncomingCallsParams(item=item)
            )
            found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="Square"))
            return sorted(c.from_.name for c in calls or []), sorted(s.name for s in found or [])

        before = await answers()
        assert before[0] == ["report", "summary"] and "Square" in before[1]

        def dropped() -> bool:
            return any("dropped the symbol index and graph" in m.message for m in client.log_messages)

        await wait_for(dropped, timeout=30, what="the idle drop")
        assert await answers() == before
    finally:
        await client.shutdown_session()
        await client.stop()


@pytest.mark.asyncio
async def test_the_server_replaces_itself_to_run_on_the_system_allocator_and_answers_as_before(
    gws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONMALLOC", raising=False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    client = await start_client()
    try:
        await initialize(client, gws)
        await indexed(client)
        pid = client._server.pid  # type: ignore[attr-defined]
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert b"PYTHONMALLOC=malloc" in environ  # the same process (pid, pipes), replaced
        assert b"MALLOC_ARENA_MAX=1" in environ  # (/proc's copy: the values it started with)
        assert b"ARROW_DEFAULT_MEMORY_POOL=system" in environ
        item = await prepare(client, gws, "shapes/util.py", at(gws, "shapes/util.py", 0, "total"))
        calls = await client.call_hierarchy_incoming_calls_async(
            lsp.CallHierarchyIncomingCallsParams(item=item)
        )
        assert sorted(c.from_.name for c in calls or []) == ["report", "summary"]
    finally:
        await client.shutdown_session()
        await client.stop()


@pytest.mark.asyncio
async def test_the_server_unmaps_the_models_weights_once_requests_pause_and_searches_the_same(
    gws: Path,
) -> None:
    client = await start_client()
    try:
        await initialize(client, gws)
        await indexed(client)
        pid = client._server.pid  # type: ignore[attr-defined]
        query = lsp.ExecuteCommandParams(
            command="codesift.search", arguments=[{"query": "add up the values", "mode": "vector"}]
        )
        first = await client.workspace_execute_command_async(query)
        assert isinstance(first, dict) and first["hits"]
        mappings, _ = resident_kib(pid, "model.onnx.data")
        assert mappings > 0  # the session maps its weights (the bundled model's data file)
        await wait_for(lambda: resident_kib(pid, "model.onnx.data")[1] == 0, what="the pages dropped")
        again = await client.workspace_execute_command_async(query)
        assert isinstance(again, dict)
        assert [(h["path"], h["score"]) for h in again["hits"]] == [
            (h["path"], h["score"]) for h in first["hits"]
        ]
    finally:
        await client.shutdown_session()
        await client.stop()
