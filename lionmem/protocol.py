"""The memory seam of ADR-0092 D2: three async methods, checked structurally."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from uuid import UUID

    from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
    from lionmem_models.memory_item import MemoryItem
    from lionmem_models.memory_query import MemoryQuery

__all__ = ["ExternalMemoryStore", "MemoryStore"]


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


@runtime_checkable
class ExternalMemoryStore(MemoryStore, Protocol):
    """A ``MemoryStore`` backed by an external service, declaring its fidelity (ADR-0093 D1).

    The manifest is immutable and stable for the adapter instance's lifetime; applications may
    reject an adapter before first use when it does not meet their needs. ``isinstance`` checks
    only that ``store``, ``retrieve``, ``search`` and ``manifest`` exist; the conformance suite
    (``lionmem.conformance``) checks that the manifest is true.
    """

    @property
    def manifest(self) -> MemoryAdapterManifest:
        """What this adapter declares about its storage and search behaviour."""
        ...
