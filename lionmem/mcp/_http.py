"""Streamable HTTP for the MCP server: the address, the request guard, and the uvicorn loop.

The guard runs before the SDK sees a request. A request with an ``Origin`` is refused unless
that origin is loopback or given; CORS (the preflight, and the headers a page needs to read an
answer) is spoken to the given ones only, so no browser page is served by default. On a
loopback address the ``Host`` header must name a loopback host too, which defeats DNS
rebinding; with a token, every request needs ``Authorization: Bearer <token>``, compared in
constant time. A non-loopback address is refused without a token: anyone who could reach it
could read and change the memory. A client must send a request's head within ``HEAD_SECONDS``
and its body within ``BODY_SECONDS``, so one that stalls cannot hold a connection for ever; a
session ends after ``SESSION_IDLE_SECONDS`` without a request, and at most ``MAX_SESSIONS`` are
open at once.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import signal
import socket
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import h11
import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ConfigDict
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from lionmem.mcp._bounds import DEFAULT_MAX_REQUEST_BYTES, check_request_cap
from lionmem.mcp._ids import ODD_ID, invalid_request, is_request_id

__all__ = ["HttpAddress", "http_app", "parse_address", "serve_http"]

PATH = "/mcp"
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_MAX_PORT = 65535
_LOOPBACK_NAMES = {"localhost"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
STOP_GRACE = 10
"""Seconds a stopping server waits for requests still running, then cancels them."""
HEAD_SECONDS = 10
"""Seconds a client has to send a request's head, from its connection or the previous answer."""
BODY_SECONDS = 60
"""Seconds a client has to send a request's body whole, from the end of its head."""
SESSION_IDLE_SECONDS = 30 * 60
"""Seconds a session lives with no request of its own running; then its id answers 404."""
MAX_SESSIONS = 10_000
"""Sessions open at once; while that many are, a request opening one more gets 503."""
_ENDING = invalid_request("Session not found: a DELETE is ending it once its requests are answered")
"""The 404 answer to a request of a session being ended (the SDK's, with the reason)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 without brackets) is this machine only."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpAddress:
    """Where to listen: ``host`` (IPv6 without brackets) and ``port`` (0: any free port)."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def parse_address(text: str) -> HttpAddress:
    """Parse ``HOST:PORT`` (``[::1]:PORT`` for IPv6); ``ValueError`` naming what is wrong."""
    host, colon, port = text.rpartition(":")
    if not colon or not host:
        msg = f"expected HOST:PORT (for example 127.0.0.1:8000), got {text!r}"
        raise ValueError(msg)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        msg = f"write an IPv6 address in brackets, as in [::1]:8000, got {text!r}"
        raise ValueError(msg)
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= _MAX_PORT:
        msg = f"the port must be a number from 0 to 65535, got {port!r} in {text!r}"
        raise ValueError(msg)
    return HttpAddress(host, int(port))


def _address(address: HttpAddress | str) -> HttpAddress:
    """``address`` itself, or the ``HOST:PORT`` text parsed; ``TypeError`` for anything else."""
    if isinstance(address, HttpAddress):
        return address
    if isinstance(address, str):
        return parse_address(address)
    msg = f"address must be an HttpAddress or a 'HOST:PORT' str, got {type(address).__qualname__}"
    raise TypeError(msg)


def _origin(text: str) -> str | None:
    """Return ``scheme://host[:port]`` of an origin, lowercased; ``None`` if it is not one.

    The scheme's default port is left out, as browsers leave it out of ``Origin``.
    """
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if port == _DEFAULT_PORTS[parts.scheme]:
        port = None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


class _Guard:
    """ASGI middleware refusing requests from foreign origins, foreign hosts and without the token."""

    def __init__(
        self, app: ASGIApp, *, token: str | None, check_host: bool, origins: frozenset[str]
    ) -> None:
        self._app = app
        self._token = None if token is None else token.encode()
        self._check_host = check_host
        self._origins = origins

    def _origin_allowed(self, origin: str) -> bool:
        normal = _origin(origin)
        if normal is None:
            return False
        hostname = urlsplit(normal).hostname
        return normal in self._origins or (hostname is not None and is_loopback(hostname))

    def _origin_given(self, origin: str) -> bool:
        """Whether ``origin`` was given with --allow-origin: the pages CORS is spoken to."""
        return _origin(origin) in self._origins

    def _host_allowed(self, host: str | None) -> bool:
        if host is None or any(mark in host for mark in "@/\\?#"):
            return False  # a Host header is host[:port], nothing more
        try:
            hostname = urlsplit(f"//{host}").hostname
        except ValueError:
            return False
        return hostname is not None and is_loopback(hostname)

    def _authorized(self, header: str | None) -> bool:
        if self._token is None:
            return True
        scheme, _, credential = (header or "").partition(" ")
        # compare_digest takes as long for every wrong token of a given length.
        return scheme.lower() == "bearer" and hmac.compare_digest(
            credential.strip().encode(), self._token
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if self._origins:
                # Whether an answer carries CORS headers depends on the Origin a cache must key.
                send = _with_headers(send, [(b"vary", b"Origin")])
            if origin is not None and not self._origin_allowed(origin):
                refusal = PlainTextResponse(f"Origin not allowed: {origin}", status_code=403)
                return await refusal(scope, receive, send)
            if self._check_host and not self._host_allowed(headers.get("host")):
                refusal = PlainTextResponse(
                    "Host not allowed: this server answers loopback hosts only", status_code=421
                )
                return await refusal(scope, receive, send)
            if origin is not None and self._origin_given(origin):
                if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
                    # A browser's preflight carries no credentials, and gets no data.
                    return await _preflight(origin, headers)(scope, receive, send)
                send = _with_headers(send, _cors(origin))
            if not self._authorized(headers.get("authorization")):
                refusal = PlainTextResponse(
                    "Missing or wrong bearer token",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="lionmem"'},
                )
                return await refusal(scope, receive, send)
        return await self._app(scope, receive, send)


_CORS_METHODS = "GET, POST, DELETE"
_CORS_EXPOSED = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
_CORS_MAX_AGE = "600"


def _preflight(origin: str, headers: Headers) -> Response:
    """The answer to a CORS preflight from a given ``origin``: the methods of the protocol,
    and the headers the page asked to send (``Mcp-Param-*`` headers vary by tool).

    ``Vary: Origin`` comes from the guard, which adds it to every answer."""
    allowed = {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": _CORS_METHODS,
        "Access-Control-Max-Age": _CORS_MAX_AGE,
        "Vary": "Access-Control-Request-Headers",
    }
    requested = headers.get("access-control-request-headers")
    if requested:
        allowed["Access-Control-Allow-Headers"] = requested
    return Response(status_code=204, headers=allowed)


def _cors(origin: str) -> list[tuple[bytes, bytes]]:
    """The CORS headers a page from ``origin`` needs to read an answer (its session id too)."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", _CORS_EXPOSED.encode()),
    ]


def _with_headers(send: Send, added: list[tuple[bytes, bytes]]) -> Send:
    """``send``, adding ``added`` to the response's headers (a ``Vary`` joins the one there)."""

    async def adding(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            for name, value in added:
                index = next((i for i, (key, _) in enumerate(headers) if key.lower() == name), None)
                if name == b"vary" and index is not None:
                    headers[index] = (headers[index][0], value + b", " + headers[index][1])
                else:
                    headers.append((name, value))
            message = {**message, "headers": headers}
        await send(message)

    return adding


class _Envelope(BaseModel):
    """The ``id`` and ``method`` of the JSON-RPC message a body holds; the rest is skipped, never
    built."""

    model_config = ConfigDict(extra="ignore")

    id: Any = None
    method: Any = None


def _request_id(body: bytes) -> str | int | _OddId | None:
    """The id of the request ``body`` holds; ``None`` for any other body (a notification, a
    client's response, no JSON object: the SDK answers what needs an answer); an ``_OddId`` for
    a request (it has a ``method``) with an ``id`` the SDK does not read as one (null, a
    fraction, a boolean...): it would take it for a notification and drop it."""
    try:
        envelope = _Envelope.model_validate_json(body)
    except ValueError:
        return None
    fields = envelope.model_fields_set
    if "method" not in fields or "id" not in fields:
        return None
    return envelope.id if is_request_id(envelope.id) else _OddId()


class _OddId:
    """What ``_request_id`` gives for an id the SDK does not read."""


class _WholeBody:
    """ASGI middleware reading a request's body whole before the SDK sees it.

    A client that disconnects before its body has arrived ends its request here, unanswered
    and unlogged: the SDK would log the disconnect as an error, traceback and all. Reading
    stops past ``max_bytes``; what was read is handed on, and the SDK refuses it with 413. A
    request whose ``Content-Length`` is over ``max_bytes`` is handed on unread: the SDK refuses
    it before asking for the body (so before ``100 Continue``), and no time is spent reading it.
    A body not whole within ``BODY_SECONDS`` gets 408, and the connection closes. A message
    posted with an id the SDK cannot read gets 400 and ``ODD_ID``, where the SDK would drop it;
    a request with the id of one of its session still running (the same text: ``1`` and ``"1"``
    are one id to the SDK) gets 400 and an Invalid Request naming the id, where the SDK would
    send one answer for the two and leave the other waiting.
    A DELETE ending a session waits until the requests of the session already posted are
    answered, and any request of that session posted meanwhile gets 404 (``_ENDING``): the SDK
    would answer the first 500, and fail the others with a traceback, once the session's streams
    are closed.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
        self._max_bytes = max_bytes
        # The requests running, by session and id (as JSON text: 1 and "1" are two ids).
        self._running: set[tuple[str, str]] = set()
        # The POSTs of each session being served, and the sessions a DELETE is ending: set once
        # none of their POSTs is left.
        self._posts: Counter[str] = Counter()
        self._ending: dict[str, asyncio.Event] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no headers (lifespan)
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self._declared_over_cap(headers):
            await self._app(scope, receive, send)
            return
        body = bytearray()
        more = True
        try:
            async with asyncio.timeout(BODY_SECONDS):
                while more and len(body) <= self._max_bytes:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return  # the client left before its request was whole: nothing to answer
                    body.extend(message.get("body", b""))
                    more = message.get("more_body", False)
        except TimeoutError:
            late = PlainTextResponse(
                f"Request body not received whole within {BODY_SECONDS:g} s",
                status_code=408,
                headers={"Connection": "close"},
            )
            await late(scope, receive, send)
            return
        session = headers.get("mcp-session-id") if scope["path"] == PATH else None
        await self._hand_on(scope, receive, send, body=bytes(body), more=more, session=session)

    async def _hand_on(  # noqa: PLR0913 - the ASGI call, and what was read of the request
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        body: bytes,
        more: bool,
        session: str | None,
    ) -> None:
        """Hand on a request whose body (``body``, whole unless ``more``) was read, or refuse it."""
        request_id = None
        if not more and scope["method"] == "POST" and scope["path"] == PATH:
            request_id = _request_id(body)
        if isinstance(request_id, _OddId):
            await _refuse(ODD_ID, scope, receive, send)
            return
        if session in self._ending:
            await _refuse(_ENDING, scope, receive, send, status=404)
            return
        pending: list[Message] = [{"type": "http.request", "body": body, "more_body": more}]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        if session is None:  # no session to share
            await self._app(scope, replay, send)
        elif scope["method"] == "DELETE":
            await self._end(session, scope, replay, send)
        else:
            await self._in_session(session, request_id, scope, replay, send)

    async def _in_session(
        self,
        session: str,
        request_id: str | int | None,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        key = None
        if request_id is not None:
            # The SDK routes an answer by the text of its id: to it, 1 and "1" are one id.
            key = (session, str(request_id))
            if key in self._running:
                await _refuse(_id_in_use(request_id), scope, receive, send)
                return
            self._running.add(key)
        posted = scope["method"] == "POST"
        if posted:
            self._posts[session] += 1
        try:
            await self._app(scope, receive, send)
        finally:
            if key is not None:
                self._running.discard(key)
            if posted:
                self._posted(session)

    async def _end(self, session: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Hand on the DELETE of ``session`` once its POSTs are answered; refuse new ones."""
        self._ending[session] = none_left = asyncio.Event()
        try:
            if self._posts[session]:
                await none_left.wait()
            await self._app(scope, receive, send)
        finally:
            del self._ending[session]

    def _posted(self, session: str) -> None:
        self._posts[session] -= 1
        if not self._posts[session]:
            del self._posts[session]
            if session in self._ending:
                self._ending[session].set()

    def _declared_over_cap(self, headers: Headers) -> bool:
        length = headers.get("content-length", "").lstrip("0")
        if not (length.isascii() and length.isdigit()):
            return False
        # Compared by its digits first: int() refuses a string of over 4300 digits.
        return len(length) > len(str(self._max_bytes)) or int(length) > self._max_bytes


async def _refuse(
    answer: types.JSONRPCError, scope: Scope, receive: Receive, send: Send, status: int = 400
) -> None:
    """Answer ``answer`` with ``status``, instead of handing the request on."""
    refusal = Response(
        answer.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=status,
        media_type="application/json",
    )
    await refusal(scope, receive, send)


def _id_in_use(request_id: str | int) -> types.JSONRPCError:
    """Invalid Request, with id null (the id is the running request's): a request reusing the id
    of one of its session still running."""
    return invalid_request(
        f"Invalid Request: id {json.dumps(request_id)} is, as text, that of a request of this "
        "session still running; give each request an id of its own"
    )


def check_exposure(address: HttpAddress, token: str | None) -> None:
    """Raise ``ValueError`` for a non-loopback address without a token, or an unusable token.

    A token is unusable when it is empty, or no client can send it as it is: whitespace around
    it, or characters other than printable ASCII.
    """
    if token is not None and not token.strip():
        msg = "the bearer token is empty; give a secret or none"
        raise ValueError(msg)
    if token is not None and token != token.strip():
        msg = (
            "the bearer token starts or ends with whitespace (a space, a tab, a newline), which "
            "a client cannot send in its Authorization header; give it without"
        )
        raise ValueError(msg)
    unsendable = sorted({character for character in token or "" if not " " <= character <= "~"})
    if unsendable:
        msg = (
            f"the bearer token holds {', '.join(map(repr, unsendable))}, which an HTTP header "
            "does not carry as such; use printable ASCII characters only"
        )
        raise ValueError(msg)
    if not address.loopback and token is None:
        msg = (
            f"refusing to serve on {address.host}, which is not a loopback address, without a "
            "bearer token: anyone who can reach it could read and change the memory; pass "
            "--token or set LIONMEM_MCP_TOKEN"
        )
        raise ValueError(msg)


def normal_origins(origins: Iterable[str]) -> frozenset[str]:
    """Return the origins as ``scheme://host[:port]``; ``ValueError`` for one that is not one."""
    normal = set()
    for origin in origins:
        parsed = _origin(origin)
        if parsed is None:
            msg = f"not an origin (scheme://host[:port]): {origin!r}"
            raise ValueError(msg)
        normal.add(parsed)
    return frozenset(normal)


def http_app(
    server: Server[Any],
    address: HttpAddress | str,
    *,
    token: str | None = None,
    allowed_origins: Iterable[str] = (),
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> ASGIApp:
    """Return the ASGI app serving ``server`` at ``/mcp`` behind the guard.

    ``address`` is an ``HttpAddress`` or ``"HOST:PORT"``. A request body over
    ``max_request_bytes`` is refused with 413. ``ValueError`` for a non-loopback address without
    a token, an origin that is not one or a cap under 1024 bytes.
    """
    address = _address(address)
    check_exposure(address, token)
    check_request_cap(max_request_bytes)
    origins = normal_origins(allowed_origins)
    # The guard checks Host and Origin itself: the SDK's check ties one to the other. Each
    # POST of the session protocol is answered with one JSON body, not an event stream: on
    # SIGINT or SIGTERM, sse-starlette ends every event stream at once, the answers of requests
    # still running with it, while uvicorn waits up to STOP_GRACE for a JSON answer. (The
    # server sends nothing but answers; the sessionless protocol answers with JSON either way,
    # and then, as the session protocol always did, runs a request whose client left to its end.)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        json_response=True,
        max_request_body_size=max_request_bytes,
        session_idle_timeout=SESSION_IDLE_SECONDS,
        max_sessions=MAX_SESSIONS,
        host=address.host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return _Guard(
        _WholeBody(app, max_request_bytes),
        token=token,
        check_host=address.loopback,
        origins=origins,
    )


async def serve_http(
    app: ASGIApp, address: HttpAddress | str, *, on_ready: Callable[[str], None] | None = None
) -> None:
    """Serve ``app`` at ``address`` (as for ``http_app``) until SIGINT or SIGTERM; ``on_ready``
    gets the URL. On the signal the server stops taking connections and waits for the requests
    running to be answered; those still running ``STOP_GRACE`` seconds later are cancelled.
    """
    address = _address(address)
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.create_server((address.host, address.port), family=family)
    port = sock.getsockname()[1]
    host = f"[{address.host}]" if ":" in address.host else address.host
    # Without a grace period, one client that never finishes its request keeps the server up.
    config = uvicorn.Config(
        app,
        http=_HeadDeadline,
        timeout_keep_alive=HEAD_SECONDS,  # the idle wait after an answer: the head's deadline
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=STOP_GRACE,
    )
    # After Config, which sets up uvicorn's loggers; taken off again for a program that goes on.
    errors = logging.getLogger("uvicorn.error")
    errors.addFilter(_drop_cancelled_tracebacks)
    try:
        if on_ready is not None:
            on_ready(f"http://{host}:{port}{PATH}")
        await _Server(config).serve(sockets=[sock])
    finally:
        errors.removeFilter(_drop_cancelled_tracebacks)


def _drop_cancelled_tracebacks(record: logging.LogRecord) -> bool:
    """Leave out uvicorn's traceback of a request it cancelled at the end of the stop grace
    (about sixty lines each): the line before says how many it cancelled."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, asyncio.CancelledError)


def _late_head() -> bytes:
    """The 408 answer, whole, to a client whose request head is late."""
    text = f"Request head not received within {HEAD_SECONDS:g} s".encode()
    return (
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(text), text)
    )


class _HeadDeadline(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose next request head has not arrived
    ``HEAD_SECONDS`` after the connection was made or the previous answer was sent.

    uvicorn itself times only the idle wait after an answer, and any byte received ends that
    wait. A client that sent part of a head gets a 408; one that sent nothing, or is still
    sending the body of a request already answered (refused before it was read), is closed.
    """

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]  # a stream transport
        # An answer is written as its head, then its body: with Nagle's algorithm on, the body
        # waits for the client's delayed acknowledgement of the head, about 40 ms. (asyncio turns
        # it off only on sockets created with IPPROTO_TCP, which socket.create_server does not.)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        self._arm()  # before a pipelined request's head is read, which disarms it
        super().on_response_complete()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._disarm()  # the connection is the WebSocket protocol's from now on
        super().handle_websocket_upgrade(event)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request's head arrived
            self._disarm()

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(HEAD_SECONDS, self._late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self.conn.our_state is h11.IDLE and self.conn.trailing_data[0]:
            self.transport.write(_late_head())
        self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, except that SIGINT and SIGTERM end ``serve()`` normally.

    uvicorn raises the signal again once it has shut down, which ends the process before the
    caller can close its store; a stop by signal is the ordinary way to end this server.
    """

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in _STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)
