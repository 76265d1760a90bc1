"""lionmem as an MCP server: any MCP client can store, retrieve and search a lionmem store.

``create_server(store)`` gives an MCP server (the ``mcp`` SDK's low-level ``Server``) whose tools
are generated from lionmem's schemas; ``serve_stdio`` runs it over stdin and stdout, and
``http_app`` plus ``serve_http`` over streamable HTTP behind an Origin/Host check and an optional
bearer token. ``lionmem mcp`` is the command for both. The names are imported lazily: the limits
need nothing, the server needs the ``mcp`` extra (``pip install 'lionmem[mcp]'``), and without it
an ``ImportError`` says so. See docs/mcp.md for the tools, the limits and client configuration.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lionmem.mcp._bounds import DEFAULT_MAX_BYTES, DEFAULT_MAX_LIMIT, check_limits
    from lionmem.mcp._http import HttpAddress, http_app, parse_address, serve_http
    from lionmem.mcp._server import create_server, serve_stdio
    from lionmem.mcp._tools import MemoryTools, ToolResult, UnknownTool

MISSING_EXTRA = "the MCP server needs the 'mcp' extra: pip install 'lionmem[mcp]'"
# Top-level modules that come with the extra (the SDK and what lionmem.mcp uses of its own deps).
_EXTRA_MODULES = {"mcp", "mcp_types", "uvicorn", "starlette", "anyio", "jsonschema"}

_LAZY: dict[str, str] = {
    "DEFAULT_MAX_BYTES": "lionmem.mcp._bounds",
    "DEFAULT_MAX_LIMIT": "lionmem.mcp._bounds",
    "HttpAddress": "lionmem.mcp._http",
    "MemoryTools": "lionmem.mcp._tools",
    "ToolResult": "lionmem.mcp._tools",
    "UnknownTool": "lionmem.mcp._tools",
    "check_limits": "lionmem.mcp._bounds",
    "create_server": "lionmem.mcp._server",
    "http_app": "lionmem.mcp._http",
    "parse_address": "lionmem.mcp._http",
    "serve_http": "lionmem.mcp._http",
    "serve_stdio": "lionmem.mcp._server",
}

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LIMIT",
    "HttpAddress",
    "MemoryTools",
    "ToolResult",
    "UnknownTool",
    "check_limits",
    "create_server",
    "http_app",
    "parse_address",
    "serve_http",
    "serve_stdio",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'lionmem.mcp' has no attribute {name!r}"
        raise AttributeError(msg)
    try:
        value = getattr(import_module(module), name)
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] in _EXTRA_MODULES:
            raise ImportError(MISSING_EXTRA, name=exc.name) from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
