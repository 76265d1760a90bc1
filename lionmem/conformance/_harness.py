"""The harness an adapter author hands to the suite (ADR-0093 D2), and its optional extensions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from uuid import UUID

    from lionmem.protocol import ExternalMemoryStore

__all__ = [
    "CorruptsResponses",
    "MemoryAdapterHarness",
    "PlantsForeignRecords",
    "RejectsWrites",
]


@runtime_checkable
class MemoryAdapterHarness(Protocol):
    """Test-side control over a disposable namespace (or fake transport) behind an adapter.

    The adapter itself needs none of these controls. The suite calls ``reset`` before every case,
    ``make_store`` once per case (once per example in the reference-search profile), and
    ``close`` when it is done: once at the end of ``run()``, and after every case under pytest
    (so a pytest fixture must make a new harness per test).
    Every store ``make_store`` returns must show the same manifest. ``close`` is bounded by the
    case timeout; one that raises or does not finish in time is reported as a failure.
    """

    async def make_store(self) -> ExternalMemoryStore:
        """Return an adapter bound to the harness's namespace (empty right after ``reset``)."""
        ...

    async def reset(self) -> None:
        """Empty the namespace, restore the transport and clear every injected fault."""
        ...

    async def make_search_index_visible(self) -> None:
        """Make every write acknowledged so far visible to search (a no-op for immediate indexes)."""
        ...

    async def make_transport_unavailable(self) -> None:
        """Make every transport call fail until the next ``reset``, also of stores made afterwards."""
        ...

    async def close(self) -> None:
        """Release what the harness holds; the suite does not use the harness afterwards."""
        ...


@runtime_checkable
class RejectsWrites(Protocol):
    """Optional: lets the "Rejected write" case run (otherwise it is not applicable)."""

    async def make_writes_rejected(self) -> None:
        """Make the service refuse every write, with a well-formed refusal, until the next ``reset``."""
        ...


@runtime_checkable
class CorruptsResponses(Protocol):
    """Optional: lets the "Malformed response" case run (otherwise it is not applicable)."""

    async def make_responses_malformed(self) -> None:
        """Make the service answer every call with a malformed payload until the next ``reset``."""
        ...


@runtime_checkable
class PlantsForeignRecords(Protocol):
    """Optional: lets the "Wrong native kind" case run (otherwise it is not applicable)."""

    async def make_foreign_record(self) -> UUID:
        """Plant a record of another native kind (not a memory) and return its identity."""
        ...
