"""The lines a stdio client sends, read with a cap on the size of each.

The SDK's stdio transport takes one JSON-RPC message per line from a text file it iterates;
``BoundedLines`` is that file. Each line of at most ``max_bytes`` bytes (its newline not counted)
comes back whole, decoded as the SDK decodes stdin (UTF-8, bad bytes replaced). A longer line is
never held: once ``max_bytes + 1`` of its bytes are read, ``on_oversized`` is called and the rest
of the line is read and dropped in chunks up to its newline, so at most ``max_bytes`` plus one
chunk is in memory at any time. A last line without a newline counts as a line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["DISCARD_CHUNK", "BoundedLines", "LineSource"]

DISCARD_CHUNK = 65_536
"""How many bytes of an oversized line are read at a time while it is dropped."""


class LineSource(Protocol):
    """A binary stream read a line at a time with a size bound (``io.BufferedReader``, ``BytesIO``)."""

    def readline(self, size: int = -1, /) -> bytes: ...


class BoundedLines:
    """A text file of the lines of ``source``, each of at most ``max_bytes`` bytes.

    ``readline`` blocks on ``source``; the transport calls it in a worker thread, where
    ``on_oversized`` runs too, once per line that was too long, before that line is dropped.
    """

    def __init__(
        self, source: LineSource, max_bytes: int, on_oversized: Callable[[], None]
    ) -> None:
        if max_bytes < 0:
            msg = f"the largest line must be 0 bytes or more, got {max_bytes}"
            raise ValueError(msg)
        self._source = source
        self._max_bytes = max_bytes
        self._on_oversized = on_oversized

    def readline(self) -> str:
        """Return the next line that fits, its newline included; ``""`` at the end of input."""
        while True:
            line = self._source.readline(self._max_bytes + 1)
            if line.endswith(b"\n") or len(line) <= self._max_bytes:
                return line.decode("utf-8", errors="replace")
            self._on_oversized()
            self._discard_rest()

    def _discard_rest(self) -> None:
        while True:
            chunk = self._source.readline(DISCARD_CHUNK)
            if not chunk or chunk.endswith(b"\n"):
                return
