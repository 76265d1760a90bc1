"""What the durable stores' methods take (items, ids, page sizes), checked before any I/O."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from lionmem._coercions import uuid_key
from lionmem._messages import place_in_batch, received
from lionmem.errors import UnrepresentableValueError
from lionmem.stores._sqlite_codec import id_text
from lionmem_models.memory_item import MemoryItem

__all__ = ["encoded_batch", "page_size", "require_item", "require_items", "stored_key"]

_T = TypeVar("_T")


def require_item(item: object, store: str, method: str = "store") -> MemoryItem:
    """Return ``item`` if it is a plain ``MemoryItem``; else raise, naming ``store``'s ``method``.

    A subclass raises ``UnrepresentableValueError`` (it would come back as a plain item),
    anything else ``TypeError``.
    """
    if type(item) is MemoryItem:
        return item
    if isinstance(item, MemoryItem):
        reason = (
            f"{store} gives items back as plain MemoryItem, so a subclass would not "
            "round-trip; convert it to a MemoryItem first"
        )
        raise UnrepresentableValueError("__class__", type(item).__qualname__, reason)
    if method == "store":
        hint = "; use store_many() for several items" if isinstance(item, list | tuple) else ""
        msg = f"store() takes a MemoryItem, got {received(item, MemoryItem)}{hint}"
    else:
        msg = f"{method}() takes MemoryItem items, got a {received(item, MemoryItem)} among them"
    raise TypeError(msg)


def require_items(items: Iterable[MemoryItem], method: str) -> Iterable[MemoryItem]:
    """Return ``items``, refusing one ``MemoryItem`` given in their place (iterating it would
    yield its fields)."""
    if isinstance(items, MemoryItem):
        msg = f"{method}() takes an iterable of MemoryItem, got one MemoryItem: use store()"
        raise TypeError(msg)
    return items


def encoded_batch(
    items: Iterable[MemoryItem], store: str, method: str, encode: Callable[[MemoryItem], _T]
) -> tuple[list[MemoryItem], list[_T]]:
    """The items (each as ``require_item`` checks it) and their encodings; an item refused
    carries a note naming its place in the batch (``place_in_batch``)."""
    batch: list[MemoryItem] = []
    encoded: list[_T] = []
    for item in require_items(items, method):
        try:
            checked = require_item(item, store, method)
            encoded.append(encode(checked))
        except (TypeError, UnrepresentableValueError) as exc:
            place_in_batch(exc, method, len(batch), item)
            raise
        batch.append(checked)
    return batch, encoded


def stored_key(item_id: object) -> str | None:
    """The stored form of an id (a UUID or any string ``uuid.UUID()`` parses), else ``None``."""
    key = uuid_key(item_id)
    return None if key is None else id_text(key)


def page_size(batch_size: object, ceiling: int) -> int:
    """Return ``batch_size`` of ``items()``, at most ``ceiling`` (a larger one reads everything
    at once); ``TypeError`` if it is not an int, ``ValueError`` if it is below 1."""
    if type(batch_size) is not int:
        msg = f"batch_size must be an int, got {type(batch_size).__qualname__}"
        raise TypeError(msg)
    if batch_size < 1:
        msg = f"batch_size must be at least 1, got {batch_size!r}"
        raise ValueError(msg)
    return min(batch_size, ceiling)
