"""Stable errors of ADR-0093 D3: what an explicit memory operation raises when it fails."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MemoryAdapterError", "MemoryAdapterUnavailable", "UnsupportedMemoryQuery"]


class MemoryAdapterError(RuntimeError):
    """An explicit store, retrieve or search failed at the adapter boundary (the native error is chained)."""


class UnsupportedMemoryQuery(MemoryAdapterError):
    """The query asks for something the adapter cannot do; nothing was sent to the backend.

    ``rejected_keys`` holds every rejected filter key (or ``"limit"``), sorted and de-duplicated.
    """

    def __init__(self, rejected_keys: Iterable[str]) -> None:
        self.rejected_keys: tuple[str, ...] = tuple(sorted(set(rejected_keys)))
        super().__init__("unsupported memory query keys: " + ", ".join(self.rejected_keys))

    def __reduce__(self) -> tuple[type[UnsupportedMemoryQuery], tuple[tuple[str, ...]]]:
        # Keep the error picklable (multiprocessing, pytest-xdist) despite the custom __init__.
        return (type(self), (self.rejected_keys,))


class MemoryAdapterUnavailable(MemoryAdapterError):
    """Transport or service availability prevented an explicit operation; nothing is assumed done."""
