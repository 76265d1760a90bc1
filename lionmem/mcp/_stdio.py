"""The MCP server over stdio: a cap on one request's size, and every request answered at the end.

The SDK's stdio transport takes one JSON-RPC message per line from a stream it iterates; the
lines of ``BoundedLines``, read in a daemon thread, fill that stream, and another daemon thread
writes the answers, so that a stop (Ctrl-C, SIGTERM) waits for no read of stdin and no write
to a client that stopped reading stdout. A line of at most the cap (its newline not counted) comes back
whole, decoded as the SDK decodes stdin; a longer one is never held: once more than the cap is
read, the rest is read and dropped in chunks up to its newline. Its answer, an Invalid
Request error, goes out on a clone of the transport's write stream, with the request's id when
the first or last bytes of the line give it; the next line is served as usual. A line that is
no JSON-RPC message, which the SDK would drop unanswered, gets Parse error or Invalid Request
the same way, unless it is a client's response (JSON-RPC answers none), and so does a line
that is not UTF-8 text, which the SDK would serve with its bad bytes replaced. When stdin ends,
the SDK would cancel the requests still running; the server sees the end only once each request
read was answered or ended unanswered (cancelled by the client), or ``END_WAIT`` later.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import re
import select
import sys
import threading
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from functools import partial
from types import TracebackType
from typing import Any, BinaryIO, Protocol, Self, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic_core import ValidationError, from_json

from lionmem._threads import start_thread
from lionmem.mcp._bounds import DEFAULT_MAX_REQUEST_BYTES, check_request_cap
from lionmem.mcp._ids import ODD_ID, is_request_id

__all__ = [
    "DISCARD_CHUNK",
    "END_WAIT",
    "HEAD_BYTES",
    "TAIL_BYTES",
    "BoundedLines",
    "LineSource",
    "not_a_message",
    "request_too_large",
    "serve_stdio",
]

DISCARD_CHUNK = 65_536
"""How many bytes of an oversized line are read at a time while it is dropped."""

TAIL_BYTES = 512
"""How many of the last bytes of an oversized line are kept to find the request's id in."""

HEAD_BYTES = 4096
"""How many of the first bytes of an oversized line are parsed to find its method and id."""

END_WAIT = 60.0
"""How many seconds the end of stdin waits for the requests still running to be answered."""


class LineSource(Protocol):
    """A binary stream read a line at a time with a size bound (``io.BufferedReader``, ``BytesIO``)."""

    def readline(self, size: int = -1, /) -> bytes: ...


class BoundedLines:
    """A text file of the lines of ``source``, each of at most ``max_bytes`` bytes.

    A line ends with ``\n`` or ``\r\n``, which are not counted. A longer line is read to its end
    in chunks and dropped; then ``on_oversized`` gets its first ``max_bytes + 2`` bytes and its
    last ``TAIL_BYTES``, so no more than that plus ``DISCARD_CHUNK`` bytes are held at once. A
    last line without a newline counts as a line.
    ``readline`` blocks on ``source``; the server calls it in a thread of its own, where
    ``on_oversized`` runs too, and ``on_line``, given each line returned (as bytes).
    """

    def __init__(
        self,
        source: LineSource,
        max_bytes: int,
        on_oversized: Callable[[bytes, bytes], None],
        on_line: Callable[[bytes, str | None], None] | None = None,
    ) -> None:
        if max_bytes < 0:
            msg = f"the largest line must be 0 bytes or more, got {max_bytes}"
            raise ValueError(msg)
        self._source = source
        self._max_bytes = max_bytes
        self._on_oversized = on_oversized
        self._on_line = on_line

    def readline(self) -> str:
        """Return the next line that fits, its newline included; ``""`` at the end of input."""
        while True:
            # Room for the cap and a newline of two bytes (\r\n), neither of which counts.
            line = self._source.readline(self._max_bytes + 2)
            ended = line.endswith(b"\n")
            content = line.removesuffix(b"\n").removesuffix(b"\r") if ended else line
            if len(content) <= self._max_bytes:
                try:
                    text, undecodable = line.decode("utf-8"), None
                except UnicodeDecodeError as error:
                    # Decoded as the SDK decodes stdin, for it to go on; the line is answered.
                    text = line.decode("utf-8", errors="replace")
                    undecodable = f"not UTF-8 text (byte {error.start} cannot be decoded)"
                if line and self._on_line is not None:
                    self._on_line(line, undecodable)
                return text
            del content
            tail = line[-TAIL_BYTES:]
            while not ended:
                chunk = self._source.readline(DISCARD_CHUNK)
                tail = (tail + chunk[-TAIL_BYTES:])[-TAIL_BYTES:]
                ended = not chunk or chunk.endswith(b"\n")
            self._on_oversized(line, tail)
            del line


_STRING = rb'"(?:[^"\\\x00-\x1f]|\\.)*"'

# A last member "id" (perhaps before "jsonrpc") whose value is a string, a number, a boolean or
# null, closing the line: in valid JSON that closing brace ends the message, so the key is the
# message's own, not one nested in its params.
_TAIL_ID = re.compile(
    rb'[{,]\s*"id"\s*:\s*(' + _STRING + rb"|-?[0-9][-+.eE0-9]*|true|false|null)"
    rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$'
)
_LEADING_KEY = re.compile(rb"\s*(" + _STRING + rb")\s*:\s*")
_LEADING_VALUE = re.compile(
    rb"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|" + _STRING + rb"|true|false|null)\s*([,}])"
)
_UNREAD = object()
"""The value of a leading member that is not a string, number, boolean or null."""


def _leading_members(head: bytes) -> dict[str, Any]:
    """The first members of the object ``head`` starts, whose JSON is broken further on.

    Each key maps to its value when that is a string, a number, a boolean or null followed by
    ``,`` or ``}`` (so it is whole), else to ``_UNREAD``, and the scan ends there: what follows
    a value of another kind could be a key of a nested object. The first of a key counts.
    """
    opening = re.match(rb"\s*\{", head)
    members: dict[str, Any] = {}
    position = opening.end() if opening is not None else len(head)
    while (key := _LEADING_KEY.match(head, position)) is not None:
        try:
            name = from_json(key.group(1))
        except ValueError:  # a key with a bad escape
            break
        value = _LEADING_VALUE.match(head, key.end())
        if value is None:
            members.setdefault(name, _UNREAD)
            break
        try:
            members.setdefault(name, from_json(value.group(1)))
        except ValueError:  # a string with a bad escape
            members.setdefault(name, _UNREAD)
            break
        if value.group(2) == b"}":
            break
        position = value.end()
    return members


def _head(prefix: bytes) -> tuple[dict[str, Any], bool] | None:
    """The members of the message in the first ``HEAD_BYTES`` of its line, and whether they
    were parsed (else they are the leading ones of broken JSON); ``None`` for no object."""
    try:
        message = from_json(prefix[:HEAD_BYTES], allow_partial=True)
    except ValueError:
        members = _leading_members(prefix[:HEAD_BYTES])
        return (members, False) if members else None
    return (message, True) if isinstance(message, dict) else None


def _is_response(prefix: bytes) -> bool:
    """Whether the line starting with ``prefix`` is a client's response (a result or an error,
    no method): JSON-RPC answers no response, even one it cannot read."""
    head = _head(prefix)
    return (
        head is not None and "method" not in head[0] and not {"result", "error"}.isdisjoint(head[0])
    )


def _request_id(prefix: bytes, tail: bytes) -> str | int | None:
    """The id of the request whose line starts with ``prefix`` and ends with ``tail``, if known.

    Only a message whose ``method`` is in its first ``HEAD_BYTES`` is a request: a client's
    response gets no answer that refers to its id. The id is taken from there when a key
    follows it (so its value is whole), else from the last members of the line; in JSON broken
    within the head, from its leading members. Parsing no more than the head keeps the objects
    it makes few, whatever the line holds.
    """
    head = _head(prefix)
    if head is None:
        return None
    message, parsed = head
    if not parsed:
        value = message.get("id") if "method" in message else None
        return value if is_request_id(value) else None
    if not isinstance(message.get("method"), str):
        return None
    keys = list(message)
    if "id" in keys and keys[-1] != "id":
        value = message["id"]
    else:
        found = _TAIL_ID.search(tail)
        if found is None:
            return None
        try:
            value = from_json(found.group(1))
        except ValueError:  # a string with a bad escape
            return None
    return value if is_request_id(value) else None


def request_too_large(
    max_request_bytes: int, prefix: bytes = b"", tail: bytes = b""
) -> types.JSONRPCError:
    """The answer to a line over the cap: Invalid Request, with the request's id if it is known.

    ``prefix`` and ``tail`` are the first and last bytes of the line; without an id in them the
    id is null, as JSON-RPC says of a request whose id cannot be read.
    """
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(prefix, tail),
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message=(
                f"Request too large: a request may be at most {max_request_bytes} bytes; "
                "this one was longer and was discarded"
            ),
            data={"maxRequestBytes": max_request_bytes},
        ),
    )


def not_utf8(problem: str, prefix: bytes, tail: bytes) -> types.JSONRPCError:
    """The answer to a line that is not UTF-8 text (``problem`` says where): Parse error, with
    the request's id if the line shows it. Decoded with replacement characters, as the SDK reads
    stdin, it would be served with its text changed."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(prefix, tail),
        error=types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {problem}"),
    )


def not_a_message(problem: ValidationError, prefix: bytes, tail: bytes) -> types.JSONRPCError:
    """The answer to a line the SDK could not read as a JSON-RPC message (``problem``): Parse
    error when it is not JSON, else Invalid Request; the request's id if the line shows it.

    ``prefix`` and ``tail`` are the first and last bytes of the line, as for ``request_too_large``.
    """
    first = problem.errors()[0]
    if first["type"] == "json_invalid":
        code, message = (
            types.PARSE_ERROR,
            f"Parse error: {first['msg'].removeprefix('Invalid JSON: ')}",
        )
    elif prefix.lstrip().startswith(b"["):
        code, message = (
            types.INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one message a line",
        )
    else:
        code, message = (
            types.INVALID_REQUEST,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
        )
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(prefix, tail),
        error=types.ErrorData(code=code, message=message),
    )


def _odd_id(message: types.JSONRPCMessage, prefix: bytes, tail: bytes) -> bool:
    """Whether ``message`` is a notification whose line has an ``id`` all the same: one the SDK
    read as a notification because its id (null, a fraction, a boolean) is none it knows.

    ``prefix`` and ``tail`` are the first and last bytes of the line: the id is looked for in
    the first ``HEAD_BYTES`` and as the last member closing the line.
    """
    if not isinstance(message, types.JSONRPCNotification):
        return False
    try:
        head = from_json(prefix, allow_partial=True)
    except ValueError:
        head = None
    return (isinstance(head, dict) and "id" in head) or _TAIL_ID.search(tail) is not None


class _Open:
    """How many requests of each id were read and are not settled yet (answered, or ended
    without an answer, as one the client cancelled)."""

    def __init__(self) -> None:
        self._ids: Counter[types.RequestId] = Counter()
        self._none = anyio.Event()
        self._none.set()

    def add(self, request_id: types.RequestId) -> None:
        if not self._ids:
            self._none = anyio.Event()
        self._ids[request_id] += 1

    def settle(self, request_id: types.RequestId | None) -> None:
        if request_id is not None and request_id in self._ids:
            self._ids[request_id] -= 1
            if not self._ids[request_id]:
                del self._ids[request_id]
        if not self._ids:
            self._none.set()

    async def wait_none(self) -> None:
        """Return once no request is open, or after ``END_WAIT`` seconds."""
        with anyio.move_on_after(END_WAIT):
            await self._none.wait()


class _Closing:
    """Closes the wrapped stream (the server closes each stream it is given when it ends)."""

    def __init__(self, stream: Any, open_requests: _Open) -> None:
        self._stream = stream
        self._open = open_requests

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _Requests(_Closing):
    """The transport's read stream, ending only once every request read from it is settled.

    The transport makes one item of each line, in order; ``lines`` holds the first and last
    bytes of each line read, and why it is not UTF-8 text if it is not, so that a line it could
    not read, or would read changed, is answered by ``answer``.
    """

    def __init__(
        self,
        stream: Any,
        open_requests: _Open,
        lines: deque[tuple[bytes, bytes, str | None]],
        answer: Callable[[SessionMessage], Awaitable[None]],
    ) -> None:
        super().__init__(stream, open_requests)
        self._lines = lines
        self._answer = answer

    @property
    def last_context(self) -> contextvars.Context | None:
        """The context the transport read the last message in (the SDK looks for it)."""
        context: contextvars.Context | None = getattr(self._stream, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                item: SessionMessage | Exception = await self._stream.receive()
            except anyio.EndOfStream:
                await self._open.wait_none()
                raise
            prefix, tail, undecodable = self._lines.popleft() if self._lines else (b"", b"", None)
            if undecodable is not None:
                # Served as the SDK decoded it, its text would be changed: answered, not run.
                if not _is_response(prefix):
                    await self._answer(SessionMessage(not_utf8(undecodable, prefix, tail)))
            elif isinstance(item, ValidationError):
                # Neither a blank line nor a client's response (JSON-RPC answers none) gets one.
                if prefix.strip() and not _is_response(prefix):
                    await self._answer(SessionMessage(not_a_message(item, prefix, tail)))
            elif isinstance(item, SessionMessage) and _odd_id(item.message, prefix, tail):
                await self._answer(SessionMessage(ODD_ID))
            else:
                break
        if (
            isinstance(item, SessionMessage)
            and isinstance(item.message, types.JSONRPCRequest)
            and item.metadata is None
        ):
            # The SDK calls the hook when the request ends without an answer (it matches a
            # cancel to its request by its own rules).
            self._open.add(item.message.id)
            unanswered = partial(_settled, self._open, item.message.id)
            item = SessionMessage(
                item.message, ServerMessageMetadata(on_request_unanswered=unanswered)
            )
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


async def _settled(open_requests: _Open, request_id: types.RequestId) -> None:
    open_requests.settle(request_id)


class _Answers(_Closing):
    """The transport's write stream; an answer handed to it settles its request."""

    async def send(self, item: SessionMessage) -> None:
        try:
            await self._stream.send(item)
        finally:  # an answer that could not be sent (stdout closed) holds nothing back either
            if isinstance(item.message, types.JSONRPCResponse | types.JSONRPCError):
                self._open.settle(item.message.id)


def _say(text: str) -> None:
    print(f"lionmem mcp: {text}", file=sys.stderr, flush=True)


_LOOP_GONE = (anyio.RunFinishedError, RuntimeError, concurrent.futures.CancelledError)
"""What a thread's call into the event loop raises once the loop has ended (or is ending)."""


def _read_lines(
    lines: BoundedLines,
    source: BinaryIO,
    give: MemoryObjectSendStream[str],
    token: anyio.lowlevel.EventLoopToken,
) -> None:
    """Hand each line of ``lines`` (read from ``source``) to ``give`` once the transport takes
    it; close ``give`` at the end of input, and ``source`` once the reading ends.

    A daemon thread runs this: a stop (Ctrl-C, SIGTERM) abandons the read waiting for stdin,
    and the process exits without it, where an anyio worker thread would hold both up until
    the client wrote a line or closed stdin. Once the server is gone the thread just ends. A
    read that fails (an I/O error) is said in one line on stderr and ends the input.
    """
    try:
        while line := lines.readline():
            anyio.from_thread.run(give.send, line, token=token)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, *_LOOP_GONE):
        return  # the server stopped: nothing takes the lines any more
    except OSError as error:
        _say(f"cannot read standard input: {error.strerror or error}")
    finally:
        source.close()
        with suppress(*_LOOP_GONE):
            anyio.from_thread.run_sync(give.close, token=token)


class _Output:
    """The transport's stdout: ``write`` hands a line to the thread writing the answers.

    The stream holds no line: ``write`` waits until the thread takes it, so a client that
    reads slowly slows the server down as a pipe would, and a stop cancels the wait.
    """

    def __init__(self, put: MemoryObjectSendStream[str]) -> None:
        self._put = put

    async def write(self, text: str) -> None:
        with suppress(anyio.BrokenResourceError):  # the thread is gone: nothing can be written
            await self._put.send(text)

    async def flush(self) -> None:
        """Nothing: the thread writes each line whole, unbuffered."""


def _write_lines(
    wire: int,
    take: MemoryObjectReceiveStream[str],
    done: anyio.Event,
    failed: Callable[[OSError], None],
    token: anyio.lowlevel.EventLoopToken,
) -> None:
    """Write each line ``take`` gives to the descriptor ``wire`` until ``take`` ends; then close
    both and set ``done``.

    A daemon thread runs this: a stop (Ctrl-C, SIGTERM) while a write blocks (a client that
    stopped reading) abandons it and the lines not written yet, since the client was not
    reading them, where an anyio worker thread would hold the stop up until the client read.
    A write that fails (the client closed its end) goes to ``failed``, on the event loop; the
    lines after it are dropped. A non-blocking descriptor that is full is waited for.
    """
    broken = False
    try:
        while True:
            try:
                line = anyio.from_thread.run(take.receive, token=token)
            except (anyio.EndOfStream, anyio.ClosedResourceError, *_LOOP_GONE):
                return
            data = memoryview(line.encode("utf-8"))
            while data and not broken:
                try:
                    data = data[os.write(wire, data) :]
                except BlockingIOError:
                    waiting = select.poll()
                    waiting.register(wire, select.POLLOUT)
                    waiting.poll()
                except OSError as error:
                    broken = True
                    with suppress(*_LOOP_GONE):
                        anyio.from_thread.run_sync(failed, error, token=token)
    finally:
        os.close(wire)
        with suppress(*_LOOP_GONE):
            anyio.from_thread.run_sync(take.close, token=token)
            anyio.from_thread.run_sync(done.set, token=token)


def _is_a_stop(group: BaseExceptionGroup[BaseException]) -> bool:
    """Whether ``group`` is what a stop (Ctrl-C, SIGTERM) leaves of the transport: this task
    is being cancelled, and its tasks failed only on streams the stop closed under them."""
    task = asyncio.current_task()
    _, rest = group.split(
        (anyio.BrokenResourceError, anyio.ClosedResourceError, asyncio.CancelledError)
    )
    return rest is None and task is not None and task.cancelling() > 0


class _ExtraAnswers:
    """Answers the server sends beside the SDK's (a request too large, a line that is no
    message), through a clone of the transport's writer once it exists."""

    def __init__(self) -> None:
        self._ready = anyio.Event()
        self._send: Callable[[SessionMessage], Awaitable[None]] | None = None

    def attach(self, send: Callable[[SessionMessage], Awaitable[None]]) -> None:
        self._send = send
        self._ready.set()

    async def send(self, answer: SessionMessage) -> None:
        await self._ready.wait()
        assert self._send is not None
        await self._send(answer)


async def _run(
    server: Server[Any],
    stdin: anyio.AsyncFile[str],
    stdout: anyio.AsyncFile[str],
    read: deque[tuple[bytes, bytes, str | None]],
    extra: _ExtraAnswers,
) -> None:
    """Run ``server`` on the SDK's stdio transport over ``stdin`` and ``stdout``; a stop
    (Ctrl-C, SIGTERM) ends it as a cancellation, not as the errors it leaves (``_is_a_stop``)."""
    try:
        async with (
            stdio_server(stdin=stdin, stdout=stdout) as (reader, writer),
            writer.clone() as refusals,
        ):
            # The clone keeps the transport's writer open until every answer was handed over.
            extra.attach(refusals.send)
            # When stdin ends the SDK cancels the requests still running: it sees the end only
            # once each request read was answered, or cancelled by the client.
            requests = _Open()
            await server.run(
                _Requests(reader, requests, read, extra.send),
                _Answers(writer, requests),
                server.create_initialization_options(),
            )
    except BaseExceptionGroup as group:
        if _is_a_stop(group):
            raise asyncio.CancelledError from group
        raise


def _start(target: Callable[..., None], name: str, *args: Any) -> None:
    start_thread(threading.Thread(target=target, args=args, name=name, daemon=True))


async def serve_stdio(
    server: Server[Any], *, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes stdin.

    A line (one request) longer than ``max_request_bytes`` is answered with an Invalid Request
    error and dropped without being held whole; the lines after it are served. ``ValueError``
    for a cap under 1024 bytes. An answer that cannot be written stops the server:
    ``BrokenPipeError`` when the client closed stdout, another ``OSError`` naming standard
    output otherwise (a full disk).
    """
    check_request_cap(max_request_bytes)
    extra = _ExtraAnswers()
    token = anyio.lowlevel.current_token()

    def refuse(prefix: bytes, tail: bytes) -> None:  # in the reading thread
        answer = SessionMessage(request_too_large(max_request_bytes, prefix, tail))
        anyio.from_thread.run(extra.send, answer, token=token)

    read: deque[tuple[bytes, bytes, str | None]] = deque()

    def note(line: bytes, undecodable: str | None) -> None:  # in the reading thread
        read.append((line[:HEAD_BYTES], line[-TAIL_BYTES:], undecodable))

    # Copies of the descriptors, each closed by its thread: Python aborts at exit when a
    # thread blocked in a read holds the lock of sys.stdin's buffer.
    source = os.fdopen(os.dup(0), "rb")
    lines = BoundedLines(source, max_request_bytes, refuse, note)
    give, take = anyio.create_memory_object_stream[str]()
    _start(_read_lines, "lionmem stdin", lines, source, give, token)
    put, answers = anyio.create_memory_object_stream[str]()
    written = anyio.Event()
    serving = anyio.CancelScope()
    broken: list[OSError] = []

    def failed(error: OSError) -> None:  # on the loop: no answer can reach the client any more
        broken.append(error)
        serving.cancel()

    # The transport only iterates its stdin and writes lines to its stdout.
    stdin = cast("anyio.AsyncFile[str]", take)
    stdout = cast("anyio.AsyncFile[str]", _Output(put))
    saved = os.dup(1)
    try:
        # Given its streams, the transport leaves fd 0 and fd 1 as they are; fd 1 goes to
        # stderr while serving, as the transport would send it, so that stray output misses
        # the wire.
        wire = os.dup(1)
        os.dup2(2, 1)
        _start(_write_lines, "lionmem stdout", wire, answers, written, failed, token)
        try:
            with serving:
                async with put, take:
                    await _run(server, stdin, stdout, read, extra)
        except asyncio.CancelledError:
            # _run's cancellation after a failed write is the cancel of ``serving``, which anyio
            # has taken back by now; a stop (Ctrl-C, SIGTERM) is still counted and wins.
            task = asyncio.current_task()
            if not broken or (task is not None and task.cancelling()):
                raise
    finally:
        with suppress(OSError, ValueError):  # stray output printed while serving: not the wire
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    await written.wait()  # the last answers handed over are written before the server returns
    if broken:
        error = broken[0]
        if isinstance(error, BrokenPipeError):
            raise error  # the client closed stdout: a quiet exit 1, as for any command
        raise OSError(error.errno, f"cannot write standard output: {error.strerror or error}")
