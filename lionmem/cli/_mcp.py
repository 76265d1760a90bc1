"""``lionmem mcp``: serve a store to MCP clients, over stdio or streamable HTTP (``--http``).

The store is selected like every other command's (``--db``, ``--namespace``). Arguments are
checked before the store is opened: the address, the token policy (a non-loopback address needs
``--token`` or ``$LIONMEM_MCP_TOKEN``) and the limits (of a search, a response, a request).
stdout carries the protocol over stdio, so every message of this command goes to stderr. The
server needs the ``mcp`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lionmem.cli._errors import OK, CommandError
from lionmem.cli._signals import run
from lionmem.cli._store import (
    add_store_arguments,
    describe_target,
    open_store,
    store_target,
    target_source,
)
from lionmem.mcp._bounds import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LIMIT,
    DEFAULT_MAX_REQUEST_BYTES,
    check_request_cap,
    check_server_limits,
)

__all__ = ["ENV_TOKEN", "register"]

ENV_TOKEN = "LIONMEM_MCP_TOKEN"


# ``commands`` is argparse's subparsers action, whose class argparse keeps private.
def register(commands: Any) -> None:
    """Add the ``mcp`` subcommand to ``commands`` (the result of ``add_subparsers``)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "mcp",
        help="serve the store to MCP clients (stdio, or streamable HTTP with --http)",
        description=(
            "Serve the store as an MCP server with the tools memory_store, memory_retrieve, "
            "memory_search, memory_delete and memory_count: over stdin and stdout, or over "
            "streamable HTTP at http://HOST:PORT/mcp with --http. Messages go to stderr."
        ),
    )
    add_store_arguments(parser)
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at this address instead of stdio (e.g. 127.0.0.1:8000; "
        "port 0 picks a free one; [::1]:8000 for IPv6)",
    )
    parser.add_argument(
        "--token",
        help=f"bearer token every HTTP request must carry (default: ${ENV_TOKEN}); required "
        "for an address that is not loopback",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept HTTP requests from this browser origin (scheme://host[:port]; "
        "repeatable); loopback origins are always accepted",
    )
    parser.add_argument(
        "--max-limit",
        type=int,
        default=DEFAULT_MAX_LIMIT,
        metavar="N",
        help=f"the largest limit a search gets; larger limits are lowered (default {DEFAULT_MAX_LIMIT})",
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"the largest response, in bytes (default {DEFAULT_MAX_BYTES})",
    )
    parser.add_argument(
        "--max-request-bytes",
        type=int,
        default=DEFAULT_MAX_REQUEST_BYTES,
        metavar="N",
        help="the largest request, in bytes: a longer stdio line is answered with an error and "
        f"dropped, a larger HTTP body refused with 413 (default {DEFAULT_MAX_REQUEST_BYTES})",
    )
    parser.set_defaults(handler=_run)


def _say(text: str) -> None:
    print(f"lionmem mcp: {text}", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    try:
        from lionmem.mcp import (
            create_server,
            http_app,
            parse_address,
            serve_http,
            serve_stdio,
        )
        from lionmem.mcp._http import check_exposure, normal_origins
    except ImportError as exc:
        raise CommandError(str(exc)) from None
    if args.http is None and (args.token is not None or args.allow_origin):
        msg = "--token and --allow-origin apply to HTTP only: add --http HOST:PORT"
        raise CommandError(msg)
    token = args.token if args.token is not None else os.environ.get(ENV_TOKEN) or None
    try:
        check_server_limits(args.max_limit, args.max_bytes)
        check_request_cap(args.max_request_bytes)
        address = None if args.http is None else parse_address(args.http)
        if address is not None:
            check_exposure(address, token)
            normal_origins(args.allow_origin)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    target = store_target(args.db)

    async def serve() -> None:
        store = await open_store(
            target, namespace=args.namespace, create=True, given_as=target_source(args.db)
        )
        try:
            server = create_server(store, max_limit=args.max_limit, max_bytes=args.max_bytes)
            if address is None:
                _say(f"serving {describe_target(target)} over stdio")
                await serve_stdio(server, max_request_bytes=args.max_request_bytes)
                return
            app = http_app(
                server,
                address,
                token=token,
                allowed_origins=args.allow_origin,
                max_request_bytes=args.max_request_bytes,
            )
            try:
                await serve_http(
                    app,
                    address,
                    on_ready=lambda url: _say(f"serving {describe_target(target)} at {url}"),
                )
            except OSError as exc:  # the address cannot be bound, or its name not resolved
                # A resolver's error (socket.gaierror) has a negative number of its own.
                number = exc.errno or 0
                reason = os.strerror(number) if number > 0 else exc.strerror or str(exc)
                raise CommandError(f"cannot serve at {args.http}: {reason}") from None
        finally:
            await store.close()

    run(serve())
    return OK
