"""Pile: an ordered, UUID-keyed collection of Elements (a Session's branches, for one).

Semantics follow lionagi 0.36.0's ``Pile`` as the memory seam observes it (SEMANTICS.md §5.5):
the order is the order of first insertion, ``include`` creates or replaces by id and a
replacement keeps its position, and the item-type check accepts subclasses. The items live in
an insertion-ordered dict by id; reads by position and iteration use a list of them, extended by
``include`` and made again, once, after a replacement or a removal. Writers (``include``,
``exclude``) hold a lock; readers take it only to make that list. Iteration walks the items
present when it started (a prefix of the insertion order); an item replaced or removed meanwhile
is seen as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, Generic, TypeVar, get_args, overload
from uuid import UUID

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from lionmem._coercions import uuid_key
from lionmem_models.element import Element

__all__ = ["Pile"]

T = TypeVar("T", bound=Element)
D = TypeVar("D")


def _type_names(types: tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in types)


def key_of(key: object) -> UUID | None:
    """Return the UUID a key designates (an Element, a UUID or a UUID string), else ``None``."""
    if isinstance(key, Element):
        return key.id
    return uuid_key(key)


class Pile(Generic[T]):
    """An ordered collection of Elements keyed by id: include creates or replaces in place.

    ``item_type`` is a class or a tuple of classes; items must be instances of one of them or of
    a subclass (``Element`` when omitted). Keys are an Element (its id), a ``UUID`` or any string
    ``uuid.UUID()`` parses; any other key is simply not found. ``pile[k]`` and ``get`` also take
    a position (an ``int``, not a ``bool``: ``pile[0]``, ``pile[-1]``), and ``pile[i:j]`` gives a
    list; ``in`` looks for ids only.
    """

    __slots__ = ("_item_type", "_items", "_lock", "_values")

    def __init__(
        self,
        items: Iterable[T] = (),
        *,
        item_type: type[T] | tuple[type[T], ...] | None = None,
    ) -> None:
        self._item_type: tuple[type[T], ...] = _item_types(item_type)
        self._lock = threading.Lock()
        self._items: dict[UUID, T] = {}
        # The items in order, for positions and iteration: only appended to once published,
        # else replaced (by None, made again on the next read).
        self._values: list[T] | None = []
        if isinstance(items, str | bytes | dict):
            msg = f"Pile() takes an iterable of items, got {type(items).__name__}"
            raise TypeError(msg)
        batch = list(items)
        for item in batch:
            self._check(item)
        for item in batch:
            self._put(item)

    @property
    def item_type(self) -> tuple[type[T], ...]:
        """The accepted classes (their subclasses are accepted too)."""
        return self._item_type

    def _check(self, item: object) -> None:
        if not isinstance(item, self._item_type):
            names = _type_names(self._item_type)
            msg = f"this Pile holds {names} (or a subclass), not {type(item).__qualname__}"
            raise TypeError(msg)

    def _put(self, item: T) -> None:
        key = item.id
        with self._lock:
            replaced = key in self._items
            self._items[key] = item  # a replacement keeps its position
            if replaced:
                self._values = None
            elif self._values is not None:
                self._values.append(item)

    def _ordered(self) -> list[T]:
        """The items in order; a reader that got this list may keep it (it is only appended to)."""
        values = self._values
        if values is None:
            with self._lock:
                values = self._values
                if values is None:
                    values = self._values = list(self._items.values())
        return values

    def include(self, item: T) -> None:
        """Add ``item`` at the end, or replace the item with its id in place (TypeError if the type is wrong)."""
        self._check(item)
        self._put(item)

    def exclude(self, key: object) -> T | None:
        """Remove the item with this key and return it, or return ``None`` when there is none."""
        wanted = key_of(key)
        if wanted is None:
            return None
        with self._lock:
            removed = self._items.pop(wanted, None)
            if removed is None:
                return None
            self._values = None
        return removed

    @overload
    def get(self, key: object) -> T | None: ...

    @overload
    def get(self, key: object, default: D) -> T | D: ...

    def get(self, key: object, default: Any = None) -> Any:
        """Return the item with this key (or at this position), or ``default`` when there is none."""
        if type(key) is int:
            values = self._ordered()
            return values[key] if -len(values) <= key < len(values) else default
        wanted = key_of(key)
        return default if wanted is None else self._items.get(wanted, default)

    @overload
    def __getitem__(self, key: slice) -> list[T]: ...

    @overload
    def __getitem__(self, key: UUID | str | int | Element) -> T: ...

    def __getitem__(self, key: object) -> T | list[T]:
        """Return the item with this key; raise ``KeyError`` naming the key when there is none.

        An ``int`` (not a ``bool``) is a position, as in a list (``IndexError`` when out of
        range), and a slice gives a list of the items in it.
        """
        if isinstance(key, slice):
            return self._ordered()[key]
        if type(key) is int:
            values = self._ordered()
            if not -len(values) <= key < len(values):
                msg = f"no item at position {key}: the pile holds {len(values)}"
                raise IndexError(msg)
            return values[key]
        wanted = key_of(key)
        item = None if wanted is None else self._items.get(wanted)
        if item is None:
            raise KeyError(key)
        return item

    def __contains__(self, key: object) -> bool:
        """Tell whether an item with this key (an Element's id, a UUID or a UUID string) is held."""
        wanted = key_of(key)
        return wanted is not None and wanted in self._items

    def __len__(self) -> int:
        """Return the number of items."""
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        """Iterate over the items present now, in first-insertion order, without copying them."""
        values = self._ordered()
        return islice(values, len(values))

    def keys(self) -> list[UUID]:
        """Return the ids, in order."""
        return [item.id for item in self._ordered()]

    def values(self) -> list[T]:
        """Return the items, in order, as a new list."""
        return list(self._ordered())

    def __repr__(self) -> str:
        return f"Pile({self.values()!r}, item_type={self._item_type!r})"

    def __getstate__(self) -> tuple[list[T], tuple[type[T], ...]]:
        return (self.values(), self._item_type)

    def __setstate__(self, state: tuple[list[T], tuple[type[T], ...]]) -> None:
        values, item_type = state
        self._item_type = item_type
        self._lock = threading.Lock()
        self._items = {item.id: item for item in values}
        self._values = None

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Validate ``Pile[X]`` from any iterable of ``X`` (or a Pile); serialise as a list."""
        args = get_args(source)
        item: Any = args[0] if args and isinstance(args[0], type) else Element
        items_schema = core_schema.list_schema(handler.generate_schema(item))

        def to_list(value: Any) -> Any:
            return value.values() if isinstance(value, Pile) else value

        def build(items: list[Any]) -> Pile[Any]:
            return cls(items, item_type=item)

        return core_schema.no_info_before_validator_function(
            to_list,
            core_schema.no_info_after_validator_function(build, items_schema),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda pile: pile.values(), return_schema=items_schema
            ),
        )


def _item_types(item_type: object) -> tuple[Any, ...]:
    if item_type is None:
        return (Element,)
    types = item_type if isinstance(item_type, tuple) else (item_type,)
    if not types or not all(isinstance(t, type) for t in types):
        msg = f"item_type must be a class or a non-empty tuple of classes, got {item_type!r}"
        raise TypeError(msg)
    return types
