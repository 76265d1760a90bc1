"""The size caps of the MCP server: of a tool result, counted before sending, and of a request.

A result goes out twice, as structured content and as its JSON text in a text block, so a value
costs its JSON plus that JSON escaped as a string. JSON string escaping works character by
character, so the cost of a whole list is the sum of its entries' costs (plus a comma each,
counted in both copies). Counting takes the longer of the two serializers the MCP SDK writes
with (``json_bytes``), so the count is at least the size on the wire, whatever the transport.
``ENVELOPE`` bytes are kept for everything around the result: the JSON-RPC framing, the request
id and the SDK's own fields. A request is capped as it arrives (a stdin line, an HTTP body),
before anything parses it. Nesting is capped too: the SDK's JSON parser reads at most
``MAX_NESTING`` levels of arrays and objects around a value. A server's answers other than tool
results are bounded in advance, the largest being its list of tools, so a server's response cap
must hold that one (``min_response_bytes``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_json

from lionmem.mcp._documents import tool_documents

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LIMIT",
    "DEFAULT_MAX_REQUEST_BYTES",
    "ENVELOPE",
    "MAX_NESTING",
    "MIN_REQUEST_BYTES",
    "OMITTED_ENTRY",
    "RETRIEVE_NESTING",
    "SEARCH_FRAME",
    "SEARCH_NESTING",
    "check_limits",
    "check_request_cap",
    "check_server_limits",
    "cost",
    "error_chars",
    "json_bytes",
    "min_response_bytes",
    "nesting",
    "result_size",
]

DEFAULT_MAX_LIMIT = 100
"""The largest ``limit`` a search gets unless the server is started with another maximum."""

DEFAULT_MAX_BYTES = 262_144
"""The largest response (256 KiB) unless the server is started with another cap."""

DEFAULT_MAX_REQUEST_BYTES = 4_194_304
"""The largest request (4 MiB, the SDK's HTTP body limit) unless the server is given another."""

ENVELOPE = 1024
"""Bytes kept for the JSON-RPC framing, the request id and the SDK's fields of a result."""

OMITTED_ENTRY = 160
"""An upper bound of the cost of one ``{"id": ..., "bytes": ...}`` entry of ``omitted``."""

SEARCH_FRAME = 200
"""An upper bound of the cost of an empty search result (its keys and the limit, both copies)."""

MIN_REQUEST_BYTES = 1024
"""The smallest request cap, some three times the largest ordinary request of the SDK clients."""

MAX_NESTING = 200
"""The most levels of arrays and objects around a value the MCP SDK's JSON parser (pydantic_core)
reads; it reads an empty array or object one level deeper, which ``nesting`` counts as a level."""

SEARCH_NESTING = 4
"""The levels around an item in a search response: message, result, structured content, items."""

RETRIEVE_NESTING = 3
"""The levels around an item in a retrieve response: message, result, structured content."""


def nesting(value: Any) -> int:
    """Return how deep ``value`` (a JSON value: dicts, lists, scalars) nests; a scalar is 0."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        current, level = pending.pop()
        if isinstance(current, dict):
            current = list(current.values())
        if isinstance(current, list):
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in current)
    return deepest


def json_bytes(value: Any, text: bytes | None = None) -> int:
    """Return the length of the longer of the JSON texts of ``value`` the MCP SDK writes:
    pydantic's (UTF-8: over stdio and HTTP's 2025-11-25 protocol; ``text`` when the caller has
    it already) or the ``json`` module's (every character outside ASCII escaped, in 6 or 12
    bytes, and floats as Python writes them: HTTP's 2026-07-28 protocol)."""
    compact = len(to_json(value) if text is None else text)
    try:
        return max(compact, len(json.dumps(value, separators=(",", ":"))))
    except ValueError:  # an integer past Python's digit limit, which that protocol cannot send
        return compact


def error_chars(max_bytes: int) -> int:
    """The characters an error text may keep within ``max_bytes``: JSON writes one in at most 12
    bytes (an escaped surrogate pair), and 64 bytes are kept for the rest."""
    return max(max_bytes - ENVELOPE - 64, 0) // 12


def _both_copies(value: Any) -> int:
    """The bytes of ``value`` and of its JSON text as a string, each in its longer form."""
    text = to_json(value)
    return json_bytes(value, text) + json_bytes(text.decode())


def cost(value: Any) -> int:
    """Return what ``value`` adds to a response as one entry of a list in the result."""
    return _both_copies(value) + 2


def result_size(structured: Any) -> int:
    """Return the bytes of a result carrying ``structured`` and its JSON text, envelope included."""
    return ENVELOPE + _both_copies(structured)


def _search_need(max_limit: int) -> int:
    """The bytes a search result needs to list ``max_limit`` hits as left out."""
    return ENVELOPE + SEARCH_FRAME + OMITTED_ENTRY * max_limit


def check_limits(max_limit: int, max_bytes: int) -> None:
    """Raise ``ValueError`` unless a search can always report every hit it leaves out."""
    if max_limit < 0:
        msg = f"the maximum search limit must be 0 or more, got {max_limit}"
        raise ValueError(msg)
    needed = _search_need(max_limit)
    if max_bytes < needed:
        msg = (
            f"a response cap of {max_bytes} bytes is too small for a maximum search limit of "
            f"{max_limit}: at least {needed} bytes are needed to list every hit left out"
        )
        raise ValueError(msg)


def min_response_bytes() -> int:
    """Return the smallest response cap of a server: its answer to ``tools/list``, every tool listed.

    That answer is the tool documents as they are, in the envelope: the largest answer that is no
    tool result (``initialize``, ``ping``, a protocol error); a tool result keeps to any cap.
    """
    return ENVELOPE + len(to_json({"tools": [document.tool for document in tool_documents()]}))


def check_server_limits(max_limit: int, max_bytes: int) -> None:
    """Raise ``ValueError`` unless every answer of a server fits ``max_bytes``: the limits pass
    ``check_limits`` and the cap holds the list of tools. The message names the larger need."""
    smallest = min_response_bytes()
    if max_limit >= 0 and _search_need(max_limit) <= smallest and max_bytes < smallest:
        msg = (
            f"a response cap of {max_bytes} bytes is too small: it must be at least {smallest}, "
            "or the server's answer to tools/list (its tools and their schemas) does not fit"
        )
        raise ValueError(msg)
    check_limits(max_limit, max_bytes)


def check_request_cap(max_request_bytes: int) -> None:
    """Raise ``ValueError`` unless ``max_request_bytes`` leaves room for an MCP request."""
    if max_request_bytes < MIN_REQUEST_BYTES:
        msg = (
            f"a request cap of {max_request_bytes} bytes is too small: it must be at least "
            f"{MIN_REQUEST_BYTES}, or a client's ordinary requests (a few hundred bytes) are refused"
        )
        raise ValueError(msg)
