"""The strict query guard of ADR-0093 D3, for external adapters to call before any I/O.

Two ways to use it. Call :func:`check_query` first thing in ``search``::

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if not check_query(query, self.manifest):
            return []  # limit=0: the answer is known without asking the backend
        ...

or decorate ``search`` with :func:`guarded_search`, which does exactly that.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from lionmem._messages import received
from lionmem.errors import UnsupportedMemoryQuery
from lionmem_models.memory_query import MemoryQuery

if TYPE_CHECKING:
    from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
    from lionmem_models.memory_item import MemoryItem

__all__ = ["check_query", "guarded_search"]


class _HasManifest(Protocol):
    @property
    def manifest(self) -> MemoryAdapterManifest: ...


AdapterT = TypeVar("AdapterT", bound=_HasManifest)


def not_a_query(query: object) -> TypeError:
    """The error for a search given something other than a ``MemoryQuery``, with how to build one."""
    hint = " or lionmem.MemoryQuery.model_validate(the_dict)" if isinstance(query, dict) else ""
    return TypeError(
        f"search() takes a MemoryQuery, got {received(query, MemoryQuery)}; build one with "
        f"lionmem.MemoryQuery(text=..., tags=..., filters=..., limit=...){hint}"
    )


def check_query(query: object, manifest: MemoryAdapterManifest) -> bool:
    """Validate ``query`` against ``manifest``; return whether the backend has to be asked.

    Every filter key the manifest does not accept is rejected, and so is a negative ``limit``
    (named ``"limit"``): all of them in one :class:`UnsupportedMemoryQuery`, so that no partial
    filtering can happen. A valid query with ``limit == 0`` returns ``False``: its answer is ``[]``
    and needs no I/O. Anything else returns ``True``. A value that is not a ``MemoryQuery``
    raises ``TypeError``.
    """
    if not isinstance(query, MemoryQuery):
        raise not_a_query(query)
    rejected = list(manifest.unsupported_filters(query.filters or ()))
    if query.limit < 0:
        rejected.append("limit")
    if rejected:
        raise UnsupportedMemoryQuery(rejected)
    return query.limit != 0


def guarded_search(
    method: Callable[[AdapterT, MemoryQuery], Awaitable[list[MemoryItem]]],
) -> Callable[[AdapterT, MemoryQuery], Awaitable[list[MemoryItem]]]:
    """Decorate an adapter's ``search`` so that :func:`check_query` runs before its body.

    The adapter's ``manifest`` property supplies the accepted filter keys. Rejected queries raise
    before the body runs; a query with ``limit == 0`` returns ``[]`` without running it.
    """

    @functools.wraps(method)
    async def search(self: AdapterT, query: MemoryQuery) -> list[MemoryItem]:
        if not check_query(query, self.manifest):
            return []
        return await method(self, query)

    return search
