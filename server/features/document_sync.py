"""Freshness: unsaved text as an overlay for grep and search; saves and file events
re-index the files (debounced, by each project's one writer)."""

from __future__ import annotations

import logging

from lsprotocol import types as lsp

from ..lsp import CodesiftServer

log = logging.getLogger(__name__)

WATCH_ID = "codesift-watch"


def _set_overlay(ls: CodesiftServer, uri: str) -> None:
    found = ls.project_of(uri)
    if found is not None:
        project, rel = found
        project.overlay[rel] = ls.workspace.get_text_document(uri).source


def _drop_overlay(ls: CodesiftServer, uri: str) -> tuple[str, str] | None:
    found = ls.project_of(uri)
    if found is None:
        return None
    project, rel = found
    project.overlay.pop(rel, None)
    return project.name, rel


def _changed(ls: CodesiftServer, uris: list[str]) -> None:
    for uri in uris:
        found = ls.project_of(uri)
        # The index's own writes come back as events from clients watching "**/*": drop them,
        # or every write would trigger a re-check (and interrupt the vectors) forever.
        if found is not None and found[0].wants_change(found[1]):
            project, rel = found
            project.writer.changed([rel])


async def watch_files(ls: CodesiftServer) -> None:
    """Ask the client to report file events (dynamic registration), when it can."""
    caps = ls.client_capabilities.workspace
    watched = caps.did_change_watched_files if caps is not None else None
    if watched is None or not watched.dynamic_registration:
        log.info("the client cannot watch files: watching them in the server")
        ls.watch_ourselves = True
        for project in ls.projects.values():
            ls.watch(project)
        return
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        watchers=[lsp.FileSystemWatcher(glob_pattern="**/*")]
    )
    registration = lsp.Registration(
        id=WATCH_ID, method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
    except Exception as exc:
        log.warning("registering file watchers failed: %s", exc)


def register(server: CodesiftServer) -> None:
    """Register document sync (open / change / save / close) and watched-file events."""
    server.after_initialized.append(watch_files)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def text_document_did_open(ls: CodesiftServer, params: lsp.DidOpenTextDocumentParams) -> None:
        # pygls keeps the text; it becomes an overlay once it differs from the disk.
        found = ls.project_of(params.text_document.uri)
        if found is not None:
            project, rel = found
            project.open_files.pop(rel, None)
            project.open_files[rel] = None  # its pending vectors go first

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def text_document_did_change(ls: CodesiftServer, params: lsp.DidChangeTextDocumentParams) -> None:
        _set_overlay(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def text_document_did_save(ls: CodesiftServer, params: lsp.DidSaveTextDocumentParams) -> None:
        _drop_overlay(ls, params.text_document.uri)
        _changed(ls, [params.text_document.uri])

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def text_document_did_close(ls: CodesiftServer, params: lsp.DidCloseTextDocumentParams) -> None:
        _drop_overlay(ls, params.text_document.uri)
        found = ls.project_of(params.text_document.uri)
        if found is not None:
            found[0].open_files.pop(found[1], None)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def workspace_did_change_watched_files(
        ls: CodesiftServer, params: lsp.DidChangeWatchedFilesParams
    ) -> None:
        _changed(ls, [c.uri for c in params.changes])
