"""The cached text scan of InMemoryStore, in C (see _textscan.c and memory._walk_cached)."""

from collections.abc import Iterable
from typing import Any, TypeVar

_T = TypeVar("_T")

SOURCE_SHA256: str  # the SHA-256 of the _textscan.c it was built from

def scan(
    chunk: Iterable[_T],
    sources: list[Any],
    lowered: list[Any],
    start: int,
    needle: str,
    needed: int,
    /,
) -> tuple[list[_T], _T | None]: ...
