"""What a case sees while it runs: the harness, a fresh store, its manifest and checked calls."""

from __future__ import annotations

import inspect
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionmem.conformance._values import non_json, short
from lionmem.errors import MemoryAdapterError
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
from lionmem_models.memory_item import MemoryItem

if TYPE_CHECKING:
    from lionmem.conformance._harness import MemoryAdapterHarness
    from lionmem.protocol import ExternalMemoryStore
    from lionmem_models.memory_query import MemoryQuery

__all__ = [
    "Case",
    "CaseContext",
    "CaseFailed",
    "CaseNotApplicable",
    "checked_manifest",
    "coroutine_method",
    "declared",
    "query_text",
]


class CaseFailed(Exception):
    """The adapter broke the case's observation; the message says which claim and how."""


class CaseNotApplicable(Exception):
    """The manifest (or the harness) does not claim what the case checks; the message says why."""


@dataclass(frozen=True)
class Case:
    """One observation of the conformance matrix."""

    name: str
    """Stable identifier, used in reports, pytest ids and ``run(cases=...)``."""
    row: str
    """The ADR-0093 D2 matrix row, or the lionmem profile, the case belongs to."""
    summary: str
    """One sentence: what must be observed."""
    check: Callable[[CaseContext], Awaitable[str | None]] = field(repr=False, compare=False)
    """Raises CaseFailed or CaseNotApplicable; returns optional detail on a pass."""


def _claim_value(value: Any) -> str:
    if isinstance(value, frozenset):
        return repr(sorted(value))
    return repr(value)


def declared(manifest: MemoryAdapterManifest) -> MemoryAdapterManifest:
    """``manifest`` as the ``MemoryAdapterManifest`` its fields declare, when it is a subclass:
    a method it overrides claims nothing."""
    if type(manifest) is MemoryAdapterManifest:
        return manifest
    fields = {name: getattr(manifest, name) for name in MemoryAdapterManifest.model_fields}
    return MemoryAdapterManifest.model_construct(**fields)  # as given: a case checks validity


def checked_manifest(
    store: object, expected: MemoryAdapterManifest | None = None
) -> MemoryAdapterManifest:
    """Return ``store.manifest``; fail unless it is a real manifest, equal to ``expected`` if given.

    ``expected`` is the manifest the suite checks (the report records it): a store of the same
    harness that shows another one would make the report claim what no case checked. A subclass
    is read as the ``MemoryAdapterManifest`` its fields declare: a method it overrides (say, a
    ``supports_filter`` taking more keys than ``supported_filters``) claims nothing.
    """
    manifest = getattr(store, "manifest", None)
    if not isinstance(manifest, MemoryAdapterManifest):
        msg = (
            f"{type(store).__name__}.manifest is {type(manifest).__name__}, not a "
            "MemoryAdapterManifest (ADR-0093 D1)"
        )
        raise CaseFailed(msg)
    manifest = declared(manifest)
    if expected is not None and manifest != expected:
        changes = [
            f"{name} {_claim_value(getattr(expected, name))} -> {_claim_value(getattr(manifest, name))}"
            for name in MemoryAdapterManifest.model_fields
            if getattr(manifest, name) != getattr(expected, name)
        ]
        msg = (
            "the harness made a store whose manifest differs from the one the suite checks (the "
            f"first store's, recorded in the report): {'; '.join(changes)}; every store of one "
            "harness must show the same manifest (ADR-0093 D1: the manifest is stable)"
        )
        raise CaseFailed(msg)
    return manifest


class CaseContext:
    """A case's view of one adapter: checked calls that turn surprises into readable failures."""

    def __init__(  # noqa: PLR0913 - built in one place (the runner) from six independent values
        self,
        case: Case,
        harness: MemoryAdapterHarness,
        store: ExternalMemoryStore,
        manifest: MemoryAdapterManifest,
        *,
        seed: int,
        examples: int,
    ) -> None:
        self.case = case
        self.harness = harness
        self.store = store
        self.manifest = manifest
        self.seed = seed
        self.examples = examples
        # Seeded per case (str seeds hash with SHA-512: the same sequence in every process).
        self.rng = random.Random(f"{seed}:{case.name}")
        self._counter = 0

    def claim(self, name: str) -> str:
        """Return ``name=<value>`` for a manifest field, as failure messages quote it."""
        return f"{name}={_claim_value(getattr(self.manifest, name))}"

    def item(self, **fields: Any) -> MemoryItem:
        """Return a new item whose default content is unique within the case."""
        self._counter += 1
        fields.setdefault("content", f"conformance {self.case.name} item {self._counter}")
        return MemoryItem(**fields)

    async def new_store(self) -> ExternalMemoryStore:
        """Return another store from the harness (the reference-search profile uses one per example).

        Its manifest must be the case's: a store showing another one fails the case.
        """
        store = await self.harness.make_store()
        checked_manifest(store, self.manifest)
        self.store = store
        return store

    async def write(self, item: MemoryItem) -> UUID:
        """Hand the store a deep copy of ``item`` and return what ``store()`` returns.

        Whatever the store does to the object it is handed, the item the case compares results
        with, and the suite's constants that item may share values with, stay as they were.
        """
        return await self.store.store(item.model_copy(deep=True))

    async def store_item(self, item: MemoryItem) -> UUID:
        """Store ``item``; any exception fails the case, naming the call."""
        try:
            return await self.write(item)
        except Exception as exc:
            msg = f"store() of an ordinary item raised {type(exc).__name__}: {exc}"
            raise CaseFailed(msg) from exc

    async def store_unless_refused(self, item: MemoryItem, what: str) -> bool:
        """Store ``item``; ``False`` if refused with MemoryAdapterError, any other exception fails.

        ADR-0093 D3 lets an adapter refuse a value it cannot represent (``what`` names it), so a
        case storing such a value accepts the refusal and checks only a value the store took.
        """
        try:
            await self.write(item)
        except MemoryAdapterError as refusal:
            await self.refused_stores_nothing(item, refusal, what)
            return False
        except Exception as exc:
            msg = f"store() of {what} raised {type(exc).__name__}: {exc}"
            raise CaseFailed(msg) from exc
        return True

    async def refused_stores_nothing(
        self, item: MemoryItem, refusal: MemoryAdapterError, what: str
    ) -> None:
        """Fail when ``item``, whose store() raised ``refusal``, is retrievable all the same."""
        if await self.retrieve(item.id) is not None:
            msg = (
                f"store() of {what} raised {type(refusal).__name__} ({refusal}), but retrieve() "
                "returns the item; ADR-0093 D3: a write is checked before any remote write, and "
                "one refused stores nothing"
            )
            raise CaseFailed(msg) from refusal

    async def store_items(self, *items: MemoryItem) -> None:
        """Store each item in order, then make the search index visible."""
        for item in items:
            await self.store_item(item)
        await self.harness.make_search_index_visible()

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        """Retrieve by id; fail on an exception, on anything but None or a plain MemoryItem of
        JSON data, and on an item whose id is not ``item_id``."""
        try:
            result = await self.store.retrieve(item_id)
        except Exception as exc:
            msg = f"retrieve() raised {type(exc).__name__}: {exc}"
            raise CaseFailed(msg) from exc
        if result is None:
            return None
        problem = _projection_problem(result)
        if problem is not None:
            msg = f"retrieve() returned {problem}"
            raise CaseFailed(msg)
        if result.id != item_id:
            msg = (
                f"retrieve({item_id}) returned the item with id {result.id}; ADR-0093 D3: retrieve "
                "is identity lookup, it returns the item with that id or None (an unknown id "
                "returns None)"
            )
            raise CaseFailed(msg)
        return result

    async def retrieve_stored(self, item: MemoryItem) -> MemoryItem:
        """Retrieve a stored item; ``None`` fails, quoting the retrieve-fidelity claim."""
        result = await self.retrieve(item.id)
        if result is None:
            msg = (
                f"manifest claims {self.claim('retrieve_fidelity')}, but retrieve() returned None "
                "for an id whose store() succeeded; ADR-0093 D3: a successful store is directly "
                "retrievable without waiting for the search index"
            )
            raise CaseFailed(msg)
        return result

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Search; an exception, a non-list, a non-MemoryItem hit or a repeated hit fails the case."""
        try:
            results: object = await self.store.search(query)
        except Exception as exc:
            msg = f"search({query_text(query)}) raised {type(exc).__name__}: {exc}"
            raise CaseFailed(msg) from exc
        if not isinstance(results, list):
            msg = (
                f"search() returned a {type(results).__name__}, not a list; ADR-0092 D2: search "
                "returns a concrete list of MemoryItem"
            )
            raise CaseFailed(msg)
        for hit in results:
            problem = _projection_problem(hit)
            if problem is not None:
                msg = f"search() returned a hit that is {problem}"
                raise CaseFailed(msg)
        seen: set[UUID] = set()
        for hit in results:
            if hit.id in seen:
                msg = (
                    f"search({query_text(query)}) returned the item {hit.id} more than once; "
                    "a search returns each stored item at most once"
                )
                raise CaseFailed(msg)
            seen.add(hit.id)
        return results

    async def search_ids(self, query: MemoryQuery) -> list[UUID]:
        """Search and return the hits' ids, in order."""
        return [hit.id for hit in await self.search(query)]


def _projection_problem(result: object) -> str | None:
    """Say how ``result`` is not a new, plain MemoryItem holding JSON data; ``None`` if it is one.

    A subclass can carry undeclared native attributes (a score, a handle) and an SDK object in
    content or metadata is a native object escaping: both are what ADR-0093 D1 and D3 rule out.
    """
    if type(result) is not MemoryItem:
        kind = "a MemoryItem subclass " if isinstance(result, MemoryItem) else "a "
        return (
            f"{kind}{type(result).__name__} ({short(result)}); ADR-0093 D2 (typed search): every "
            "result is a MemoryItem, no native object escapes, and D1: service fields do not "
            "appear as undeclared attributes"
        )
    for name in ("content", "metadata"):
        found = non_json(getattr(result, name), name)
        if found is not None:
            return (
                f"an item whose {found}, not JSON data; ADR-0093 D2 (typed search): no native "
                "object escapes"
            )
    return None


def query_text(query: MemoryQuery) -> str:
    """Return a query's non-default fields as ``name=value, ...``, as failure messages show calls."""
    fields = query.model_dump(exclude_defaults=True)
    return ", ".join(f"{key}={short(value)}" for key, value in fields.items())


def coroutine_method(method: object) -> bool:
    """Whether calling ``method`` gives a coroutine to await: it is a coroutine function, or one
    is under its ``functools.wraps`` decorators."""
    return callable(method) and (
        inspect.iscoroutinefunction(method) or inspect.iscoroutinefunction(inspect.unwrap(method))
    )
