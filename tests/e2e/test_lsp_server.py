"""The language server end to end: a real server process, a pytest-lsp client."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from .conftest import ended, indexed, initialize, start_client, wait_for

pytestmark = pytest.mark.slow


def structure(client: LanguageClient, value: object, cls: type) -> object:
    return client.protocol._converter.structure(value, cls)


async def run(client: LanguageClient, command: str, *args: object) -> dict[str, object]:
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=command, arguments=list(args))
    )
    assert isinstance(result, dict)
    return result


@pytest.mark.asyncio
async def test_initialize_lists_commands_and_workspace_symbols(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.workspace_symbol_provider
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) >= {
        "codesift.search",
        "codesift.grep",
        "codesift.symbols",
        "codesift.reindex",
        "codesift.status",
    }
    await wait_for(lambda: client.registrations, what="the file watcher registration")  # type: ignore[attr-defined]
    (reg,) = client.registrations  # type: ignore[attr-defined]
    assert reg.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES


@pytest.mark.asyncio
async def test_indexing_reports_progress_begin_report_end(client: LanguageClient) -> None:
    await indexed(client)
    (reports,) = client.progress_reports.values()
    assert isinstance(reports[0], lsp.WorkDoneProgressBegin) and reports[0].cancellable
    steps = [r for r in reports if isinstance(r, lsp.WorkDoneProgressReport)]
    assert steps and all(0 <= (r.percentage or 0) <= 100 for r in steps)
    assert any("parse" in (r.message or "") for r in steps)
    assert any("embed" in (r.message or "") for r in steps)
    assert isinstance(reports[-1], lsp.WorkDoneProgressEnd)


@pytest.mark.asyncio
async def test_workspace_symbol_finds_a_class_and_its_methods(client: LanguageClient, ws: Path) -> None:
    await indexed(client)
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="AuthService"))
    assert result is not None
    names = [s.name for s in result]
    assert names[0] == "AuthService"
    assert {"__init__", "validateCredentials", "login"} <= set(names)
    first = result[0]
    assert first.kind == lsp.SymbolKind.Class
    assert isinstance(first.location, lsp.Location)
    assert first.location.uri == (ws / "app" / "auth.py").as_uri()
    # `class AuthService:` is line 6 (1-based) of the file: 0-based 5, name at column 6.
    assert first.location.range.start == lsp.Position(line=5, character=6)
    assert first.location.range.end == lsp.Position(line=5, character=17)


@pytest.mark.asyncio
async def test_workspace_symbol_with_words_finds_enclosing_definitions(client: LanguageClient) -> None:
    await indexed(client)
    result = await client.workspace_symbol_async(
        lsp.WorkspaceSymbolParams(query="retry failed uploads with backoff")
    )
    assert result and result[0].name == "retry_upload"


@pytest.mark.asyncio
async def test_workspace_symbol_with_a_few_words_or_an_exact_name_answers_names_alone(
    client: LanguageClient,
) -> None:
    # "auth login": the word "login" is a name, "auth" its container's and file's; a name
    # found exactly needs no search, so no definition around a search hit is added
    await indexed(client)
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="auth login"))
    assert result and [(s.name, s.container_name) for s in result] == [("login", "AuthService")]
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="login"))
    assert result and [s.name for s in result] == ["login"]
    # no name holds both words: the definitions around search hits, as for a sentence
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="backoff attempts"))
    assert result and result[0].name == "retry_upload"


@pytest.mark.asyncio
async def test_search_command_returns_hits_with_locations(client: LanguageClient, ws: Path) -> None:
    await indexed(client)
    answer = await run(client, "codesift.search", {"query": "parse the JSON configuration", "limit": 5})
    hits = answer["hits"]
    assert isinstance(hits, list) and hits
    top = hits[0]
    location = structure(client, top["location"], lsp.Location)
    assert isinstance(location, lsp.Location)
    assert location.uri == (ws / "app" / "config.py").as_uri()
    assert location.range.start.line == top["startLine"] - 1
    assert 0 < top["score"] <= 1 and "def parse_config" in top["text"]
    report = answer["report"]
    assert isinstance(report, dict) and report["chunks"] == len(hits)


@pytest.mark.asyncio
async def test_search_filters_and_weights_are_camel_case(client: LanguageClient) -> None:
    await indexed(client)
    answer = await run(
        client,
        "codesift.search",
        {"query": "user", "mode": "bm25", "filters": {"include": ["web/**"], "kinds": ["function"]}},
    )
    hits = answer["hits"]
    assert isinstance(hits, list) and hits
    assert all(h["path"].startswith("web/") and h["kind"] == "function" for h in hits)


@pytest.mark.asyncio
async def test_search_group_by_file_answers_each_file_once(client: LanguageClient) -> None:
    await indexed(client)
    answer = await run(client, "codesift.search", {"query": "user", "groupBy": "file", "limit": 10})
    paths = [h["path"] for h in answer["hits"]]
    assert paths and len(paths) == len(set(paths))


@pytest.mark.asyncio
async def test_unsaved_edit_is_found_by_grep(client: LanguageClient, ws: Path) -> None:
    await indexed(client)
    uri = (ws / "app" / "upload.py").as_uri()
    text = (ws / "app" / "upload.py").read_text()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangeWholeDocument(text=text + "\nx = '😀'; verify_checksum = 1\n")
            ],
        )
    )
    answer = await run(client, "codesift.grep", {"pattern": "verify_checksum"})
    passages = answer["passages"]
    assert isinstance(passages, list) and len(passages) == 1
    (match,) = passages[0]["matches"]
    loc = structure(client, match, lsp.Location)
    assert isinstance(loc, lsp.Location) and loc.uri == uri
    line = text.count("\n") + 1
    # The emoji before the match is two UTF-16 code units (VS Code's encoding).
    assert loc.range == lsp.Range(lsp.Position(line, 10), lsp.Position(line, 25))


@pytest.mark.asyncio
async def test_unsaved_new_function_is_found_by_workspace_symbol(client: LanguageClient, ws: Path) -> None:
    await indexed(client)
    uri = (ws / "app" / "config.py").as_uri()
    text = (ws / "app" / "config.py").read_text()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangeWholeDocument(
                    text=text + "\n\ndef reload_unsaved_config():\n    pass\n"
                )
            ],
        )
    )
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="reload_unsaved_config"))
    assert found and found[0].name == "reload_unsaved_config"
    loc = found[0].location
    assert isinstance(loc, lsp.Location) and loc.uri == uri
    assert loc.range.start.line == text.count("\n") + 2  # 0-based line of the new def
    still = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="parse_config"))
    assert still and still[0].name == "parse_config"


@pytest.mark.asyncio
async def test_saved_new_function_is_found_by_bm25_after_reindex(client: LanguageClient, ws: Path) -> None:
    await indexed(client)
    path = ws / "app" / "upload.py"
    path.write_text(path.read_text() + "\n\ndef compress_payload(blob):\n    return blob\n")
    client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=path.as_uri()))
    )

    async def found() -> bool:
        answer = await run(client, "codesift.search", {"query": "compress_payload", "mode": "bm25"})
        hits = answer["hits"]
        return isinstance(hits, list) and any("compress_payload" in h["text"] for h in hits)

    await wait_for(found, timeout=20, what="the saved function to be searchable")
    symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="compress_payload"))
    assert symbols and symbols[0].name == "compress_payload"


@pytest.mark.asyncio
async def test_an_empty_or_blank_search_query_returns_no_hits_and_no_error(client: LanguageClient) -> None:
    await indexed(client)
    for query in ("", "   "):
        answer = await run(client, "codesift.search", {"query": query})
        assert answer["hits"] == []


@pytest.mark.asyncio
async def test_hostile_numbers_and_globs_answer_invalid_params(client: LanguageClient) -> None:
    await indexed(client)
    for bad in (
        {"query": "x", "limit": 1_000_000_000},
        {"query": "x", "hops": 1_000_000_000},
        {"query": "x", "filters": {"include": ["a" * 100_000]}},
    ):
        with pytest.raises(JsonRpcInvalidParams):
            await run(client, "codesift.search", bad)
    with pytest.raises(JsonRpcInvalidParams):
        await run(client, "codesift.grep", {"pattern": "x", "context": 1_000_000_000})


@pytest.mark.asyncio
async def test_malformed_command_params_answer_invalid_params_and_server_keeps_serving(
    client: LanguageClient,
) -> None:
    await indexed(client)
    for bad in ({"limit": 3}, {"query": 5}, {"query": "x", "mode": "fuzzy"}, {"query": "x", "bogus": 1}):
        with pytest.raises(JsonRpcInvalidParams):
            await run(client, "codesift.search", bad)
    with pytest.raises(JsonRpcInvalidParams):
        await run(client, "codesift.grep", {"pattern": "(", "regex": True})
    answer = await run(client, "codesift.status")
    (project,) = answer["projects"]
    assert project["exists"] and project["filesIndexed"] == 5
    assert project["reader"] in ("io_uring", "pread")


@pytest.mark.asyncio
async def test_raw_request_with_bad_params_gets_invalid_params(client: LanguageClient) -> None:
    await indexed(client)
    # Written as raw bytes: the typed client would refuse to send them.
    assert client.protocol.writer is not None
    for n, params in enumerate(({}, [1, 2], "query")):
        answered: Future[object] = Future()
        client.protocol._request_futures[f"raw-{n}"] = answered
        body = json.dumps(
            {"jsonrpc": "2.0", "id": f"raw-{n}", "method": "workspace/symbol", "params": params}
        )
        client.protocol.writer.write(f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
        with pytest.raises(JsonRpcInvalidParams):
            await asyncio.wait_for(asyncio.wrap_future(answered), 10)
    result = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="login"))
    assert result and result[0].name == "login"


@pytest.mark.asyncio
async def test_bad_initialization_options_show_one_message_and_use_defaults(ws: Path) -> None:
    c = await start_client()
    try:
        await initialize(c, ws, options={"search": {"semanticWeight": "high"}, "bogus": {}})
        await indexed(c)
        assert len(c.messages) == 1 and "codesift" in c.messages[0].message
        answer = await run(c, "codesift.search", {"query": "login"})
        assert answer["hits"]
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest.mark.asyncio
async def test_an_empty_configuration_answer_keeps_the_initialization_options(ws: Path) -> None:
    """VS Code answers ``{}`` for a section nobody set: that is no settings, not defaults."""
    c = await start_client()
    try:
        c.set_configuration({}, section="codesift")
        await initialize(c, ws, options={"search": {"limit": 2}})
        await indexed(c)
        answer = await run(c, "codesift.search", {"query": "return the value"})
        assert len(answer["hits"]) == 2
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest.mark.asyncio
async def test_missing_embedding_model_shows_one_message_saying_how_to_fix_it(
    ws: Path, tmp_path: Path
) -> None:
    c = await start_client()
    try:
        await initialize(c, ws, options={"embed": {"modelPath": str(tmp_path / "no-model-here")}})
        await wait_for(lambda: bool(c.messages), what="a shown message")
        assert len(c.messages) == 1
        text = c.messages[0].message
        assert "no-model-here" in text and "export_onnx" in text
        answer = await run(c, "codesift.status", {})
        assert answer  # the server keeps serving
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest.mark.asyncio
async def test_requests_before_the_index_exists_say_indexing_is_in_progress(ws: Path) -> None:
    c = await start_client()
    try:
        await initialize(c, ws)
        answer = await run(c, "codesift.search", {"query": "login"})
        if not ended(c):  # the sample workspace indexes fast; only assert when we were early
            report = answer["report"]
            assert isinstance(report, dict)
            assert answer["hits"] == [] and any("index" in n for n in report["notes"])
        await indexed(c)
    finally:
        await c.shutdown_session()
        await c.stop()


def test_serve_help_mentions_tcp() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "codesift.server.cli", "serve", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "--tcp" in out.stdout
    json.dumps(out.stdout)


@pytest.mark.asyncio
async def test_server_watches_files_itself_when_the_client_cannot(ws: Path) -> None:
    c = await start_client()  # Neovim on Linux: no dynamic registration of file watchers
    try:
        result = await initialize(c, ws, capabilities="neovim@v0.11.0")
        assert result.capabilities.position_encoding == lsp.PositionEncodingKind.Utf8
        await indexed(c)
        assert c.registrations == []  # type: ignore[attr-defined]
        (ws / "app" / "created_outside.py").write_text("def made_by_a_script():\n    return 1\n")

        async def found() -> bool:
            answer = await run(c, "codesift.search", {"query": "made_by_a_script", "mode": "bm25"})
            hits = answer["hits"]
            return isinstance(hits, list) and any(h["path"] == "app/created_outside.py" for h in hits)

        await wait_for(found, timeout=20, what="the file created outside the editor to be indexed")
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest.mark.asyncio
async def test_a_remembered_workspace_symbol_answer_follows_a_save(client: LanguageClient, ws: Path) -> None:
    await indexed(client)
    query = lsp.WorkspaceSymbolParams(query="compress_saved_payload")
    before = await client.workspace_symbol_async(query)
    assert not any(s.name == "compress_saved_payload" for s in before or [])
    path = ws / "app" / "upload.py"
    path.write_text(path.read_text() + "\n\ndef compress_saved_payload(blob):\n    return blob\n")
    client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=path.as_uri()))
    )

    async def found() -> bool:
        got = await client.workspace_symbol_async(query)
        return bool(got) and got[0].name == "compress_saved_payload"  # type: ignore[index]

    await wait_for(found, what="the saved function in workspace/symbol")


@pytest.mark.asyncio
async def test_a_burst_of_200_concurrent_workspace_symbol_requests_gets_every_answer_right(
    client: LanguageClient,
) -> None:
    await indexed(client)
    queries = ["AuthService", "login", "parse_config", "retry upload with backoff", "validateCredentials"]
    alone = {q: await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=q)) for q in queries}
    burst = await asyncio.gather(
        *(client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=queries[i % 5])) for i in range(200))
    )
    for i, got in enumerate(burst):
        assert got == alone[queries[i % 5]], queries[i % 5]
    assert all(alone.values())


@contextlib.asynccontextmanager
async def indexed_workspace(root: Path, files: dict[str, str]) -> AsyncIterator[LanguageClient]:
    """A server on a generated workspace, its first index run ended; its project status."""
    from ..conftest import write_workspace

    client = await start_client()
    try:
        await initialize(client, write_workspace(root, files))
        await indexed(client)
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


async def project_status(client: LanguageClient) -> dict[str, object]:
    (project,) = (await run(client, "codesift.status"))["projects"]  # type: ignore[misc]
    assert isinstance(project, dict)
    return project


@pytest.mark.asyncio
async def test_a_large_workspace_is_parsed_by_workers_in_the_servers_index_process(tmp_path: Path) -> None:
    # the server's full run is a child process; its parse workers are that child's children
    from codesift.indexer.filework import PARALLEL_MIN_FILES

    n = PARALLEL_MIN_FILES + 20
    files = {f"pkg/m{i:03d}.py": f"def handler_{i}(x):\n    return x + {i}\n" for i in range(n)}
    files[".codesift.toml"] = "[index]\nparse_workers = 2\n"
    async with indexed_workspace(tmp_path / "big", files) as client:
        assert not [m for m in client.messages if "indexing" in m.message and "stopped" in m.message]
        # the workers ran: none fell back to the index process ("daemonic processes are not
        # allowed to have children" made every server run fall back)
        assert not [m for m in client.log_messages if "parse workers stopped" in m.message]
        project = await project_status(client)
        assert project["filesIndexed"] == n + 1 and project["filesFailed"] == 0
        found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=f"handler_{n - 1}"))
        assert found and found[0].name == f"handler_{n - 1}"


@pytest.mark.asyncio
async def test_a_static_model_embeds_with_the_text_phase_in_the_server_as_in_the_cli(tmp_path: Path) -> None:
    files = {f"pkg/m{i:02d}.py": f"def handler_{i}(x):\n    return x + {i}\n" for i in range(30)}
    files[".codesift.toml"] = '[embed]\nmodel = "all-MiniLM-L6-v2-static"\n'
    async with indexed_workspace(tmp_path / "static", files) as client:
        project = await project_status(client)
        assert project["vectorsDone"] == project["chunks"] > 0 and project["vectorsPending"] == 0
        # every vector went in with its rows: none through the embedding cache, which the
        # vectors phase fills (the kernel's fs/: 269 MB of cache for 53k static vectors)
        assert project["cacheBytes"] == 0, project
