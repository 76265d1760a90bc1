"""Checks that the SQLite and PostgreSQL stores share, run by each store's own tests."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lionmem import MemoryItem

__all__ = ["one_item_for_many_is_refused"]


async def one_item_for_many_is_refused(store: Any) -> None:
    """``store_many`` and ``store_stream`` take an iterable of items: one ``MemoryItem`` (whose
    iteration would yield its fields) and a non-item among them raise TypeError naming the call,
    and nothing is stored."""
    one = "takes an iterable of MemoryItem, got one MemoryItem: use store()"
    with pytest.raises(TypeError, match=rf"^store_many\(\) {re.escape(one)}"):
        await store.store_many(MemoryItem(content="x"))
    with pytest.raises(TypeError, match=rf"^store_stream\(\) {re.escape(one)}"):
        await store.store_stream(MemoryItem(content="x"))
    with pytest.raises(TypeError, match=r"^store_many\(\) takes MemoryItem items, got a str"):
        await store.store_many([MemoryItem(content="x"), "y"])
    assert await store.count() == 0
