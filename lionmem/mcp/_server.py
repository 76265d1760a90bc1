"""The MCP server of a store, on the ``mcp`` SDK's low-level ``Server``, and its stdio loop.

The low-level server is used because the tools are defined by documents, not by Python
signatures: it lists the generated tool documents as they are and hands every call to
``MemoryTools``, which answers with structured content and its JSON text. Over stdio the SDK's
transport reads stdin through ``BoundedLines``; a line over the request cap is answered with a
JSON-RPC error on a clone of the transport's write stream, and the next line is served.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any, cast

import anyio
import anyio.from_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from lionmem.errors import UnknownToolError
from lionmem.mcp._bounds import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LIMIT,
    DEFAULT_MAX_REQUEST_BYTES,
    check_request_cap,
)
from lionmem.mcp._stdin import BoundedLines, LineSource
from lionmem.mcp._tools import MemoryTools
from lionmem.protocol import MemoryStore

__all__ = ["create_server", "request_too_large", "serve_stdio"]

INSTRUCTIONS = (
    "Long-term memory. memory_store saves an item (any JSON content, with optional tags and "
    "metadata) and returns its id; memory_search finds items by text, tags and metadata; "
    "memory_retrieve returns one item by id. Every answer is bounded: searches return at most "
    "their limit, and hits too large for one response are listed in omitted, never cut short."
)


def create_server(
    store: MemoryStore,
    *,
    max_limit: int = DEFAULT_MAX_LIMIT,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Server[Any]:
    """Return an MCP server whose tools store, retrieve and search ``store``.

    ``memory_delete`` and ``memory_count`` are listed when the store has ``delete`` and
    ``count``. ``max_limit`` caps every search's limit, ``max_bytes`` every response;
    ``ValueError`` when the cap is too small to report every hit left out at that limit.
    The caller keeps ownership of ``store`` (opening and closing it).
    """
    from lionmem import __version__

    tools = MemoryTools(store, max_limit=max_limit, max_bytes=max_bytes)
    listing = types.ListToolsResult(
        tools=[types.Tool.model_validate(document.tool) for document in tools.documents]
    )
    input_schemas = {document.name: document.input_schema for document in tools.documents}

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            result = await tools.call(params.name, params.arguments)
        except UnknownToolError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        return types.CallToolResult(
            content=[types.TextContent(text=result.text)],
            structured_content=result.structured,
            is_error=result.is_error,
        )

    return Server(
        "lionmem",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schemas.get,
    )


def request_too_large(max_request_bytes: int) -> types.JSONRPCError:
    """The answer to a request over the cap: Invalid Request, with no id (none could be read)."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message=(
                f"Request too large: a request may be at most {max_request_bytes} bytes; "
                "this line was longer and was discarded"
            ),
            data={"maxRequestBytes": max_request_bytes},
        ),
    )


async def serve_stdio(
    server: Server[Any],
    *,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    stdin: LineSource | None = None,
) -> None:
    """Serve ``server`` over stdio until the client closes stdin.

    A line (one request) longer than ``max_request_bytes`` is answered with a JSON-RPC error and
    dropped without being held whole; the lines after it are served. ``stdin`` is the binary
    stream to read, this process's stdin by default; ``ValueError`` for a cap under 1024 bytes.
    """
    check_request_cap(max_request_bytes)
    refusal = SessionMessage(request_too_large(max_request_bytes))
    writer_ready = anyio.Event()
    send: list[Callable[[SessionMessage], Awaitable[None]]] = []

    async def refuse() -> None:
        await writer_ready.wait()
        await send[0](refusal)

    lines = BoundedLines(
        sys.stdin.buffer if stdin is None else stdin,
        max_request_bytes,
        lambda: anyio.from_thread.run(refuse),
    )
    # The transport reads its stdin with readline() alone, through anyio's AsyncFile.
    stdin_file = anyio.wrap_file(cast("IO[str]", lines))
    async with stdio_server(stdin=stdin_file) as (reader, writer), writer.clone() as refusals:
        # The clone keeps the transport's writer open until every refusal was handed over.
        send.append(refusals.send)
        writer_ready.set()
        await server.run(reader, writer, server.create_initialization_options())
