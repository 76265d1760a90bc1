"""The lines of an input, none held longer than ``MAX_LINE_BYTES``: a longer one is dropped.

``import`` and ``validate`` read their input through ``Lines``, so that an input without line
breaks (``/dev/zero``, a binary file, a line cut from a log) costs bounded memory: such a line is
read to its end without being kept, and given as its length (an ``int``) for the command to
report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

__all__ = ["MAX_LINE_BYTES", "TOO_LONG", "Lines", "lines_of"]

MAX_LINE_BYTES = 1 << 28
"""The longest line (its line break included) a command reads: 256 MiB."""
TOO_LONG = f"longer than {MAX_LINE_BYTES:,} bytes (256 MiB), the longest line lionmem reads"
_CHUNK_BYTES = 1 << 16


class Lines:
    """Splits chunks of bytes into lines, each with its line break (the last maybe without)."""

    def __init__(self) -> None:
        self._held: list[bytes] = []  # the start of a line whose end has not arrived yet
        self._size = 0  # its length, counted on after it was dropped

    def feed(self, chunk: bytes) -> Iterator[bytes | int]:
        """The lines ``chunk`` ends: the length of one longer than ``MAX_LINE_BYTES``."""
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            yield self._ended(chunk[start : end + 1])
            start = end + 1
        self._hold(chunk[start:])

    def end(self) -> Iterator[bytes | int]:
        """The last line, if the input did not end with a line break."""
        if self._size:
            yield self._ended(b"")

    def _hold(self, part: bytes) -> None:
        self._size += len(part)
        if self._size > MAX_LINE_BYTES:
            self._held = []
        elif part:
            self._held.append(part)

    def _ended(self, last: bytes) -> bytes | int:
        self._hold(last)
        line = self._size if self._size > MAX_LINE_BYTES else b"".join(self._held)
        self._held, self._size = [], 0
        return line


def lines_of(read: Callable[[int], bytes], start: bytes = b"") -> Iterator[bytes | int]:
    """The lines of ``start`` followed by what ``read(n)`` gives until it gives nothing."""
    lines = Lines()
    yield from lines.feed(start)
    while chunk := read(_CHUNK_BYTES):
        yield from lines.feed(chunk)
    yield from lines.end()
