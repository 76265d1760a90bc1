"""The MCP server of a store, on the ``mcp`` SDK's low-level ``Server``.

The low-level server is used because the tools are defined by documents, not by Python
signatures: it lists the generated tool documents as they are and hands every call to
``MemoryTools``, which answers with structured content and its JSON text.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from lionmem.errors import UnknownToolError
from lionmem.mcp._bounds import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LIMIT,
    check_server_limits,
    error_chars,
)
from lionmem.mcp._tools import _PROBLEM_CHARS, MemoryTools, _cut, _pydantic_problems
from lionmem.protocol import MemoryStore

__all__ = ["create_server"]

INSTRUCTIONS = (
    "Long-term memory. memory_store saves an item (any JSON content, with optional tags and "
    "metadata) and returns its id; memory_search finds items by text, tags and metadata; "
    "memory_retrieve returns one item by id. Every answer is bounded: searches return at most "
    "their limit, and hits too large for one response are listed in omitted, never cut short."
)


async def _method_named_cut(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
    """Cut the method the SDK echoes in a "Method not found" error to its first characters, as
    an unknown tool's name is: a request may name a method of megabytes."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        if exc.code != types.METHOD_NOT_FOUND or not isinstance(exc.data, str):
            raise
        raise MCPError(exc.code, exc.message, _cut(exc.data, _PROBLEM_CHARS)) from None


def _params_named(server: Server[Any], max_bytes: int) -> ServerMiddleware[Any]:
    """Middleware saying which parameter of a request is wrong and how: the SDK answers every
    malformed request with a bare "Invalid request parameters". A method ``server`` does not
    have is "Method not found" whatever its params: the SDK checks the params of a method the
    MCP specification defines before it looks for the method's handler."""

    async def params_named(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except ValidationError as exc:
            # initialize is the SDK runner's own, never a handler of the server.
            if ctx.method != "initialize" and server.get_request_handler(ctx.method) is None:
                method = _cut(ctx.method, _PROBLEM_CHARS)
                raise MCPError(types.METHOD_NOT_FOUND, "Method not found", method) from None
            message = f"Invalid request parameters: {_pydantic_problems(exc)}"
            message = _cut(message, error_chars(max_bytes))  # within the cap, as a tool's error
            raise MCPError(code=types.INVALID_PARAMS, message=message) from None

    return params_named


def create_server(
    store: MemoryStore,
    *,
    max_limit: int = DEFAULT_MAX_LIMIT,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Server[Any]:
    """Return an MCP server whose tools store, retrieve and search ``store``.

    ``memory_delete`` and ``memory_count`` are listed when the store has ``delete`` and
    ``count``. ``max_limit`` caps every search's limit, ``max_bytes`` every response;
    ``ValueError`` when the cap is too small to report every hit left out at that limit, or
    to hold the answer to ``tools/list`` (``min_response_bytes()``). The caller keeps
    ownership of ``store`` (opening and closing it).
    """
    from lionmem import __version__

    check_server_limits(max_limit, max_bytes)
    tools = MemoryTools(store, max_limit=max_limit, max_bytes=max_bytes)
    listing = types.ListToolsResult(
        tools=[types.Tool.model_validate(document.tool) for document in tools.documents]
    )
    input_schemas = {document.name: document.input_schema for document in tools.documents}

    async def list_tools(
        _ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor is not None:
            # Every tool is on the first page: a cursor is one this server never gave.
            message = (
                "Invalid request parameters: params.cursor: this server lists every tool at "
                f"once and gives no cursor, got {_cut(repr(params.cursor), _PROBLEM_CHARS)}"
            )
            raise MCPError(code=types.INVALID_PARAMS, message=message)
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

    server: Server[Any] = Server(
        "lionmem",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schemas.get,
    )
    server.middleware += [_method_named_cut, _params_named(server, max_bytes)]
    return server
