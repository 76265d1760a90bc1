"""lionmem as an MCP server: any MCP client can store, retrieve and search a lionmem store.

``create_server(store)`` gives an MCP server (the ``mcp`` SDK's low-level ``Server``) whose tools
are generated from lionmem's schemas; ``serve_stdio`` runs it over stdin and stdout, and
``http_app`` plus ``serve_http`` over streamable HTTP behind an Origin/Host check and an optional
bearer token. ``lionmem mcp`` is the command for both. This package needs the ``mcp`` extra
(``pip install 'lionmem[mcp]'``); without it, importing it raises ``ImportError`` saying so.
See docs/mcp.md for the tools, the limits and client configuration.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401 -- only to fail early, with the name of the extra
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without the SDK
    msg = "the MCP server needs the 'mcp' extra: pip install 'lionmem[mcp]'"
    raise ImportError(msg, name="mcp") from exc

from lionmem.mcp._bounds import DEFAULT_MAX_BYTES, DEFAULT_MAX_LIMIT
from lionmem.mcp._http import HttpAddress, http_app, parse_address, serve_http
from lionmem.mcp._server import create_server, serve_stdio
from lionmem.mcp._tools import MemoryTools, ToolResult, UnknownTool

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LIMIT",
    "HttpAddress",
    "MemoryTools",
    "ToolResult",
    "UnknownTool",
    "create_server",
    "http_app",
    "parse_address",
    "serve_http",
    "serve_stdio",
]
