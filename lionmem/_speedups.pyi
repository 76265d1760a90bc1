"""lionmem's C speedups (see _speedups.c): the cached text scan of InMemoryStore and construction's pre-check."""

from collections.abc import Iterable
from typing import Any, TypeVar

_T = TypeVar("_T")

SOURCE_SHA256: str  # the SHA-256 of the _speedups.c it was built from

def scan(
    chunk: Iterable[_T],
    sources: list[Any],
    lowered: list[Any],
    start: int,
    needle: str,
    needed: int,
    /,
) -> tuple[list[_T], _T | None]: ...
def init_ready(data: dict[str, Any], names: frozenset[str], /) -> bool: ...
