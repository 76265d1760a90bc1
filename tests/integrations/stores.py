"""The lionmem stores the lionagi integration is tested over, one entry each in ``STORE_FACTORIES``.

A factory takes the test's (module-scoped) pytest request, so that a store needing a server can
get it from a fixture with ``request.getfixturevalue``, and returns an async context manager that
yields an empty store and closes it afterwards. Every differential and Branch/Session test runs
once per entry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from lionmem import InMemoryStore, MemoryStore, SQLiteMemoryStore

StoreFactory = Callable[[pytest.FixtureRequest], AbstractAsyncContextManager[MemoryStore]]


@asynccontextmanager
async def in_memory(request: pytest.FixtureRequest) -> AsyncIterator[MemoryStore]:
    """A new InMemoryStore."""
    yield InMemoryStore()


@asynccontextmanager
async def sqlite_in_memory(request: pytest.FixtureRequest) -> AsyncIterator[MemoryStore]:
    """A new SQLiteMemoryStore on a private in-memory database."""
    async with SQLiteMemoryStore(":memory:") as store:
        yield store


STORE_FACTORIES: dict[str, StoreFactory] = {
    "memory": in_memory,
    "sqlite": sqlite_in_memory,
}
