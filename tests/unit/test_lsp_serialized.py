"""A remembered answer kept as JSON text is sent as the very bytes pygls would send for it."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.protocol import LanguageServerProtocol

from codesift.server.lsp import create_server
from codesift.server.protocol import Serialized


def frames_of(data: bytes) -> list[bytes]:
    """The whole frames one write holds (the writer sends what is queued in one write),
    each header and body; fails on a frame cut short."""
    frames = []
    while data:
        header, sep, rest = data.partition(b"\r\n\r\n")
        size = int(header.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0])
        assert sep and len(rest) >= size, "a frame cut short"
        frames.append(header + sep + rest[:size])
        data = rest[size:]
    return frames


class _Raw:
    """Keeps every frame the protocol writes, as bytes (a fake transport: unit test only)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.extend(frames_of(bytes(data)))

    def close(self) -> None:
        return None


def _symbol(name: str, container: str | None, line: int) -> lsp.WorkspaceSymbol:
    where = lsp.Location(
        uri=f"file:///tmp/r%C3%A9po/{name}.py",
        range=lsp.Range(
            start=lsp.Position(line=line, character=4), end=lsp.Position(line=line + 3, character=0)
        ),
    )
    return lsp.WorkspaceSymbol(
        name=name, kind=lsp.SymbolKind.Method, location=where, container_name=container
    )


SYMBOLS = [_symbol("parse", "Config", 3), _symbol("données_é", None, 10), _symbol('q"uote\\', "A.B", 0)]


def _frames(result_of: object) -> list[bytes]:
    server = create_server()
    protocol = server.protocol
    out = _Raw()
    protocol.set_writer(out)
    for msg_id in (7, "abc-8"):
        protocol._result_types[msg_id] = lsp.WorkspaceSymbolResponse
        protocol._send_response(msg_id, result=result_of)
    protocol.writer.drain()
    return out.frames


def test_a_serialized_answer_is_sent_byte_for_byte_as_pygls_sends_the_objects() -> None:
    server = create_server()
    text = server.protocol.serialize(SYMBOLS)  # type: ignore[attr-defined]
    spliced = _frames(text)
    # pygls' own path for the objects themselves (what was sent before)
    plain = create_server().protocol
    out = _Raw()
    plain.set_writer(out)
    for msg_id in (7, "abc-8"):
        plain._result_types[msg_id] = lsp.WorkspaceSymbolResponse
        LanguageServerProtocol._send_response(plain, msg_id, result=SYMBOLS)
    plain.writer.drain()
    assert len(spliced) == 2
    assert spliced == out.frames
    assert b"donn\\u00e9es" in spliced[0]  # ASCII on the wire: Content-Length counts bytes


def test_joined_answers_are_one_array_in_order() -> None:
    protocol = create_server().protocol
    a = protocol.serialize(SYMBOLS[:1])  # type: ignore[attr-defined]
    b = protocol.serialize(SYMBOLS[1:])  # type: ignore[attr-defined]
    empty = Serialized("[]")
    assert Serialized.join([a]) is a
    assert Serialized.join([empty, a, empty, b]).text == protocol.serialize(SYMBOLS).text  # type: ignore[attr-defined]
    assert Serialized.join([empty, empty]).text == "[]"
