"""The lionmem stores the lionagi integration is tested over: one entry each in ``STORE_FACTORIES``.

A factory runs once per test module, with that module's pytest request (so a store that needs a
server can take it from a fixture with ``request.getfixturevalue``), and returns a maker of empty
stores: each call gives an async context manager that yields a new, empty store and closes it
afterwards. Every differential and Branch/Session test runs once per entry.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from itertools import count

import pytest

from lionmem import InMemoryStore, MemoryStore, PostgresMemoryStore, SQLiteMemoryStore
from tests.postgres_support import Cluster

NewStore = Callable[[], AbstractAsyncContextManager[MemoryStore]]
StoreFactory = Callable[[pytest.FixtureRequest], NewStore]


def in_memory(request: pytest.FixtureRequest) -> NewStore:
    """New InMemoryStores (nothing to open or close)."""
    return lambda: nullcontext(InMemoryStore())


def sqlite(request: pytest.FixtureRequest) -> NewStore:
    """New SQLiteMemoryStores, each on a private in-memory database."""
    return lambda: SQLiteMemoryStore(":memory:")


def postgres(request: pytest.FixtureRequest) -> NewStore:
    """New PostgresMemoryStores, each in a namespace of its own in one database of the module."""
    server: Cluster = request.getfixturevalue("postgres_server")
    dsn = server.dsn(server.fresh_database("lionagi"))
    names = count()
    return lambda: PostgresMemoryStore(dsn, namespace=f"lionagi {next(names)}")


STORE_FACTORIES: dict[str, StoreFactory] = {
    "memory": in_memory,
    "sqlite": sqlite,
    "postgres": postgres,
}
