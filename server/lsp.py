"""The codesift language server: lifecycle, projects, settings, progress, logging.

``create_server()`` builds a fresh server with every feature registered (no
module-level instance). Each workspace folder is a project with its own index
in that folder. Features live in ``server/features/``, one module each; this
module holds what they share.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

from codesift.indexer.errors import ConfigError, IndexMissingError
from codesift.indexer.graph import Graph
from codesift.indexer.settings import Settings, load_settings

from . import convert
from .endpoint import NO_SERVER_ENV
from .lanes import Lanes
from .projects import INDEXES_IDLE_S, MODEL_IDLE_S, Embedders, Project, watch_indexes_idle
from .protocol import CodesiftProtocol
from .stream import StdinReader
from .writer import IndexRun

log = logging.getLogger(__name__)

NAME = "codesift"
VERSION = "0.1.0"
CONFIG_SECTION = "codesift"


class LspLogHandler(logging.Handler):
    """Forwards the engine's and server's log records to ``window/logMessage``."""

    _TYPES = ((logging.ERROR, lsp.MessageType.Error), (logging.WARNING, lsp.MessageType.Warning))

    def __init__(self, server: CodesiftServer) -> None:
        super().__init__(logging.INFO)
        self._server = server

    def emit(self, record: logging.LogRecord) -> None:
        kind = next((t for level, t in self._TYPES if record.levelno >= level), lsp.MessageType.Log)
        params = lsp.LogMessageParams(type=kind, message=self.format(record))
        with contextlib.suppress(Exception):
            self._server.call_soon(self._server.window_log_message, params)


class CodesiftServer(LanguageServer):
    """A language server whose projects are the workspace folders."""

    def __init__(self) -> None:
        super().__init__(NAME, VERSION, protocol_cls=CodesiftProtocol, max_workers=4)
        self.projects: dict[str, Project] = {}  # folder URI → project
        self.embedders = Embedders()
        if isinstance(self.protocol, CodesiftProtocol):
            # a pause's trim also unmaps the model's memory-mapped weights' resident pages
            self.protocol.quiet_trim.after_trim = self.embedders.drop_mapped_pages
        self.embedders.watch_idle(
            lambda: any(p.writer.busy for p in list(self.projects.values())),
            float(os.environ.get("CODESIFT_MODEL_IDLE_S") or MODEL_IDLE_S),  # the bench shortens it
        )
        watch_indexes_idle(
            lambda: list(self.projects.values()),
            float(os.environ.get("CODESIFT_INDEXES_IDLE_S") or INDEXES_IDLE_S),  # the bench shortens it
        )
        self.init_options: object = None
        # What features want done once the client is initialized (e.g. register file watchers).
        self.after_initialized: list[Callable[[CodesiftServer], Coroutine[Any, Any, None]]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.progress_cancels: dict[str | int, Callable[[], None]] = {}
        self._shown: set[str] = set()
        self.watch_ourselves = False  # the client cannot report file events: watchfiles does
        # Each project answers `codesift search / grep / symbols` on a local socket (endpoint.py).
        self.answer_cli = os.environ.get(NO_SERVER_ENV, "") in ("", "0")
        self._lanes: Lanes | None = None

    @property
    def lanes(self) -> Lanes:
        """The worker pool, best job first (``lanes.py``): name lookups before searches."""
        if self._lanes is None:
            self._lanes = Lanes(self.thread_pool.submit)
        return self._lanes

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """pygls' stdio server, reading the client with ``StdinReader`` (``stream.py``):
        a request no longer waits for a free worker thread to be read."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = StdinReader(stdin or sys.stdin.buffer)
        try:
            asyncio.run(
                run_async(
                    stop_event=self._stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    logger=log,
                    error_handler=self.report_server_error,
                )
            )
        except BrokenPipeError:
            log.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    # ----- threads and the event loop ---------------------------------------------

    def call_soon(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the event loop thread (all writes to the client happen there)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        if _in_loop(loop):
            fn(*args)
        else:
            loop.call_soon_threadsafe(fn, *args)

    def spawn(self, coro: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Start a coroutine on the event loop from any thread."""
        loop = self.loop
        if loop is None:
            return
        future: Future[None] = asyncio.run_coroutine_threadsafe(coro(), loop)
        future.add_done_callback(_log_failure)

    # ----- messages ---------------------------------------------------------------------

    def show(self, message: str, kind: lsp.MessageType = lsp.MessageType.Warning) -> None:
        """``window/showMessage``, once per distinct message: only for what the user can act on."""
        if message in self._shown:
            return
        self._shown.add(message)
        self.call_soon(self.window_show_message, lsp.ShowMessageParams(type=kind, message=message))

    # ----- settings -------------------------------------------------------------------------

    def settings_for(self, root: Path, options: object) -> Settings:
        """Settings of a folder: its files, then ``options`` (camelCase); bad options → defaults."""
        try:
            return load_settings(root, convert.settings_overrides(options))
        except ConfigError as exc:
            self.show(f"codesift: {exc}; using the default settings")
        try:
            return load_settings(root)
        except ConfigError:
            return Settings()

    async def folder_options(self, uri: str) -> object:
        """The ``codesift`` configuration of a folder: pulled when the client can, else the
        initialization options."""
        caps = self.client_capabilities.workspace
        if caps is not None and caps.configuration:
            item = lsp.ConfigurationItem(scope_uri=uri, section=CONFIG_SECTION)
            try:
                got = await self.workspace_configuration_async(lsp.ConfigurationParams(items=[item]))
            except Exception as exc:
                log.warning("workspace/configuration failed: %s", exc)
            else:
                # An empty answer ({} from VS Code for a section nobody set) means
                # "nothing here": the initialization options still apply.
                if got and got[0]:
                    return got[0]
        return self.init_options

    # ----- projects ---------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        """The negotiated position encoding."""
        return str(self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)

    def project_of(self, uri: str) -> tuple[Project, str] | None:
        """The project holding a document and the document's workspace-relative path."""
        path = convert.uri_path(uri)
        if path is None:
            return None
        for project in sorted(self.projects.values(), key=lambda p: -len(p.root.parts)):
            rel = project.relative(path)
            if rel is not None:
                return project, rel
        return None

    @contextlib.contextmanager
    def graph_of(self, uri: str) -> Iterator[tuple[Project, str, Graph] | None]:
        """A document's project, its workspace-relative path and the project's reference graph,
        held for one question. None when no project holds it or its index is not built yet (logged)."""
        found = self.project_of(uri)
        if found is None:
            yield None
            return
        project, path = found
        try:
            project.store()
        except IndexMissingError:
            log.info("%s", project.missing_note())
            yield None
            return
        with convert.engine_errors(), project.graph() as graph:
            yield project, path, graph

    def selected(self, names: tuple[str, ...] = ()) -> list[Project]:
        """Projects by name (all when ``names`` is empty)."""
        return [p for p in self.projects.values() if not names or p.name in names]

    def open_folder(self, uri: str, options: object) -> Project | None:
        """Make a workspace folder a project (indexing starts separately)."""
        path = convert.uri_path(uri)
        if path is None or not path.is_dir():
            self.show(f"codesift: workspace folder {uri} is not a local directory; it is not indexed")
            return None
        project = Project(path, self.settings_for(path, options), self.embedders)
        project.notify = self.show
        project.activity = "indexing: waiting to start"
        self.projects[uri] = project
        if self.watch_ourselves:
            self.watch(project)
        if self.answer_cli:
            from .cli_endpoint import open_endpoint

            open_endpoint(project)
        return project

    def watch(self, project: Project) -> None:
        """Watch a project's files with watchfiles (when the client cannot)."""
        from .watcher import FolderWatcher

        project.on_close.append(FolderWatcher(project).stop)

    async def add_folder(self, uri: str) -> None:
        """Make a workspace folder a project and index it in the background."""
        project = self.open_folder(uri, await self.folder_options(uri))
        if project is not None:
            await self.start_indexing(project)

    async def start_folders(self) -> None:
        """After ``initialized``: pull each folder's configuration, then index it."""
        for uri, project in list(self.projects.items()):
            options = await self.folder_options(uri)
            if options is not self.init_options:
                project.reconfigure(self.settings_for(project.root, options))
            await self.start_indexing(project)

    def remove_folder(self, uri: str) -> None:
        """Stop indexing a folder and forget it."""
        project = self.projects.pop(uri, None)
        if project is not None:
            project.close()

    async def start_indexing(self, project: Project) -> None:
        """Queue a full index run of a project, with a progress bar when the client shows one."""
        token = await self._create_progress()
        if token is None:
            project.writer.index(IndexRun(on_progress=lambda _: None, on_done=lambda _: None))
            return
        run = IndexRun(
            on_progress=lambda p: self.call_soon(
                self.work_done_progress.report, token, convert.progress_report(p, project.name)
            ),
            on_done=lambda msg: self._end_progress(token, f"{project.name}: {msg}"),
        )
        self.progress_cancels[token] = run.cancel.set
        self.work_done_progress.begin(
            token,
            lsp.WorkDoneProgressBegin(
                title="codesift: indexing", message=project.name, percentage=0, cancellable=True
            ),
        )
        project.writer.index(run)

    async def _create_progress(self) -> str | None:
        window = self.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        token = f"codesift-index-{uuid.uuid4().hex[:12]}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception as exc:
            log.info("the client refused a progress bar: %s", exc)
            return None
        return token

    def _end_progress(self, token: str, message: str) -> None:
        self.progress_cancels.pop(token, None)
        self.call_soon(self.work_done_progress.end, token, lsp.WorkDoneProgressEnd(message=message))

    def stop_all(self) -> None:
        """Stop every writer after its current batch."""
        for project in self.projects.values():
            project.close()


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _log_failure(future: Future[None]) -> None:
    if not future.cancelled() and (exc := future.exception()) is not None:
        log.error("background task failed: %s", exc, exc_info=exc)


def folder_uris(params: lsp.InitializeParams) -> list[str]:
    """The workspace folders of an initialize request (the root URI when there are none)."""
    if params.workspace_folders:
        return [f.uri for f in params.workspace_folders]
    if params.root_uri:
        return [params.root_uri]
    if params.root_path:
        return [Path(params.root_path).resolve().as_uri()]
    return []


def create_server() -> CodesiftServer:
    """A new codesift language server with every feature registered."""
    from .features import (
        call_hierarchy,
        commands,
        configuration,
        document_sync,
        implementation,
        indexing,
        references,
        workspace_symbol,
    )

    server = CodesiftServer()
    handler = LspLogHandler(server)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root_logger = logging.getLogger("codesift")
    root_logger.addHandler(handler)
    root_logger.setLevel(logging.DEBUG if os.environ.get("CODESIFT_DEBUG") else logging.INFO)
    features = (indexing, configuration, workspace_symbol, commands, document_sync)
    for feature in (*features, call_hierarchy, implementation, references):
        feature.register(server)
    return server


def options_mapping(value: object) -> Mapping[str, object]:
    """``value`` when it is a JSON object, else an empty mapping."""
    return value if isinstance(value, Mapping) else {}
