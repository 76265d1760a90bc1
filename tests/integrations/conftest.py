"""Fixtures of the lionagi integration tests: each test runs over every store of ``STORE_FACTORIES``."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest

from lionmem import MemoryStore
from tests.integrations.stores import STORE_FACTORIES

NewStore = Callable[[], AbstractAsyncContextManager[MemoryStore]]


@pytest.fixture(scope="module", params=sorted(STORE_FACTORIES))
def new_store(request: pytest.FixtureRequest) -> NewStore:
    """Return a maker of empty stores of one kind (module-scoped, so hypothesis may use it)."""
    factory = STORE_FACTORIES[request.param]
    return lambda: factory(request)
