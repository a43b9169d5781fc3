"""Drive a real ``codesift serve`` over stdio: its RSS once idle, and save → found over LSP."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

MODEL_IDLE_S = 10.0


def rss_mib(pid: int) -> float:
    """Resident set size of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _command(client: LanguageClient, name: str, arg: dict[str, object]) -> object:
    return await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=name, arguments=[arg])
    )


async def _idle(client: LanguageClient, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res = await _command(client, "codesift.status", {})
        projects = getattr(res, "projects", None) or (res.get("projects") if isinstance(res, dict) else None)
        if projects:
            p = projects[0]
            get = p.get if isinstance(p, dict) else lambda k, _p=p: getattr(_p, k, None)
            if get("activity") == "idle" and get("exists"):
                return
        await asyncio.sleep(0.5)
    raise TimeoutError("the server did not become idle")


def quiet_client(on_progress: Callable[[lsp.ProgressParams], None] | None = None) -> LanguageClient:
    """A pygls client that accepts the server's progress and log messages and drops
    them (``on_progress`` sees each progress report)."""
    client = LanguageClient("codesift-bench", "1")

    @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def create(params: lsp.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(lsp.PROGRESS)
    def progress(params: lsp.ProgressParams) -> None:
        if on_progress is not None:
            on_progress(params)

    @client.feature(lsp.WINDOW_LOG_MESSAGE)
    def log_message(params: lsp.LogMessageParams) -> None:
        return None

    return client


async def started_client(
    root: Path, *, pause_vectors: bool = False, idle_s: float = 900, env: Mapping[str, str] | None = None
) -> LanguageClient:
    """A pygls client on a real ``codesift serve`` for ``root`` (``env`` added to this
    process's environment), initialised and idle. ``pause_vectors`` cancels the server's
    vectors job (an index built with ``--no-embed``), so what is measured does not
    compete with embedding."""
    paused: set[str | int] = set()

    def progress(params: lsp.ProgressParams) -> None:
        value = params.value
        message = str(
            (value.get("message") if isinstance(value, dict) else getattr(value, "message", "")) or ""
        )
        if pause_vectors and "embed" in message and params.token not in paused:
            paused.add(params.token)
            client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=params.token))

    client = quiet_client(progress)

    full_env = {**os.environ, **(env or {})}
    await client.start_io(sys.executable, "-m", "codesift.server.cli", "serve", env=full_env)
    await client.initialize_async(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(window=lsp.WindowClientCapabilities(work_done_progress=True)),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    client.initialized(lsp.InitializedParams())
    try:
        await asyncio.sleep(1.0)
        await _idle(client, idle_s)
    except BaseException:
        await client.stop()
        raise
    return client


async def _probe(root: Path, queries: list[str], settle: float) -> dict[str, float]:
    t = time.perf_counter()
    client = await started_client(root, idle_s=600, env={"CODESIFT_MODEL_IDLE_S": str(MODEL_IDLE_S)})
    pid = client._server.pid  # type: ignore[attr-defined]
    ready = time.perf_counter() - t
    await asyncio.sleep(settle)
    idle = rss_mib(pid)
    t = time.perf_counter()
    await _command(client, "codesift.search", {"query": queries[0], "limit": 10})
    first_search = (time.perf_counter() - t) * 1000
    await asyncio.sleep(settle)
    after_search = rss_mib(pid)
    modes = ("hybrid", "bm25", "vector", "grep")
    for i, q in enumerate(queries[1:21]):
        await _command(client, "codesift.search", {"query": q, "limit": 10, "mode": modes[i % len(modes)]})
    await asyncio.sleep(settle)
    after_many = rss_mib(pid)
    await asyncio.sleep(MODEL_IDLE_S + 2 * settle)  # the server unloads its idle model
    unloaded = rss_mib(pid)
    await client.shutdown_async(None)
    client.exit(None)
    await asyncio.sleep(0.5)
    await client.stop()
    return {
        "start → idle (s)": ready,
        "idle RSS (MiB)": idle,
        "first search over LSP (ms)": first_search,
        "idle RSS after a search (MiB)": after_search,
        f"idle RSS after {len(queries[1:21])} more searches, every mode (MiB)": after_many,
        f"idle RSS once the model is unloaded ({MODEL_IDLE_S:.0f} s idle here, 300 s by default) (MiB)": (
            unloaded
        ),
    }


def probe_server(root: Path, queries: list[str], settle: float = 5.0) -> dict[str, float]:
    """Start the server on an indexed root, let it settle, read its RSS before any search,
    after the first, and after 20 more in every mode."""
    return asyncio.run(_probe(root, queries, settle))


def smaps_mib(pid: int) -> dict[str, float]:
    """RSS split into anonymous (heaps, arenas) and file-backed (libraries, mapped index files)."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Anonymous", "Shared_Clean", "Private_Clean"):
            out[key] = int(rest.split()[0]) / 1024
    return out


def resident_by_mapping(pid: int, top: int = 8) -> list[tuple[str, float]]:
    """The ``top`` largest resident parts of a process, MiB, by what is mapped: a file's
    name (its mappings summed), ``[heap]``, or ``[anon]`` (glibc's other arenas, large
    allocations, thread stacks). It placed the model's weights, mapped copy-on-write,
    among the file-backed pages (docs/DECISIONS.md)."""
    resident: dict[str, int] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text(errors="replace").splitlines():
        head = line.split(maxsplit=5)
        if head and not head[0].endswith(":"):
            name = head[5] if len(head) == 6 else "[anon]"
        elif head and head[0] == "Rss:":
            resident[name] = resident.get(name, 0) + int(head[1])
    ranked = sorted(resident.items(), key=lambda kv: -kv[1])[:top]
    return [(n, kib / 1024) for n, kib in ranked]


# Definitions whose call hierarchy the probe walks: (path under the root, name).
_HIERARCHY = (
    ("json/__init__.py", "loads"),
    ("urllib/parse.py", "urlparse"),
    ("threading.py", "Thread"),
    ("os.py", "makedirs"),
)
_RESEARCH = (
    "what calls json.loads",
    "implementations of Mapping",
    "related to urlparse",
    "dependencies of module json",
)
_SYMBOL_QUERIES = (
    "Path",
    "urlparse",
    "HTTPConnection",
    "json loads",
    "Thread",
    "join",
    "read config file",
    "TemporaryDirectory",
    "open",
    "get",
)


async def _hierarchy_positions(root: Path) -> list[tuple[str, lsp.Position]]:
    """Where each of ``_HIERARCHY``'s definitions' names is, found in the file's text."""
    import re

    out = []
    for rel, name in _HIERARCHY:
        text = (root / rel).read_text(encoding="utf-8").splitlines()
        pat = re.compile(rf"^(\s*)(def|class) {name}\b")
        for i, line in enumerate(text):
            m = pat.match(line)
            if m:
                out.append(
                    ((root / rel).as_uri(), lsp.Position(line=i, character=len(m.group(0)) - len(name)))
                )
                break
    return out


async def _probe_request_types(
    root: Path, queries: list[str], settle: float, env: dict[str, str], idle_s: float | None
) -> dict[str, float]:
    client = await started_client(root, idle_s=1800, env=env)
    pid = client._server.pid  # type: ignore[attr-defined]
    out: dict[str, float] = {}

    async def mark(step: str) -> None:
        await asyncio.sleep(settle)
        split = smaps_mib(pid)
        out[f"RSS {step} (MiB)"] = split.get("Rss", 0.0)
        out[f"  of which anonymous {step} (MiB)"] = split.get("Anonymous", 0.0)
        print(f"{step}: {split}", file=sys.stderr, flush=True)
        for name, mib in resident_by_mapping(pid):
            print(f"    {mib:7.1f} MiB  {name}", file=sys.stderr, flush=True)

    await mark("ready")
    modes = ("hybrid", "bm25", "vector", "grep")
    for i, q in enumerate(queries[:20]):
        await _command(client, "codesift.search", {"query": q, "limit": 10, "mode": modes[i % 4]})
    for q in queries[20:40]:
        await _command(client, "codesift.search", {"query": q, "limit": 10})
    await mark("after 40 searches")
    for name in _SYMBOL_QUERIES * 3:
        await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=name))
    await mark("after 30 workspace/symbol")
    for name in ("loads", "urlparse", "join", "Thread", "open"):
        await _command(client, "codesift.symbols", {"query": name})
        await _command(client, "codesift.grep", {"pattern": name})
    await mark("after codesift.symbols + grep")
    for uri, pos in await _hierarchy_positions(root):
        doc = lsp.TextDocumentIdentifier(uri=uri)
        items = await client.text_document_prepare_call_hierarchy_async(
            lsp.CallHierarchyPrepareParams(text_document=doc, position=pos)
        )
        for it in items or []:
            await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=it))
            await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=it))
        await client.text_document_implementation_async(
            lsp.ImplementationParams(text_document=doc, position=pos)
        )
    await mark("after call hierarchy + implementation")
    for q in _RESEARCH:
        await _command(client, "codesift.research", {"question": q})
    await mark("after research")
    for i, q in enumerate(queries[:20]):
        await _command(
            client,
            "codesift.search",
            {"query": q, "limit": 10, "mode": modes[i % 4], "hops": 2 if i % 5 == 0 else 0},
        )
    await mark("after 20 more searches (some with hops)")
    if idle_s is not None:
        await asyncio.sleep(idle_s * 1.2 + 1.0)  # the idle watchers look every idle_s / 5
        await mark(f"after {idle_s:.0f} s idle (model, index reader, symbol index and graph dropped)")
        t = time.perf_counter()
        await _command(client, "codesift.search", {"query": queries[0], "limit": 10})
        out["first search after the drop, index reader and model reloaded (s)"] = time.perf_counter() - t
        uri, pos = (await _hierarchy_positions(root))[0]
        t = time.perf_counter()
        items = await client.text_document_prepare_call_hierarchy_async(
            lsp.CallHierarchyPrepareParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
        )
        for it in items or []:
            await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=it))
        out["first call hierarchy after the drop, graph reloaded (s)"] = time.perf_counter() - t
        t = time.perf_counter()
        await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="urlparse"))
        out["first workspace/symbol after the drop (s)"] = time.perf_counter() - t
    await client.shutdown_async(None)
    client.exit(None)
    await asyncio.sleep(0.5)
    await client.stop()
    return out


def probe_request_types(
    root: Path,
    queries: list[str],
    settle: float = 3.0,
    env: dict[str, str] | None = None,
    idle_s: float | None = None,
) -> dict[str, float]:
    """A real ``codesift serve`` on an indexed root: its RSS (and the anonymous part) after
    each kind of request in turn — searches in every mode, workspace/symbol, codesift.symbols
    and grep, call hierarchy and implementations, research, searches with hops — and, with
    ``idle_s``, once the server has idled that long (its idle timeouts shortened to it)."""
    env = dict(env or {})
    if idle_s is not None:
        env |= {"CODESIFT_MODEL_IDLE_S": str(idle_s), "CODESIFT_INDEXES_IDLE_S": str(idle_s)}
    return asyncio.run(_probe_request_types(root, queries, settle, env, idle_s))
