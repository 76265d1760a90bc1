"""Request ids as the SDK reads them, and the answer to a message whose id it cannot read.

The SDK reads a string or an integer as a request's id; a message with any other id (null, a
fraction, a boolean, an array, an object) it takes for a notification, runs unanswered or drops.
Both transports answer such a message with ``ODD_ID`` instead, before the SDK sees it.
"""

from __future__ import annotations

from typing import TypeGuard

import mcp_types as types

__all__ = ["ODD_ID", "invalid_request", "is_request_id"]


def invalid_request(message: str) -> types.JSONRPCError:
    """An Invalid Request error saying ``message``, with id null (the request's is unknown, or
    another request's)."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(code=types.INVALID_REQUEST, message=message),
    )


ODD_ID = invalid_request(
    "Invalid Request: an id must be a string or an integer (a notification has none)"
)
"""The answer to a message whose id the SDK cannot read."""


def is_request_id(value: object) -> TypeGuard[str | int]:
    """Whether the SDK reads ``value``, a decoded JSON value, as a request's id."""
    return isinstance(value, str | int) and not isinstance(value, bool)
