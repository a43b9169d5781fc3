"""``textDocument/prepareCallHierarchy``, ``callHierarchy/incomingCalls`` and
``callHierarchy/outgoingCalls`` from the reference graph: resolved calls only, never a guess."""

from __future__ import annotations

from lsprotocol import types as lsp

from codesift.indexer.graph import Graph, callees, callers
from codesift.indexer.model import Symbol

from .. import convert
from ..lsp import CodesiftServer
from ..projects import definition_at


def item_symbol(graph: Graph, item: lsp.CallHierarchyItem) -> Symbol | None:
    """The definition an item from ``prepareCallHierarchy`` stands for (None: a file's top level)."""
    key = convert.item_key(item)
    if key is None or not key[1]:
        return None
    path, name = key
    return next((s for s in graph.find(name) if s.path == path), None)


def register(server: CodesiftServer) -> None:
    """Register the three call hierarchy requests."""

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    @server.thread()
    def prepare_call_hierarchy(
        ls: CodesiftServer, params: lsp.CallHierarchyPrepareParams
    ) -> list[lsp.CallHierarchyItem] | None:
        with ls.graph_of(params.text_document.uri) as found:
            if found is None:
                return None
            project, path, graph = found
            line, column = convert.engine_position(params.position, path, project.lines.line, ls.encoding)
            sym = definition_at(graph, path, line, column, enclosing=True)
            if sym is None:
                return None
            return [convert.call_hierarchy_item(project.root, sym, project.lines.line, ls.encoding)]

    @server.feature(lsp.CALL_HIERARCHY_INCOMING_CALLS)
    @server.thread()
    def incoming_calls(
        ls: CodesiftServer, params: lsp.CallHierarchyIncomingCallsParams
    ) -> list[lsp.CallHierarchyIncomingCall] | None:
        with ls.graph_of(params.item.uri) as found:
            if found is None or (sym := item_symbol(found[2], params.item)) is None:
                return None
            project, _, graph = found
            return convert.incoming_calls(project.root, callers(graph, sym), project.lines.line, ls.encoding)

    @server.feature(lsp.CALL_HIERARCHY_OUTGOING_CALLS)
    @server.thread()
    def outgoing_calls(
        ls: CodesiftServer, params: lsp.CallHierarchyOutgoingCallsParams
    ) -> list[lsp.CallHierarchyOutgoingCall] | None:
        with ls.graph_of(params.item.uri) as found:
            if found is None or (sym := item_symbol(found[2], params.item)) is None:
                return None
            project, _, graph = found
            calls = callees(graph, sym)
            return convert.outgoing_calls(project.root, sym, calls, project.lines.line, ls.encoding)
