"""Lifecycle: folders become projects on ``initialized`` and are indexed in the background."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from ..lsp import CodesiftServer, folder_uris


def register(server: CodesiftServer) -> None:
    """Register initialize / initialized / folder changes / progress cancel / shutdown."""

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: CodesiftServer, params: lsp.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.init_options = params.initialization_options
        for uri in folder_uris(params):
            ls.open_folder(uri, ls.init_options)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: CodesiftServer, params: lsp.InitializedParams) -> None:
        for hook in ls.after_initialized:
            await hook(ls)
        await ls.start_folders()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def workspace_did_change_workspace_folders(
        ls: CodesiftServer, params: lsp.DidChangeWorkspaceFoldersParams
    ) -> None:
        for folder in params.event.removed:
            ls.remove_folder(folder.uri)
        for folder in params.event.added:
            await ls.add_folder(folder.uri)

    @server.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def window_work_done_progress_cancel(
        ls: CodesiftServer, params: lsp.WorkDoneProgressCancelParams
    ) -> None:
        cancel = ls.progress_cancels.pop(params.token, None)
        if cancel is not None:
            cancel()

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: CodesiftServer, params: None) -> None:
        ls.stop_all()
