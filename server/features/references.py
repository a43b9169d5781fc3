"""``textDocument/references``: every resolved use of the definition at the cursor (calls,
supertypes, imports, type references) from the reference graph; the declaration when asked."""

from __future__ import annotations

from lsprotocol import types as lsp

from codesift.indexer.graph import references

from .. import convert
from ..lsp import CodesiftServer
from ..projects import definition_at


def register(server: CodesiftServer) -> None:
    """Register ``textDocument/references``."""

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    @server.thread()
    def text_document_references(
        ls: CodesiftServer, params: lsp.ReferenceParams
    ) -> list[lsp.Location] | None:
        with ls.graph_of(params.text_document.uri) as found:
            if found is None:
                return None
            project, path, graph = found
            line, column = convert.engine_position(params.position, path, project.lines.line, ls.encoding)
            sym = definition_at(graph, path, line, column)
            if sym is None:
                return None
            declaration = sym if params.context.include_declaration else None
            refs = references(graph, sym)
            return convert.reference_locations(
                project.root, refs, declaration, project.lines.line, ls.encoding
            )
