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

MISSING_EXTRA = "the MCP server needs the 'mcp' extra: pip install 'lionmem[mcp]'"
# Top-level modules that come with the extra (the SDK and what lionmem.mcp uses of its own deps).
_EXTRA_MODULES = {"mcp", "mcp_types", "uvicorn", "starlette", "anyio", "jsonschema"}

# The one list of public names, each with the module that defines it.
_PUBLIC: dict[str, str] = {
    "DEFAULT_MAX_BYTES": "lionmem.mcp._bounds",
    "DEFAULT_MAX_LIMIT": "lionmem.mcp._bounds",
    "DEFAULT_MAX_REQUEST_BYTES": "lionmem.mcp._bounds",
    "HttpAddress": "lionmem.mcp._http",
    "MemoryTools": "lionmem.mcp._tools",
    "ToolResult": "lionmem.mcp._tools",
    "check_limits": "lionmem.mcp._bounds",
    "create_server": "lionmem.mcp._server",
    "http_app": "lionmem.mcp._http",
    "parse_address": "lionmem.mcp._http",
    "serve_http": "lionmem.mcp._http",
    "serve_stdio": "lionmem.mcp._stdio",
}

__all__ = list(_PUBLIC)

if TYPE_CHECKING:
    from lionmem.mcp._bounds import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
    from lionmem.mcp._bounds import DEFAULT_MAX_LIMIT as DEFAULT_MAX_LIMIT
    from lionmem.mcp._bounds import DEFAULT_MAX_REQUEST_BYTES as DEFAULT_MAX_REQUEST_BYTES
    from lionmem.mcp._bounds import check_limits as check_limits
    from lionmem.mcp._http import HttpAddress as HttpAddress
    from lionmem.mcp._http import http_app as http_app
    from lionmem.mcp._http import parse_address as parse_address
    from lionmem.mcp._http import serve_http as serve_http
    from lionmem.mcp._server import create_server as create_server
    from lionmem.mcp._stdio import serve_stdio as serve_stdio
    from lionmem.mcp._tools import MemoryTools as MemoryTools
    from lionmem.mcp._tools import ToolResult as ToolResult


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
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
