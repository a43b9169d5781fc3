"""A project of the language server answers ``codesift search`` / ``grep`` / ``symbols``.

The CLI's own ``*_payload`` functions run here with the project's parts (its open
store, loaded model and in-memory symbol names) instead of ones the CLI process
would open, so the answer is the CLI's, only sooner. Unsaved editor buffers are
left out: the CLI reads the files on disk. The settings are read from the
workspace's files as the CLI reads them (an editor's own options do not apply
to a CLI answer); when they describe another index than the project's (another
index folder, chunking or model), the server refuses and the CLI answers itself.

A background server (``background``) has no project: ``HeldIndex`` holds the
index of its root open for reading, with the settings read per request.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from codesift.indexer.errors import CodesiftError
from codesift.indexer.settings import Settings, load_settings

from .cli_common import Parts, exit_code
from .cli_search import grep_payload, search_payload, symbols_payload
from .endpoint import Endpoint, Reply

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from codesift.indexer.embed import Embedder
    from codesift.indexer.graph import Graph
    from codesift.indexer.search.symbols import SymbolIndex
    from codesift.indexer.store import Store

    from .projects import Project

COMMANDS: dict[str, Callable[..., dict[str, object]]] = {
    "search": search_payload,
    "grep": grep_payload,
    "symbols": symbols_payload,
}


class ProjectParts:
    """A project's loaded parts, with the settings the CLI would read."""

    def __init__(self, project: Project, settings: Settings) -> None:
        self.root = project.root
        self.settings = settings
        self._project = project

    def store(self) -> Store:
        return self._project.store()

    def embedder(self) -> Embedder:
        return self._project.embedders.get(self.settings.embed)

    def symbol_index(self) -> SymbolIndex | None:
        return self._project.symbol_index()

    @contextlib.contextmanager
    def graph(self, hops: int) -> Iterator[Graph | None]:
        if hops <= 0:
            yield None
            return
        with self._project.graph() as graph:
            yield graph


def answer(project: Project, command: str, args: dict[str, Any]) -> Reply:
    """One CLI request: ``{"ok": payload}``, an engine error with its exit code, a usage
    error, or a refusal (then the CLI answers in-process)."""
    if command not in COMMANDS:
        return {"refused": f"unknown command {command!r}"}
    try:
        settings = load_settings(project.root)
    except CodesiftError as exc:
        return {"refused": f"settings: {exc}"}
    ours = project.settings
    if (settings.index, settings.chunk, settings.embed) != (ours.index, ours.chunk, ours.embed):
        return {"refused": "the editor's settings describe another index than the workspace's files"}
    return reply(ProjectParts(project, settings), command, args)


def reply(parts: Parts, command: str, args: dict[str, Any]) -> Reply:
    """A CLI command's reply computed with ``parts``: its payload, an engine error with
    its exit code, a usage error, or a refusal for a command or arguments it does not know."""
    compute = COMMANDS.get(command)
    if compute is None:
        return {"refused": f"unknown command {command!r}"}
    try:
        return {"ok": compute(parts, **args)}
    except TypeError as exc:  # arguments of another CLI version
        return {"refused": f"bad arguments: {exc}"}
    except click.UsageError as exc:
        return {"usage": exc.message}
    except CodesiftError as exc:
        return {"error": {"exit": exit_code(exc), "message": str(exc)}}


def open_endpoint(project: Project) -> Endpoint | None:
    """Publish the project's CLI socket; closed with the project. None when it cannot be
    published (another server holds it; logged)."""
    endpoint = Endpoint(project.root, lambda command, args: answer(project, command, args))
    if not endpoint.open():
        return None
    project.on_close.append(endpoint.close)
    return endpoint


class HeldIndex:
    """One root's index held open for reading by a background server.

    Opened on the first question and kept: the store (its tables follow every commit
    of ``codesift index`` or an editor's server), the model, the in-memory symbol
    names and the reference graph. Reopened when the settings describe another index
    or the index was rebuilt (a rebuild drops and recreates the tables). Never
    written: no writer lock is taken, nothing is created.
    """

    def __init__(self, root: Path) -> None:
        from codesift.indexer.heap import QuietTrim

        from .projects import Embedders

        self.root = root
        self.embedders = Embedders()
        # As the language server does: once questions pause, freed heap pages go back
        # and the model's memory-mapped weights leave this process's memory.
        self.quiet = QuietTrim(after_trim=self.embedders.drop_mapped_pages)
        self._lock = threading.Lock()
        self._graph_lock = threading.Lock()
        self._key: tuple[object, ...] | None = None
        self._store: Store | None = None
        self._symbols: SymbolIndex | None = None
        self._graph: Graph | None = None

    def answer(self, command: str, args: dict[str, Any]) -> Reply:
        """One CLI request, answered as the in-process CLI would. A failure that is not
        the engine's answer (the tables went away under a reader) reopens the index and
        tries once more."""
        if command not in COMMANDS:
            return {"refused": f"unknown command {command!r}"}
        try:
            settings = load_settings(self.root)
        except CodesiftError as exc:
            return {"error": {"exit": exit_code(exc), "message": str(exc)}}
        try:
            return reply(_HeldParts(self, settings), command, args)
        except Exception as exc:
            log.info("reopening the index after: %s", exc)
            self.forget()
            return reply(_HeldParts(self, settings), command, args)
        finally:
            self.quiet.touch()

    def warm(self, command: str) -> None:
        """Load what ``command`` needs before it is asked (the model, the symbol names)."""
        from codesift.indexer.errors import EmbedError

        try:
            settings = load_settings(self.root)
            parts = _HeldParts(self, settings)
            parts.store()
            if command == "search":
                with contextlib.suppress(EmbedError):
                    parts.embedder()
            elif command == "symbols":
                self.symbol_index(settings).tables()
        except CodesiftError as exc:
            log.info("nothing to warm: %s", exc)

    def forget(self) -> None:
        with self._lock:
            self._key = None
            self._store = self._symbols = None
        with self._graph_lock:
            self._graph = None

    def store(self, settings: Settings) -> Store:
        from codesift.indexer.store import index_uri_for, open_store

        uri = index_uri_for(self.root, settings)
        key = (uri, settings.index, settings.chunk, settings.embed, _generation(uri))
        with self._lock:
            if self._store is None or key != self._key:
                from codesift.indexer.search.symbols import SymbolIndex

                self._store = open_store(self.root, settings)
                self._symbols = SymbolIndex(self._store)
                self._key = key
            return self._store

    def symbol_index(self, settings: Settings) -> SymbolIndex:
        self.store(settings)
        assert self._symbols is not None
        return self._symbols

    @contextlib.contextmanager
    def graph(self, settings: Settings) -> Iterator[Graph]:
        from codesift.indexer.graph import Graph

        store = self.store(settings)
        with self._graph_lock:
            if self._graph is None or self._graph.snapshot.store is not store:
                self._graph = Graph(store)
            yield self._graph


def _generation(uri: str) -> tuple[int, int] | None:
    """What changes when a local index is rebuilt: its meta table's folder is dropped and
    made again (written once per build, so commits of an index run leave it alone)."""
    if "://" in uri:
        return None
    try:
        st = os.stat(os.path.join(uri, "meta.lance"))
    except OSError:
        return None
    return (st.st_ino, st.st_ctime_ns)


class _HeldParts:
    """A ``HeldIndex``'s parts for one request's settings."""

    def __init__(self, held: HeldIndex, settings: Settings) -> None:
        self.root = held.root
        self.settings = settings
        self._held = held

    def store(self) -> Store:
        return self._held.store(self.settings)

    def embedder(self) -> Embedder:
        return self._held.embedders.get(self.settings.embed)

    def symbol_index(self) -> SymbolIndex | None:
        return self._held.symbol_index(self.settings)

    @contextlib.contextmanager
    def graph(self, hops: int) -> Iterator[Graph | None]:
        if hops <= 0:
            yield None
            return
        with self._held.graph(self.settings) as graph:
            yield graph
