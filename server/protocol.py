"""The server's JSON-RPC protocol: every message written whole by one writer, requests
answered directly from their JSON where a method allows it (``Direct``), the
specification's lifecycle, cancellation, and answers serialised once (``Serialized``)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import json
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeAlias, cast

from lsprotocol import types as lsp
from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcRequestCancelled,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

from codesift.indexer.heap import QuietTrim

from .stream import single_writer

log = logging.getLogger(__name__)


class _Answered:
    """Stands in for a request that was already answered with an error while parsing it."""


class Serialized:
    """A result already turned into JSON text: sent by splicing it into the response frame.

    A remembered ``workspace/symbol`` answer is 100 symbols: cattrs and ``json.dumps``
    over them took ~1.2 ms each time it was sent, which bounded a warm burst. Kept as
    text, a repeat costs one string join (``CodesiftProtocol._send_response``). The
    text is held as the bytes it is sent as, encoded once where it is made (a worker
    thread), not for every copy sent from the event loop."""

    __slots__ = ("data",)

    def __init__(self, text: str) -> None:
        self.data = text.encode(LanguageServerProtocol.CHARSET)

    @property
    def text(self) -> str:
        return self.data.decode(LanguageServerProtocol.CHARSET)

    @staticmethod
    def join(parts: list[Serialized]) -> Serialized:
        """The JSON arrays in ``parts`` as one array, in order."""
        if len(parts) == 1:
            return parts[0]
        joined = Serialized("")
        joined.data = b"[" + b", ".join(p.data[1:-1] for p in parts if p.data != b"[]") + b"]"
        return joined


# What a request answered directly gives for its answer: parts joined in order, each
# ready or still being computed (a shared future: ``AnswerCache.share``, ``Lanes``).
Part: TypeAlias = Serialized | Future[Any]


class Direct:
    """How one method is answered straight from its JSON (``CodesiftProtocol.answer_directly``):
    ``parse`` reads the params into ``serve``'s arguments, or None for anything it does
    not read (pygls' own path answers those, its errors included); ``serve`` gives the
    answer's parts, on the event loop."""

    __slots__ = ("parse", "serve")

    def __init__(
        self, parse: Callable[[object], tuple[Any, ...] | None], serve: Callable[..., list[Part]]
    ) -> None:
        self.parse = parse
        self.serve = serve


class _DirectRequest:
    """A request to be answered directly: what ``structure_message`` made of its JSON."""

    __slots__ = ("args", "direct", "method", "msg_id")

    def __init__(self, msg_id: int | str, method: str, args: tuple[Any, ...], direct: Direct) -> None:
        self.msg_id = msg_id
        self.method = method
        self.args = args
        self.direct = direct


class _Waiting:
    """A direct request whose answer is still being computed. It stands in
    ``_request_futures`` as a future would, so ``$/cancelRequest`` and ``shutdown``
    cancel it (answered RequestCancelled at once; the shared computation goes on for
    the others asking the same)."""

    __slots__ = ("answered", "msg_id", "parts", "protocol")

    def __init__(self, protocol: CodesiftProtocol, msg_id: int | str, parts: list[Part]) -> None:
        self.protocol = protocol
        self.msg_id = msg_id
        self.parts = parts
        self.answered = False

    def done(self) -> bool:
        return self.answered

    def running(self) -> bool:
        return False

    def cancel(self) -> bool:
        if self.answered:
            return False
        self.answered = True
        self.protocol.forget_request(self.msg_id, self)
        error = JsonRpcRequestCancelled(f'Request with id "{self.msg_id}" is canceled')
        self.protocol._send_response(self.msg_id, error=error.to_response_error())
        return True


class CodesiftProtocol(LanguageServerProtocol):
    """pygls' protocol, plus:

    * the lifecycle the specification fixes: before ``initialize`` a request gets
      ServerNotInitialized (-32002) and a notification is dropped (``exit``
      excepted); a second ``initialize``, and any request after ``shutdown``, get
      InvalidRequest (pygls served the first and left the others unanswered);
    * a request whose params do not fit its type gets an InvalidParams answer
      (pygls would only log it and leave the client waiting); any other malformed
      message is dropped with one line in the log, never a traceback;
    * ``$/cancelRequest`` for a request already running in a worker thread is
      answered at once with RequestCancelled (pygls can only cancel requests that
      have not started); the work finishes unseen and its result is dropped;
    * one writer for the stream (``stream.py``): every message reaches the client
      whole, whatever thread produced it;
    * methods answered straight from their JSON (``answer_directly``:
      ``workspace/symbol``), without pygls' per-request structuring and task.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cancelled_running: set[object] = set()
        self._initialize_seen = False
        self._direct: dict[str, Direct] = {}  # methods answered directly (``answer_directly``)
        self._waiting: dict[Future[Any], list[_Waiting]] = {}  # a shared part → who waits for it
        # heap pages freed by a burst of requests go back to the OS once it is over
        self.quiet_trim = QuietTrim()

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        super().set_writer(single_writer(writer), include_headers)

    # ----- parsing and the lifecycle ------------------------------------------------------

    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls' own version logs a traceback for every malformed message (a
        # ``$/cancelRequest`` whose id is a list printed one to stderr): the same
        # steps, with one line in the log instead.
        if "jsonrpc" not in data:
            return data  # an inner object of the message
        method = data.get("method")
        if type(method) is str and (direct := self._direct.get(method)) is not None:
            msg_id = data.get("id")
            if _valid_id(msg_id) and data["jsonrpc"] == self.VERSION and "error" not in data:
                args = direct.parse(data.get("params"))
                if args is not None:
                    return _DirectRequest(cast(int | str, msg_id), method, args, direct)
        try:
            if "id" not in data:
                kind = self.get_message_type(str(method or "")) or JsonRPCNotification
            elif "error" in data:
                kind = ResponseErrorMessage
            elif method is not None:
                kind = self.get_message_type(str(method)) or JsonRPCRequestMessage
            else:
                kind = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
            return self._converter.structure(data, kind)
        except Exception as exc:
            reason = _reason(exc)
            if "id" in data and method is not None and _valid_id(data["id"]):
                error = JsonRpcInvalidParams(f"invalid params for {method}: {reason}")
                self._send_response(data["id"], error=error.to_response_error())
            else:
                log.info("dropped a malformed message (%s): %s", method or "a response", reason)
            return _Answered()

    def handle_message(self, message: Any) -> None:
        self.quiet_trim.touch()
        if type(message) is _DirectRequest:
            refused = self._lifecycle_error(message.method, True)
            if refused is None:
                self._serve_direct(message)
            else:
                self._send_response(message.msg_id, error=refused.to_response_error())
            return
        if isinstance(message, _Answered):
            return
        if not hasattr(message, "jsonrpc"):  # an array, a number, an object without "jsonrpc"
            log.info("dropped a message that is not JSON-RPC 2.0: %.200s", json.dumps(message, default=str))
            return
        method = getattr(message, "method", None)
        if method is None or method == lsp.EXIT or getattr(message, "jsonrpc", None) != self.VERSION:
            super().handle_message(message)  # responses, exit, junk: as pygls does
            return
        request = hasattr(message, "id")
        if request and not _valid_id(message.id):
            log.info("dropped a %s request whose id is neither a number nor a string", method)
            return
        error = self._lifecycle_error(str(method), request)
        if error is None:
            # pygls' dispatch, without its ``isinstance`` checks against ``typing``
            # protocols (~15 µs a message); each handler runs in a context of its own
            context = contextvars.copy_context()
            params = getattr(message, "params", None)
            if request:
                context.run(self._handle_request, message.id, method, params)
            else:
                context.run(self._handle_notification, method, params)
        elif request:
            self._send_response(message.id, error=error.to_response_error())

    def _lifecycle_error(self, method: str, request: bool) -> JsonRpcException | None:
        """Why the lifecycle refuses this message now (a refused notification is dropped)."""
        if self._shutdown:
            return JsonRpcInvalidRequest(f"{method}: the server is shutting down")
        if method == lsp.INITIALIZE and request:
            if self._initialize_seen:
                return JsonRpcInvalidRequest("initialize: the server is already initialized")
            self._initialize_seen = True
            return None
        if not self._initialize_seen:
            return JsonRpcServerNotInitialized(f"{method}: the server is not initialized yet")
        return None

    # ----- requests answered directly --------------------------------------------------------

    def answer_directly(self, method: str, direct: Direct) -> None:
        """Answer ``method`` from its JSON: no cattrs structuring of the params, no task
        per request, no thread hop for an answer that is ready; a request whose answer is
        being computed waits on the event loop, and one callback answers every request
        waiting for the same computation. pygls spent ~80 µs of the event loop on each
        request (cattrs, ``isinstance`` against its ``typing`` protocols, a task, a
        future chained per copy): a burst of 200 ``workspace/symbol`` requests held the
        GIL ~16 ms for that alone. The method's pygls feature stays registered (its
        capability, and every request ``direct.parse`` does not read)."""
        self._direct[method] = direct

    def _serve_direct(self, message: _DirectRequest) -> None:
        try:
            parts = message.direct.serve(*message.args)
        except Exception as exc:
            self._answer_failed(message.msg_id, exc)
            return
        waiting = [p for p in parts if isinstance(p, Future) and not p.done()]
        if not waiting:
            self._answer_parts(message.msg_id, parts)
            return
        asker = _Waiting(self, message.msg_id, parts)
        self._request_futures[message.msg_id] = cast(Future[Any], asker)
        loop = _running_loop()
        for part in waiting:
            askers = self._waiting.get(part)
            if askers is None:
                self._waiting[part] = askers = [asker]
                part.add_done_callback(partial(self._part_done, loop))
            else:
                askers.append(asker)

    def _part_done(self, loop: asyncio.AbstractEventLoop | None, part: Future[Any]) -> None:
        """A shared part is computed (on a worker thread): its askers are answered on the loop."""
        if loop is None:
            self._answer_waiting(part)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
            loop.call_soon_threadsafe(self._answer_waiting, part)

    def _answer_waiting(self, part: Future[Any]) -> None:
        for asker in self._waiting.pop(part, ()):
            if asker.answered or not all(p.done() for p in asker.parts if isinstance(p, Future)):
                continue
            asker.answered = True
            self.forget_request(asker.msg_id, asker)
            self._answer_parts(asker.msg_id, asker.parts)

    def _answer_parts(self, msg_id: int | str, parts: list[Part]) -> None:
        if any(isinstance(p, Future) and p.cancelled() for p in parts):
            error = JsonRpcRequestCancelled(f'Request with id "{msg_id}" is canceled')
            self._send_response(msg_id, error=error.to_response_error())
            return
        try:
            done = [p.result() if isinstance(p, Future) else p for p in parts]
        except Exception as exc:
            self._answer_failed(msg_id, exc)
            return
        self._send_response(msg_id, result=Serialized.join(done))

    def _answer_failed(self, msg_id: int | str, exc: BaseException) -> None:
        """An error answered as a failed handler's is (``_send_handler_result``)."""
        failed: Future[Any] = Future()
        failed.set_exception(exc)
        self._send_handler_result(failed, msg_id=msg_id)

    def forget_request(self, msg_id: object, running: object) -> None:
        """Drop ``msg_id`` from the running requests if ``running`` is what it stands for."""
        if self._request_futures.get(cast(Any, msg_id)) is running:
            del self._request_futures[cast(Any, msg_id)]

    # ----- cancelling ---------------------------------------------------------------------

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if not _valid_id(msg_id):
            log.info("ignored a $/cancelRequest whose id is neither a number nor a string")
            return
        future = self._request_futures.get(msg_id)
        if isinstance(future, concurrent.futures.Future) and future.running():
            self._request_futures.pop(msg_id, None)
            self._cancelled_running.add(msg_id)
            error = JsonRpcRequestCancelled(f'Request with id "{msg_id}" is canceled')
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._handle_cancel_notification(msg_id)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        self.quiet_trim.touch()
        if error is not None or not isinstance(result, Serialized):
            super()._send_response(msg_id, result=result, error=error)
            return
        # The frame pygls would write for this result (fields in the response's order),
        # spliced from the text instead of rebuilt from the objects.
        self._result_types.pop(msg_id, None)
        head = f'{{"id": {json.dumps(msg_id)}, "result": '.encode(self.CHARSET)
        self._write_body(head, result.data, f', "jsonrpc": "{self.VERSION}"}}'.encode(self.CHARSET))

    def _write_body(self, *body: bytes) -> None:
        """The body made of ``body``'s parts, framed as pygls' ``_send_data`` frames it."""
        if self.writer is None:
            log.error("unable to send data: no transport")
            return
        if self._include_headers:
            size = sum(len(b) for b in body)
            header = (
                f"Content-Length: {size}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            body = (header.encode(self.CHARSET), *body)
        self.writer.write(b"".join(body))

    def serialize(self, value: Any) -> Serialized:
        """``value`` as pygls would write it in a response, kept as JSON text."""
        return Serialized(json.dumps(value, default=self._serialize_message))

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        if msg_id in self._cancelled_running:
            self._cancelled_running.discard(msg_id)  # answered when it was cancelled
            return
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException):  # an answer (bad params…), not a server fault:
            self._request_futures.pop(msg_id, None)  # no traceback in the log for it
            log.info("request %s: %s", msg_id, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
        # pygls runs a generator handler's inner step (``workspace/executeCommand`` →
        # the command) under a fresh uuid in ``_request_futures`` and never removes it:
        # every command's future, its answer with it (a grep of a common word: MiBs),
        # stayed there for the server's life. It is done when this runs: forget it.
        if future is not None:
            for key, running in list(self._request_futures.items()):
                if running is future:
                    self._request_futures.pop(key, None)
        super()._run_generator(future, gen=gen, result_future=result_future)

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls' shutdown, over a copy of the running requests: worker threads remove
        theirs as they finish, and iterating the live dict failed ("dictionary changed
        size during iteration"), leaving shutdown unanswered and the server serving."""
        if (user_handler := self.fm.features.get(lsp.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True
        return None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _valid_id(value: object) -> bool:
    """A JSON-RPC id: a number or a string."""
    return isinstance(value, int | str) and not isinstance(value, bool)


def _reason(exc: BaseException) -> str:
    """The first leaf of a cattrs error group, readable."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
