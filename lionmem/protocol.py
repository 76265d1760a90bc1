"""The memory seam of ADR-0092 D2: three async methods, checked structurally."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from uuid import UUID

    from lionmem_models.memory_item import MemoryItem
    from lionmem_models.memory_query import MemoryQuery

__all__ = ["MemoryStore"]


@runtime_checkable
class MemoryStore(Protocol):
    """Anything that can store, retrieve by id and search ``MemoryItem`` records.

    ``isinstance(x, MemoryStore)`` only checks that the three attributes exist; it proves
    neither that they are coroutines nor any search semantics (ADR-0092 D2). ADR-0093's
    ``ExternalMemoryStore`` adds a manifest that declares those.
    """

    async def store(self, item: MemoryItem) -> UUID:
        """Persist ``item`` (create or replace by id) and return ``item.id``."""
        ...

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        """Return the item with this id, or ``None`` when there is none."""
        ...

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return the items matching ``query``, as a list."""
        ...
