"""Adapters built to slip past the suite, and honest adapters the suite once failed.

Each adversary is the honest fake with one defect no manifest can declare (a write quota that
discards silently, a recall path that swallows outages, floats kept as float32, tags kept as a
set, ...), under a manifest claiming the opposite: the named case must fail, saying what it saw.
Each honest refuser is the fake with one value range it cannot hold, refused with
``MemoryAdapterError`` as ADR-0093 D3 permits: it must pass.
"""

from __future__ import annotations

import asyncio
import copy
import re
import struct
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple, cast
from uuid import UUID

import pytest

from lionmem import (
    MemoryAdapterError,
    MemoryAdapterManifest,
    MemoryAdapterUnavailable,
    MemoryItem,
    MemoryQuery,
)
from lionmem.conformance import ConformanceReport, run
from lionmem.conformance.fake import (
    FakeBehaviour,
    FakeHarness,
    FakeMemoryAdapter,
    FakeService,
    declared_manifest,
)


def _map_json(value: Any, leaf: Any) -> Any:
    """Return ``value`` with ``leaf`` applied to every scalar inside it."""
    if isinstance(value, list):
        return [_map_json(element, leaf) for element in value]
    if isinstance(value, dict):
        return {key: _map_json(element, leaf) for key, element in value.items()}
    return leaf(value)


def _float32(value: Any) -> Any:
    return struct.unpack("f", struct.pack("f", value))[0] if type(value) is float else value


def _js_number(value: Any) -> Any:
    return int(value) if type(value) is float and value.is_integer() else value


class _Rewriting(FakeMemoryAdapter):
    """Writes ``rewrite(item)`` instead of the item it is handed."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        return item

    async def store(self, item: MemoryItem) -> UUID:
        return await super().store(self.rewrite(item))


class _Float32Numbers(_Rewriting):
    """Keeps every float of content and metadata as a float32."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        update = {
            name: _map_json(getattr(item, name), _float32) for name in ("content", "metadata")
        }
        return item.model_copy(update=update)


class _JsNumbers(_Rewriting):
    """Keeps numbers as JavaScript does: an integral float (and -0.0) comes back as an int."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        update = {
            name: _map_json(getattr(item, name), _js_number) for name in ("content", "metadata")
        }
        return item.model_copy(update=update)


class _TagSet(_Rewriting):
    """Keeps tags as an ordered set: duplicates and empty tags are dropped."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        return item.model_copy(update={"tags": [tag for tag in dict.fromkeys(item.tags) if tag]})


class _NoEmptyTags(_Rewriting):
    """Drops empty tags."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        return item.model_copy(update={"tags": [tag for tag in item.tags if tag]})


class _StrippedText(_Rewriting):
    """Keeps text content without surrounding whitespace and without NUL."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        content = item.content
        if isinstance(content, str):
            content = content.replace("\x00", "").strip()
        return item.model_copy(update={"content": content})


class _SortedKeys(_Rewriting):
    """Keeps objects with their keys sorted, as jsonb does."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        content = item.content
        if isinstance(content, dict):
            content = dict(sorted(content.items()))
        return item.model_copy(update={"content": content})


class _MicrosecondTime(_Rewriting):
    """Keeps created_at to the microsecond, as a timestamptz column does."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        return item.model_copy(update={"created_at": round(item.created_at * 1e6) / 1e6})


def _without_empties(value: Any) -> Any:
    """``value`` without the empty strings and lists inside its objects and lists."""
    if isinstance(value, list):
        return [_without_empties(part) for part in value if part not in ("", [])]
    if isinstance(value, dict):
        return {key: _without_empties(part) for key, part in value.items() if part not in ("", [])}
    return value


class _DropsEmpties(_Rewriting):
    """Drops empty strings and lists nested in content and metadata (as some JSON encoders do)."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        update = {name: _without_empties(getattr(item, name)) for name in ("content", "metadata")}
        return item.model_copy(update=update)


class _DottedPaths(_Rewriting):
    """Takes a dotted metadata key for a path: ``{"a.b": 1}`` is kept as ``{"a": {"b": 1}}``."""

    def rewrite(self, item: MemoryItem) -> MemoryItem:
        metadata: dict[str, Any] = {}
        for key, value in item.metadata.items():
            *parents, last = key.split(".")
            node = metadata
            for parent in parents:
                node = node.setdefault(parent, {})
            node[last] = value
        return item.model_copy(update={"metadata": metadata})


class _SilentQuota(FakeMemoryAdapter):
    """Acknowledges every write but keeps only the first 50 of the service's namespace."""

    async def store(self, item: MemoryItem) -> UUID:
        if len(self._service.records) >= 50:
            return item.id
        return await super().store(item)


class _RecallSwallowsOutage(FakeMemoryAdapter):
    """Answers a text or tag search with [] when the transport is down."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        try:
            return await super().search(query)
        except MemoryAdapterUnavailable:
            if query.text or query.tags:
                return []
            raise


class _LazyConnect(FakeMemoryAdapter):
    """Connects on its first call; when that fails, retrieve answers None and search []."""

    connected = False

    def _connect(self) -> bool:
        self.connected = self.connected or self._service.available
        return self.connected

    async def store(self, item: MemoryItem) -> UUID:
        self._connect()
        return await super().store(item)

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        return await super().retrieve(item_id) if self._connect() else None

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return await super().search(query) if self._connect() else []


class _EagerHarness(FakeHarness):
    """Connects in make_store, so that a store cannot be made while the transport is down."""

    async def make_store(self) -> FakeMemoryAdapter:
        if not self.service.available:
            msg = "connection refused"
            raise MemoryAdapterUnavailable(msg)
        return await super().make_store()


class _CancelledOnOutage(FakeMemoryAdapter):
    """Raises asyncio.CancelledError where the transport is down (a torn-down client task group)."""

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        try:
            return await super().retrieve(item_id)
        except MemoryAdapterUnavailable as exc:
            raise asyncio.CancelledError from exc


class _LibraryAbort(BaseException):
    """A client library's own BaseException subclass (as some use to unwind their task groups)."""


class _RaisesItsOwnBaseException(FakeMemoryAdapter):
    """Raises a BaseException subclass of its client library from retrieve()."""

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        msg = "the client library gave up"
        raise _LibraryAbort(msg)


class _DowngradesWhenDown(FakeMemoryAdapter):
    """Shows an eventual-search manifest while the service is down."""

    @property
    def manifest(self) -> Any:
        if self._service.available:
            return self._manifest
        return self._manifest.model_copy(update={"search_consistency": "eventual"})


class _PredicatesIgnoreLimit(FakeMemoryAdapter):
    """Honours the limit only on the plain listing; a text, tag or filter search gets 100."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.limit > 0 and (query.text or query.tags or query.filters):
            query = query.model_copy(update={"limit": 100})
        return await super().search(query)


class _TextOnlyFilters(FakeMemoryAdapter):
    """Drops every filter whose value is not a string (a string-only filter language)."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.filters:
            kept = {key: value for key, value in query.filters.items() if isinstance(value, str)}
            query = query.model_copy(update={"filters": kept or None})
        return await super().search(query)


class _NativeOptionFilters(FakeMemoryAdapter):
    """Passes '$'-keys and 'min_score' to the service as native options (here: ignored)."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        filters = {
            key: value
            for key, value in (query.filters or {}).items()
            if not key.startswith("$") and key != "min_score"
        }
        return await super().search(query.model_copy(update={"filters": filters or None}))


class _PageCap(FakeMemoryAdapter):
    """Returns at most ten hits, whatever the limit."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return (await super().search(query))[:10]


class _HalfIdKeys(FakeMemoryAdapter):
    """Keys records by the upper 64 bits of their UUID."""

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        for key in self._service.records:
            if UUID(key).int >> 64 == item_id.int >> 64:
                return await super().retrieve(UUID(key))
        return await super().retrieve(item_id)


class _Scored(MemoryItem):
    """A MemoryItem carrying the service's score as an undeclared attribute."""

    score: float = 0.0


class _ScoredHits(FakeMemoryAdapter):
    """Returns its search hits as a MemoryItem subclass with a score."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return [_Scored(**hit.model_dump(), score=0.5) for hit in await super().search(query)]


@dataclass
class _NativeHit:
    payload: Any


class _NativeContentHits(FakeMemoryAdapter):
    """Returns its search hits with the SDK's response object as content."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        hits = await super().search(query)
        return [hit.model_copy(update={"content": _NativeHit(hit.content)}) for hit in hits]


class _MadeUpHitTags(FakeMemoryAdapter):
    """Declares that hits carry no tags, and gives each hit the tag 'memory'."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return [hit.model_copy(update={"tags": ["memory"]}) for hit in await super().search(query)]


class _ListingReadsRecords(FakeService):
    """An index that is late for text, tag and filter search while the listing reads the records."""

    def query(
        self, text: str | None, tags: list[str] | None, filters: dict[str, Any] | None, limit: int
    ) -> list[dict[str, Any]]:
        if text or tags or filters:
            return super().query(text, tags, filters, limit)
        index, self.index = self.index, self.records
        try:
            return super().query(text, tags, filters, limit)
        finally:
            self.index = index


class _HitsDropSource(FakeMemoryAdapter):
    """Search hits lose the metadata key ``source`` (retrieve keeps it)."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return [
            hit.model_copy(
                update={"metadata": {k: v for k, v in hit.metadata.items() if k != "source"}}
            )
            for hit in await super().search(query)
        ]


class _FirstFilterKeyOnly(FakeMemoryAdapter):
    """Applies only the first key of a filter (a service that takes one condition)."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.filters and len(query.filters) > 1:
            first = dict([next(iter(query.filters.items()))])
            query = query.model_copy(update={"filters": first})
        return await super().search(query)


class _LooseStringFilters(FakeMemoryAdapter):
    """Compares string filter values without case, surrounding spaces or Unicode form."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if not query.filters:
            return await super().search(query)
        wanted = {key: _loose(value) for key, value in query.filters.items()}
        every = await super().search(query.model_copy(update={"filters": None, "limit": 10**6}))
        hits = [
            hit
            for hit in every
            if all(_loose(hit.metadata.get(key)) == value for key, value in wanted.items())
        ]
        return hits[: query.limit]


def _loose(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value).strip().casefold()
    return value


class _LimitUnderTen(FakeMemoryAdapter):
    """Honours a limit below 10 only; a larger one returns every hit."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.limit >= 10:
            query = query.model_copy(update={"limit": 10**6})
        return await super().search(query)


class _WritesThenRefuses(FakeMemoryAdapter):
    """Writes a string content NFC-normalised, then raises as if it had refused it."""

    async def store(self, item: MemoryItem) -> UUID:
        if (
            isinstance(item.content, str)
            and unicodedata.normalize("NFC", item.content) != item.content
        ):
            await super().store(
                item.model_copy(update={"content": unicodedata.normalize("NFC", item.content)})
            )
            msg = "content is not in NFC"
            raise MemoryAdapterError(msg)
        return await super().store(item)


class _SearchIndexQuota(FakeMemoryAdapter):
    """Search sees only the first 40 records the service took; retrieve sees them all."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        indexed = {UUID(native) for native in list(self._service.records)[:40]}
        return [hit for hit in await super().search(query) if hit.id in indexed]


class _LiveRetrieve(FakeMemoryAdapter):
    """Hands out, from retrieve(), the same object for an id each time."""

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        kept = self.__dict__.setdefault("kept", {})
        if item_id not in kept:
            kept[item_id] = await super().retrieve(item_id)
        return cast("MemoryItem | None", kept[item_id])


class _OneTagOnly(FakeMemoryAdapter):
    """Drops the tags of a query holding more than one."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.tags and len(query.tags) > 1:
            query = query.model_copy(update={"tags": []})
        return await super().search(query)


class _GuardOnListingOnly(FakeMemoryAdapter):
    """Checks a query with text or tags less than the plain listing: drops the filter keys it
    does not support, cuts a negative limit as a slice and asks the service even for limit 0."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if not (query.text or query.tags):
            return await super().search(query)
        known = {
            key: value
            for key, value in (query.filters or {}).items()
            if self.manifest.supports_filter(key)
        }
        every = query.model_copy(update={"filters": known or None, "limit": 10**6})
        hits = await super().search(every)
        return [] if query.limit == 0 else hits[: query.limit]


class _FiltersOnlyAlone(FakeMemoryAdapter):
    """Drops the filters of a query holding text or tags (a recall path without filters)."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.text or query.tags:
            query = query.model_copy(update={"filters": None})
        return await super().search(query)


class _TagsOnlyAlone(FakeMemoryAdapter):
    """Drops the tags of a query holding text."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.text:
            query = query.model_copy(update={"tags": None})
        return await super().search(query)


class _IdentityFilters(FakeMemoryAdapter):
    """Keeps copies of the items it stores (sharing their strings and numbers) and selects by a
    filter only the items whose value is the very object the query holds."""

    async def store(self, item: MemoryItem) -> UUID:
        self.__dict__.setdefault("kept", {})[item.id] = copy.deepcopy(item)
        return await super().store(item)

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        hits = await super().search(query.model_copy(update={"filters": None, "limit": 10**6}))
        kept = self.__dict__.get("kept", {})
        wanted = (query.filters or {}).items()
        return [
            hit
            for hit in hits
            if hit.id in kept and all(kept[hit.id].metadata.get(k) is v for k, v in wanted)
        ][: query.limit]


class _FirstWriteRetrieved(FakeMemoryAdapter):
    """retrieve() answers an id's first write (an identity table written once, on insert)."""

    async def store(self, item: MemoryItem) -> UUID:
        self._service.__dict__.setdefault("first", {}).setdefault(item.id, item.model_copy())
        return await super().store(item)

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        got = await super().retrieve(item_id)
        first: dict[UUID, MemoryItem] = self._service.__dict__.get("first", {})
        return None if got is None else first[got.id].model_copy()


class _FirstWriteMetadataHits(FakeMemoryAdapter):
    """Search hits carry the metadata of an id's first write (a column never updated)."""

    async def store(self, item: MemoryItem) -> UUID:
        self._service.__dict__.setdefault("meta", {}).setdefault(item.id, dict(item.metadata))
        return await super().store(item)

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        meta: dict[UUID, dict[str, Any]] = self._service.__dict__.get("meta", {})
        return [
            hit.model_copy(update={"metadata": meta.get(hit.id, hit.metadata)})
            for hit in await super().search(query)
        ]


def _contains(stored: Any, wanted: Any) -> bool:
    """jsonb's ``@>``: a part of an object or of an array, or an element of an array, matches."""
    if isinstance(stored, dict) and isinstance(wanted, dict):
        return all(key in stored and _contains(stored[key], value) for key, value in wanted.items())
    if isinstance(stored, list):
        if isinstance(wanted, list):
            return all(any(_contains(held, part) for held in stored) for part in wanted)
        return any(_contains(held, wanted) for held in stored)
    return bool(stored == wanted)


class _ContainmentService(FakeService):
    """Compares filter values by containment instead of equality."""

    def _equal(self, stored: Any, wanted: Any) -> bool:
        return _contains(stored, wanted)


def _containment_harness() -> FakeHarness:
    harness = FakeHarness()
    harness.service = _ContainmentService(harness.behaviour)
    return harness


class _PassThroughManifest(MemoryAdapterManifest):
    """A manifest whose methods take every '$'-key, which its supported_filters do not list."""

    def supports_filter(self, key: str) -> bool:
        return key.startswith("$") or super().supports_filter(key)

    def unsupported_filters(self, keys: Iterable[str]) -> tuple[str, ...]:
        return tuple(key for key in super().unsupported_filters(keys) if not key.startswith("$"))


def _pass_through_harness() -> FakeHarness:
    """The native-option store under a manifest subclass whose methods say it takes '$'-keys."""
    harness = _Harness(_NativeOptionFilters)
    harness.manifest = _PassThroughManifest(**harness.manifest.model_dump())
    return harness


class _Harness(FakeHarness):
    """The fake's harness making stores of ``adapter`` (a manifest update or behaviour optional)."""

    def __init__(
        self,
        adapter: type[FakeMemoryAdapter],
        behaviour: FakeBehaviour | None = None,
        *,
        any_filter_key: bool = False,
        **claims: Any,
    ) -> None:
        behaviour = behaviour or FakeBehaviour()
        manifest = declared_manifest(behaviour, any_filter_key=any_filter_key)
        super().__init__(behaviour, manifest=manifest.model_copy(update=claims))
        self.adapter = adapter

    async def make_store(self) -> FakeMemoryAdapter:
        return self.adapter(self.service, self.manifest, self.behaviour)


def _report(harness: FakeHarness, *cases: str, examples: int = 3) -> ConformanceReport:
    return asyncio.run(run(harness, examples=examples, cases=cases or None))


class Adversary(NamedTuple):
    name: str
    make: Callable[[], FakeHarness]
    """Makes a fresh harness: one the suite has closed is not used again."""
    case: str
    says: str
    """A part of the failure's reason."""


def _split_index_harness() -> FakeHarness:
    """Writes reach text, tag and filter search late; the manifest claims immediate search."""
    harness = FakeHarness(FakeBehaviour(eventual_search=True), manifest=declared_manifest())
    harness.service = _ListingReadsRecords(harness.behaviour)
    return harness


BACKEND = "backend-defined"
ADVERSARIES = (
    Adversary(
        "silent-quota",
        partial(_Harness, _SilentQuota),
        "empty_query_first_page",
        "retrieve() returned None for write 48 of 300",
    ),
    Adversary(
        "recall-swallows-outage",
        partial(_Harness, _RecallSwallowsOutage),
        "transport_outage",
        "search(text='conformance') returned []; search(tags=['t-kept']) returned []",
    ),
    Adversary(
        "lazy-connect",
        partial(_Harness, _LazyConnect),
        "transport_outage",
        "retrieve(stored id) as a new store's first call returned None",
    ),
    Adversary(
        "float32",
        partial(_Harness, _Float32Numbers),
        "retrieve_structured_content",
        "returned float 0.10000000149011612 for stored 0.1",
    ),
    Adversary(
        "float32",
        partial(_Harness, _Float32Numbers),
        "metadata_round_trip",
        "preserves_metadata=True",
    ),
    Adversary(
        "float32",
        partial(_Harness, _Float32Numbers),
        "search_hit_fidelity",
        "search_fidelity='full'",
    ),
    Adversary(
        "js-numbers", partial(_Harness, _JsNumbers), "retrieve_structured_content", "returned int"
    ),
    Adversary(
        "js-numbers",
        partial(_Harness, _JsNumbers),
        "metadata_round_trip",
        "metadata {'floats': [0.1, 0.3333333333333333, 1, 0]}",
    ),
    Adversary(
        "limit-ignored",
        partial(_Harness, _PredicatesIgnoreLimit, search_semantics=BACKEND),
        "limit_positive",
        "search(text='probe', limit=1) over 5 matching stored items returned 5 hits",
    ),
    Adversary(
        "text-only-filters",
        partial(_Harness, _TextOnlyFilters, search_semantics=BACKEND),
        "supported_filter_selects",
        "search(filters={'lang': 7000}, limit=14) returned an item whose value differs",
    ),
    Adversary(
        "native-option-filters",
        partial(_Harness, _NativeOptionFilters),
        "unsupported_filter_rejected",
        "instead of raising UnsupportedMemoryQuery",
    ),
    Adversary(
        "split-index",
        _split_index_harness,
        "search_visibility",
        "search(text='visibility') right after a successful store()",
    ),
    Adversary(
        "tag-set",
        partial(_Harness, _TagSet),
        "retrieve_anchors",
        "tags=['a', 'b'] for stored ['a', 'a', '', 'b']",
    ),
    Adversary(
        "tag-set-native-fields",
        partial(
            _Harness,
            _TagSet,
            FakeBehaviour(tagless_search_hits=True),
            preserves_metadata=False,
            retrieve_fidelity="native_fields",
            search_fidelity="native_fields",
            search_semantics=BACKEND,
        ),
        "retrieve_anchors",
        "tags=['a', 'b'] for stored ['a', 'a', '', 'b']",
    ),
    Adversary(
        "hits-drop-a-metadata-key",
        partial(_Harness, _HitsDropSource),
        "search_hit_fidelity",
        "the search hit has metadata=",
    ),
    Adversary(
        "no-empty-tags",
        partial(_Harness, _NoEmptyTags),
        "search_hit_tags",
        "tags ['a', 'a', 'b'] for stored ['a', 'a', '', 'b']",
    ),
    Adversary(
        "stripped-text",
        partial(_Harness, _StrippedText),
        "retrieve_structured_content",
        "returned str 'indented' for stored '  indented\\n'",
    ),
    Adversary(
        "sorted-keys",
        partial(_Harness, _SortedKeys),
        "retrieve_structured_content",
        "{'a': 2, 'b': 1} and {'b': 1, 'a': 2}",
    ),
    Adversary(
        "scored-subclass",
        partial(_Harness, _ScoredHits),
        "search_returns_memory_items",
        "a MemoryItem subclass _Scored",
    ),
    Adversary(
        "native-content",
        partial(_Harness, _NativeContentHits, search_fidelity="lossy"),
        "search_returns_memory_items",
        "content is a _NativeHit, not JSON data",
    ),
    Adversary(
        "downgrade",
        partial(_Harness, _DowngradesWhenDown),
        "transport_outage",
        "store.manifest changed after the failed calls",
    ),
    Adversary(
        "microseconds",
        partial(_Harness, _MicrosecondTime),
        "retrieve_created_at",
        "created_at=1000000000.123457 for stored 1000000000.1234567",
    ),
    Adversary("page-cap", partial(_Harness, _PageCap), "reference_search_profile", "example 0"),
    Adversary(
        "half-id-keys",
        partial(_Harness, _HalfIdKeys),
        "unknown_id_returns_none",
        "returned the item with id",
    ),
    Adversary(
        "made-up-hit-tags",
        partial(_Harness, _MadeUpHitTags, FakeBehaviour(tagless_search_hits=True)),
        "search_hit_tags",
        "carried tags ['memory']",
    ),
    Adversary(
        "first-filter-key-only",
        partial(_Harness, _FirstFilterKeyOnly, search_semantics=BACKEND),
        "supported_filter_selects",
        "search(filters={'lang': 'both', 'topic': 'both'}) returned an item matching only 'lang'",
    ),
    Adversary(
        "limit-under-ten",
        partial(_Harness, _LimitUnderTen, search_semantics=BACKEND),
        "limit_positive",
        "search(text='probe', limit=12) over 25 matching stored items returned 25 hits",
    ),
    Adversary(
        "writes-then-refuses",
        partial(_Harness, _WritesThenRefuses),
        "retrieve_anchors",
        "raised MemoryAdapterError (content is not in NFC), but retrieve() returns the item",
    ),
    Adversary(
        "search-index-quota",
        partial(_Harness, _SearchIndexQuota),
        "empty_query_first_page",
        "search(tags=['t-write-150']) did not return write 150 of 300",
    ),
    Adversary(
        "live-retrieve",
        partial(_Harness, _LiveRetrieve),
        "retrieve_anchors",
        "the store handed out the object it keeps",
    ),
    Adversary(
        "one-tag-only",
        partial(_Harness, _OneTagOnly, search_semantics=BACKEND),
        "tag_search_selects",
        "search(tags=['t-alpha', 't-beta']) returned an item tagged only 't-gamma'",
    ),
    Adversary(
        "guard-on-listing-only",
        partial(_Harness, _GuardOnListingOnly),
        "limit_negative_rejected",
        "search(text='conformance', tags=['t-negative'], limit=-1) returned 2 hits",
    ),
    Adversary(
        "guard-on-listing-only",
        partial(_Harness, _GuardOnListingOnly),
        "limit_zero_without_io",
        "search(text='conformance', tags=['t-zero'], limit=0) reached the transport",
    ),
    Adversary(
        "guard-on-listing-only",
        partial(_Harness, _GuardOnListingOnly),
        "unsupported_filter_rejected",
        "search(text='conformance', tags=['t-unsupported'], filters=",
    ),
    Adversary(
        "filters-only-alone",
        partial(_Harness, _FiltersOnlyAlone, search_semantics=BACKEND),
        "supported_filter_selects",
        "search(text='conformance', tags=['t-filter'], filters={'lang': 'match'}, limit=14) "
        "returned an item whose value differs",
    ),
    Adversary(
        "tags-only-alone",
        partial(_Harness, _TagsOnlyAlone, search_semantics=BACKEND),
        "tag_search_selects",
        "search(text='conformance', tags=['t-alpha']) returned the item tagged only 't-beta'",
    ),
    Adversary(
        "identity-filters",
        partial(_Harness, _IdentityFilters, search_semantics=BACKEND),
        "supported_filter_selects",
        "search(filters={'lang': 'match'}, limit=14) missed the item whose metadata matches",
    ),
    Adversary(
        "first-write-retrieved",
        partial(_Harness, _FirstWriteRetrieved),
        "search_visibility",
        "retrieve() returned the replaced write's content and tags and metadata",
    ),
    Adversary(
        "first-write-metadata-hits",
        partial(_Harness, _FirstWriteMetadataHits),
        "search_visibility",
        "search(tags=['t-renamed']) returned the replaced write's metadata",
    ),
    Adversary(
        "drops-empties",
        partial(_Harness, _DropsEmpties),
        "retrieve_structured_content",
        "returned dict {'notes': ['a']} for stored {'notes': ['a', ''], 'steps': [], 'title': ''}",
    ),
    Adversary(
        "drops-empties",
        partial(_Harness, _DropsEmpties),
        "metadata_round_trip",
        "returned metadata {",
    ),
    Adversary(
        "dotted-paths",
        partial(_Harness, _DottedPaths),
        "metadata_round_trip",
        "returned metadata {'app': {'version': '1.2'}",
    ),
    Adversary(
        "pass-through-manifest",
        _pass_through_harness,
        "unsupported_filter_rejected",
        "search(filters={'$or': 'x', '$where': 'x', 'lang': 'x', 'min_score': 'x'}) returned 0 hits",
    ),
    Adversary(
        "own-base-exception",
        partial(_Harness, _RaisesItsOwnBaseException),
        "unknown_id_returns_none",
        "unexpected _LibraryAbort: the client library gave up",
    ),
    Adversary(
        "cancelled-on-outage",
        partial(_Harness, _CancelledOnOutage),
        "transport_outage",
        "unexpected CancelledError (the run was not cancelled)",
    ),
)


@pytest.mark.parametrize("adversary", ADVERSARIES, ids=[f"{a.name}-{a.case}" for a in ADVERSARIES])
def test_adversary_fails_its_case(adversary: Adversary) -> None:
    """The case fails, and its reason says what the adapter did."""
    result = _report(adversary.make(), adversary.case).result(adversary.case)
    assert (result.status, adversary.says in (result.reason or "")) == ("failed", True), result


# --- Honest refusers -------------------------------------------------------------------------


class _Refusing(FakeMemoryAdapter):
    """Refuses, before any I/O, every item ``refused`` names a reason for."""

    def refused(self, item: MemoryItem) -> str | None:
        return None

    async def store(self, item: MemoryItem) -> UUID:
        reason = self.refused(item)
        if reason is not None:
            raise MemoryAdapterError(reason)
        return await super().store(item)


class _FlatMetadata(_Refusing):
    """Metadata values must be text, numbers, booleans or lists of text (a vector database)."""

    def refused(self, item: MemoryItem) -> str | None:
        def flat(value: Any) -> bool:
            if isinstance(value, list):
                return all(type(element) is str for element in value)
            return type(value) in (str, int, float, bool)

        bad = sorted(key for key, value in item.metadata.items() if not flat(value))
        return f"metadata values of {bad} cannot be stored" if bad else None


class _ClosedSchema(_Refusing):
    """Metadata is two text columns, 'lang' and 'topic'."""

    def refused(self, item: MemoryItem) -> str | None:
        bad = sorted(
            key
            for key, value in item.metadata.items()
            if key not in {"lang", "topic"} or type(value) is not str
        )
        return f"metadata keys {bad} are not columns" if bad else None


class _DocumentKeys(_Refusing):
    """Metadata keys holding '.' or '$' cannot be stored (document-database field names)."""

    def refused(self, item: MemoryItem) -> str | None:
        bad = sorted(key for key in item.metadata if "." in key or "$" in key)
        return f"metadata keys {bad} cannot be stored" if bad else None


class _TextOnly(_Refusing):
    """Content must be text."""

    def refused(self, item: MemoryItem) -> str | None:
        kind = type(item.content).__name__
        return None if kind == "str" else f"content must be text, got {kind}"


class _NoMetadata(_Refusing):
    """Refuses every item carrying metadata."""

    def refused(self, item: MemoryItem) -> str | None:
        return "metadata cannot be stored" if item.metadata else None


LOSSY_METADATA: dict[str, Any] = {
    "preserves_metadata": False,
    "retrieve_fidelity": "native_fields",
    "search_fidelity": "native_fields",
}
REFUSERS = {
    "flat-metadata": partial(_Harness, _FlatMetadata, **LOSSY_METADATA, search_semantics=BACKEND),
    "closed-schema": partial(_Harness, _ClosedSchema, **LOSSY_METADATA, search_semantics=BACKEND),
    "document-keys": partial(_Harness, _DocumentKeys, any_filter_key=True),
    "text-only": partial(_Harness, _TextOnly, search_semantics=BACKEND),
}


@pytest.mark.parametrize("name", sorted(REFUSERS))
def test_honest_refuser_passes(name: str) -> None:
    """A store refusing values it cannot hold, with MemoryAdapterError, fails no case."""
    report = _report(REFUSERS[name](), examples=20)
    assert [(result.case, result.reason) for result in report.failed] == []


def test_the_content_case_says_how_many_shapes_were_refused() -> None:
    """The pass says every content shape was accepted, or how many of them and that the rest
    were refused."""
    case = "retrieve_structured_content"
    honest = _report(_Harness(FakeMemoryAdapter), case).result(case)
    text_only = _report(REFUSERS["text-only"](), case).result(case)
    assert (honest.status, honest.reason) == ("passed", "all 28 content shapes accepted")
    assert text_only.status == "passed"
    assert re.fullmatch(
        r"\d+ of 28 content shapes accepted, the rest refused", text_only.reason or ""
    )


def test_hits_losing_metadata_that_cannot_be_refused_are_not_told_to_refuse() -> None:
    """Metadata claimed preserved is written without a refusal allowed: losing it in hits is a
    lie of the manifest, not a value that should have been refused."""
    result = _report(_Harness(_HitsDropSource), "search_hit_fidelity").result("search_hit_fidelity")
    assert (result.status, "must be refused" in (result.reason or "")) == ("failed", False)


def test_a_harness_connecting_in_make_store_is_named_in_the_outage_case() -> None:
    """A harness whose make_store() fails during the outage is told so, not reported as an
    unexpected error of the adapter."""
    result = _report(_EagerHarness(), "transport_outage").result("transport_outage")
    assert (result.status, result.reason) == (
        "failed",
        "the harness's make_store() raised MemoryAdapterUnavailable during the outage "
        "(connection refused); ADR-0093 D4: a store is made without its transport, whose "
        "failure surfaces at the first explicit call (the harness must not connect eagerly)",
    )


def test_string_filters_compared_loosely_fail_the_reference_profile() -> None:
    """A reference claim whose filters compare strings without case, spaces or Unicode form
    fails the profile on a filter value that only looks like the stored one."""
    harness = _Harness(_LooseStringFilters)
    result = _report(harness, "reference_search_profile", examples=40).result(
        "reference_search_profile"
    )
    assert result.status == "failed", result
    assert "search({'filters': {'lang'" in (result.reason or ""), result


def test_filters_matched_by_containment_fail_the_reference_profile() -> None:
    """A reference claim whose filters match by containment (a part of a stored object or
    array, an element of an array) fails the profile on a filter aimed at such a part."""
    result = _report(_containment_harness(), "reference_search_profile", examples=100).result(
        "reference_search_profile"
    )
    assert result.status == "failed", result
    assert "where InMemoryStore returns" in (result.reason or ""), result


class _FiltersAloneOnly(FakeMemoryAdapter):
    """Refuses, visibly, a filter beside text or tags (a service that cannot combine them)."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        if query.filters and (query.text or query.tags):
            msg = "this service takes filters alone"
            raise MemoryAdapterError(msg)
        return await super().search(query)


class _VendorManifest(MemoryAdapterManifest):
    """A vendor's manifest subclass that overrides nothing."""


def test_an_honest_adapter_with_a_manifest_subclass_passes() -> None:
    """A manifest subclass is read as its fields: an honest adapter showing one passes every
    case, and the report records the manifest its fields declare."""
    harness = FakeHarness()
    fields = harness.manifest.model_dump()
    harness.manifest = _VendorManifest(**fields)
    report = _report(harness)
    assert [(result.case, result.reason) for result in report.failed] == []
    assert report.manifest is not None
    assert report.manifest.model_dump() == fields


def test_a_filter_refused_beside_text_passes_saying_so() -> None:
    """A filter a store refuses visibly beside text and tags broadens nothing: the case passes,
    and its detail says which queries were refused."""
    harness = _Harness(_FiltersAloneOnly, search_semantics=BACKEND)
    result = _report(harness, "supported_filter_selects").result("supported_filter_selects")
    assert result.status == "passed", result
    assert "'lang'='match' beside text and a tag refused as a query" in (result.reason or "")


def test_many_supported_filter_keys_pass() -> None:
    """With 20 supported filter keys, a None filter still sees every item the case stored."""
    keys = frozenset(f"k{n:02d}" for n in range(20))
    manifest = declared_manifest().model_copy(update={"supported_filters": keys})
    result = _report(FakeHarness(manifest=manifest), "supported_filter_selects").result(
        "supported_filter_selects"
    )
    assert (result.status, result.reason) == (
        "passed",
        "; ".join(
            f"'{key}'={value!r}" for key in sorted(keys) for value in ("match", 7000, True, None)
        )
        + "; 'k00' and 'k01' together",
    )


def test_filter_case_without_any_accepted_value_is_not_applicable() -> None:
    """A store refusing all metadata leaves supported_filter_selects nothing to run: n/a, saying why."""
    harness = _Harness(_NoMetadata, **LOSSY_METADATA)
    result = _report(harness, "supported_filter_selects").result("supported_filter_selects")
    assert result.status == "not_applicable"
    assert (result.reason or "").startswith(
        "the adapter refused every metadata value carrying a supported filter key (ADR-0093 D3)"
    )


def test_refused_values_are_named_in_the_pass() -> None:
    """A case passing with some values refused says which, not silently."""
    result = _report(REFUSERS["text-only"](), "search_hit_fidelity").result("search_hit_fidelity")
    assert (result.status, result.reason) == (
        "passed",
        "refused (ADR-0093 D3): content {'text': ...}; content [0.1, 0.3333333333333333, 1.0, "
        "-0.0]; content [5e-324, 1.7976931348623157e+308, 9223372036854775808, "
        "18446744073709551617]",
    )


# --- Runner ----------------------------------------------------------------------------------


def test_no_reference_examples_is_not_applicable() -> None:
    """examples=0 runs no example of the reference profile: n/a, not a pass of nothing."""
    result = _report(FakeHarness(), "reference_search_profile", examples=0).result(
        "reference_search_profile"
    )
    assert (result.status, result.reason) == (
        "not_applicable",
        "no random example was asked for (examples=0)",
    )


class _HangsFromTheSecondReset(FakeHarness):
    """Resets once, then hangs in every reset."""

    resets = 0

    async def reset(self) -> None:
        self.resets += 1
        if self.resets > 1:
            await asyncio.Event().wait()
        await super().reset()


async def _cancel_a_hanging_run(harness: FakeHarness) -> None:
    task = asyncio.create_task(run(harness, cases=["protocols"]))
    await asyncio.sleep(0.05)
    task.cancel()
    await task


def test_cancelling_the_run_still_cancels_it() -> None:
    """A real cancellation of run() propagates (the harness is closed on the way)."""
    harness = _HangsFromTheSecondReset()
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(_cancel_a_hanging_run(harness))
    assert (harness.resets, harness.closed) == (2, True)
