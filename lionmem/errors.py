"""Stable errors of ADR-0093 D3: what an explicit memory operation raises when it fails.

Applications tell "not found" (``None``), "unsupported" (:class:`UnsupportedMemoryQuery`) and
"temporarily unavailable" (:class:`MemoryAdapterUnavailable`) apart without knowing the service's
SDK. Adapters chain the native exception as the cause (``raise ... from native``); it never escapes
as the public type. Invalid ``MemoryItem``/``MemoryQuery``/manifest input stays a pydantic error.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MemoryAdapterError", "MemoryAdapterUnavailable", "UnsupportedMemoryQuery"]


class MemoryAdapterError(RuntimeError):
    """An explicit store, retrieve or search failed at the adapter boundary (the native error is chained)."""


class UnsupportedMemoryQuery(MemoryAdapterError):
    """The query asks for something the adapter cannot do; nothing was sent to the backend.

    ``rejected_keys`` holds every rejected filter key (and ``"limit"`` for a negative limit),
    sorted and de-duplicated; the message lists them in the same order. A single string is one
    key, not a sequence of one-letter keys.
    """

    rejected_keys: tuple[str, ...]

    def __init__(self, rejected_keys: Iterable[str]) -> None:
        keys = (rejected_keys,) if isinstance(rejected_keys, str) else tuple(rejected_keys)
        if not keys:
            # An error that rejects nothing would tell the caller nothing about what to change.
            msg = "UnsupportedMemoryQuery needs at least one rejected key"
            raise ValueError(msg)
        self.rejected_keys = tuple(sorted(set(keys)))
        super().__init__("unsupported memory query keys: " + ", ".join(self.rejected_keys))

    def __reduce__(self) -> tuple[type[UnsupportedMemoryQuery], tuple[tuple[str, ...]]]:
        # Keep the error picklable (multiprocessing, pytest-xdist) despite the custom __init__.
        return (type(self), (self.rejected_keys,))


class MemoryAdapterUnavailable(MemoryAdapterError):
    """Transport or service availability prevented an explicit operation; nothing is assumed done."""
