"""``workspace/didChangeConfiguration``: re-read every project's settings."""

from __future__ import annotations

from collections.abc import Mapping

from lsprotocol import types as lsp

from ..lsp import CONFIG_SECTION, CodesiftServer


def register(server: CodesiftServer) -> None:
    """Register the configuration change handler."""

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def workspace_did_change_configuration(
        ls: CodesiftServer, params: lsp.DidChangeConfigurationParams
    ) -> None:
        pushed = params.settings.get(CONFIG_SECTION) if isinstance(params.settings, Mapping) else None
        if pushed is not None:
            ls.init_options = pushed
        for uri, project in list(ls.projects.items()):
            settings = ls.settings_for(project.root, await ls.folder_options(uri))
            if settings != project.settings and project.reconfigure(settings):
                await ls.start_indexing(project)
