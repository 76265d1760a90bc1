"""Fixtures of the lionagi integration tests: each test runs over every store of ``STORE_FACTORIES``."""

from __future__ import annotations

import pytest

from tests.integrations.stores import STORE_FACTORIES, NewStore


@pytest.fixture(scope="module", params=sorted(STORE_FACTORIES))
def new_store(request: pytest.FixtureRequest) -> NewStore:
    """A maker of empty stores of one kind (module-scoped, so hypothesis examples may share it)."""
    return STORE_FACTORIES[request.param](request)
