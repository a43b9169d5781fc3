"""``textDocument/implementation``: subclasses and implementers (transitively, extensions,
Protocol and Go method-set implementers included) of a type; overrides of a method."""

from __future__ import annotations

from lsprotocol import types as lsp

from codesift.indexer.graph import implementations

from .. import convert
from ..lsp import CodesiftServer
from ..projects import definition_at


def register(server: CodesiftServer) -> None:
    """Register ``textDocument/implementation``."""

    @server.feature(lsp.TEXT_DOCUMENT_IMPLEMENTATION)
    @server.thread()
    def implementation(ls: CodesiftServer, params: lsp.ImplementationParams) -> list[lsp.Location] | None:
        with ls.graph_of(params.text_document.uri) as found:
            if found is None:
                return None
            project, path, graph = found
            line, column = convert.engine_position(params.position, path, project.lines.line, ls.encoding)
            sym = definition_at(graph, path, line, column)
            if sym is None:
                return None
            impls = implementations(graph, sym)
            return convert.implementation_locations(project.root, impls, project.lines.line, ls.encoding)
