"""A deterministic fake adapter, its fake service and its harness: a worked example, and a liar on demand.

``FakeService`` stands in for a remote memory service (JSON-like records, its own "native"
exceptions, failures, refusals, malformed payloads, late indexing). ``FakeMemoryAdapter`` is the
``ExternalMemoryStore`` over it, shaped as a real adapter: it validates before any I/O, runs the
query guard, maps native errors onto lionmem's stable errors (chained) and projects records into
new ``MemoryItem`` objects. ``FakeHarness`` gives the conformance suite control over the service.
Each switch of ``FakeBehaviour`` breaks one manifest claim: seven are honest differences an
adapter may declare (``declared_manifest``), the others defects no manifest can declare; a
manifest claiming the opposite of a switch fails the suite with a message naming the claim.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field, fields
from typing import Any, cast
from uuid import UUID, uuid4

from lionmem._coercions import uuid_key
from lionmem.conformance._values import same_value
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.guard import check_query
from lionmem_models.memory_adapter_manifest import Fidelity, MemoryAdapterManifest
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = [
    "DECLARABLE",
    "FAKE_ADAPTER",
    "FakeBehaviour",
    "FakeHarness",
    "FakeMemoryAdapter",
    "FakeService",
    "FakeServiceRefused",
    "FakeTransportError",
    "declared_manifest",
]

FAKE_ADAPTER = "lionmem.conformance.fake"
"""The ``adapter`` identifier in every manifest ``declared_manifest`` builds."""
FAKE_FILTERS = frozenset({"lang", "topic"})
"""The filter keys the fake declares when its service can filter (and any-key is not chosen)."""

Record = dict[str, Any]


@dataclass(frozen=True)
class FakeBehaviour:
    """Switches of the fake; all off is an honest, lossless, reference-exact adapter."""

    # -- Differences a manifest can declare (declared_manifest tells the truth about them) --
    eventual_search: bool = False
    """Writes reach search only after ``make_search_index_visible``. Declared: search_consistency='eventual'."""
    unsupported_filters: bool = False
    """The service cannot filter; filters that reach it are ignored. Declared: supported_filters empty."""
    dropped_fields: bool = False
    """The service keeps no created_at and no metadata. Declared: both in dropped_item_fields."""
    tagless_search_hits: bool = False
    """Search hits come back without tags. Declared: search_returns_tags=False."""
    reversed_search_order: bool = False
    """Search returns newest first. Declared: search_semantics='backend-defined'."""
    json_text_filters: bool = False
    """Filters compare lists and objects as JSON text. Declared: search_semantics='backend-defined'."""
    canonical_search_tags: bool = False
    """Search hits carry their tags sorted, without duplicates. Declared: search_fidelity='lossy'."""
    # -- Defects: no manifest can declare these; a fake with one of them is always lying --
    misses: bool = False
    """Identity lookup misses: retrieve() returns None for stored ids."""
    malformed_responses: bool = False
    """The adapter trusts malformed payloads: it salvages what it can instead of raising."""
    transport_failure: bool = False
    """The adapter masks transport failure: None, [] or the item's id instead of raising."""
    no_query_guard: bool = False
    """Queries go to the service unchecked: unknown keys ignored, negative limits sliced, limit 0 sent."""
    coerces_foreign_records: bool = False
    """retrieve() turns a record of another kind into a MemoryItem."""
    acknowledges_rejected_writes: bool = False
    """store() returns the id even when the service refused the write."""
    native_search_hits: bool = False
    """search() returns the service's raw records instead of MemoryItems."""
    recall_for_unknown_ids: bool = False
    """retrieve() of an unknown id answers with the best search hit (ranked recall)."""
    magic_empty_query: bool = False
    """An empty query is sent as the text '*' instead of as a first-page listing."""
    returns_native_ids: bool = False
    """store() returns the service's string id instead of the item's UUID."""
    unstable_manifest: bool = False
    """The manifest changes once the adapter has been used (a capability downgrade mid-life)."""
    big_ints_as_doubles: bool = False
    """The service keeps numbers as doubles: integers beyond 2**53 come back as floats, unrefused."""
    normalised_text: bool = False
    """The service NFC-normalises content and tags: a decomposed 'e\\u0301' comes back as 'é'."""

    @classmethod
    def switches(cls) -> tuple[str, ...]:
        """Return every switch name, in declaration order."""
        return tuple(entry.name for entry in fields(cls))

    def on(self) -> tuple[str, ...]:
        """Return the names of the switches that are on."""
        return tuple(name for name in self.switches() if getattr(self, name))


DECLARABLE = frozenset(
    {
        "eventual_search",
        "unsupported_filters",
        "dropped_fields",
        "tagless_search_hits",
        "reversed_search_order",
        "json_text_filters",
        "canonical_search_tags",
    }
)
"""The switches an honest manifest can declare; every other switch is a defect."""


def declared_manifest(
    behaviour: FakeBehaviour = FakeBehaviour(), *, any_filter_key: bool = False
) -> MemoryAdapterManifest:
    """Return the manifest that tells the truth about ``behaviour``'s declarable switches.

    Defects are not declarable, so for a behaviour with a defect this is the manifest of the
    honest fake: a lie about that defect.
    """
    dropped = behaviour.dropped_fields
    filters_work = not (behaviour.unsupported_filters or dropped)
    search_fidelity: Fidelity
    if behaviour.canonical_search_tags:
        search_fidelity = "lossy"
    elif dropped or behaviour.tagless_search_hits:
        search_fidelity = "native_fields"
    else:
        search_fidelity = "full"
    return MemoryAdapterManifest(
        adapter=FAKE_ADAPTER,
        native_item_fields=frozenset(
            {"id", "content", "tags"}
            if dropped
            else {"id", "created_at", "metadata", "content", "tags"}
        ),
        dropped_item_fields=frozenset({"created_at", "metadata"} if dropped else set()),
        supported_filters=FAKE_FILTERS if filters_work and not any_filter_key else frozenset(),
        supports_any_filter_key=filters_work and any_filter_key,
        search_consistency="eventual" if behaviour.eventual_search else "immediate",
        retrieve_fidelity="native_fields" if dropped else "full",
        search_fidelity=search_fidelity,
        search_returns_tags=not behaviour.tagless_search_hits,
        preserves_metadata=not dropped,
        search_semantics=(
            "backend-defined"
            if behaviour.reversed_search_order or behaviour.json_text_filters
            else "reference"
        ),
    )


class FakeTransportError(ConnectionError):
    """The fake service's native "connection failed" error."""


class FakeServiceRefused(Exception):
    """The fake service's native "request refused" error (a well-formed 4xx, say)."""


@dataclass
class FakeService:
    """An in-process stand-in for a remote memory service, holding JSON-like records.

    Records are kept in first-write order; a write to an existing id replaces it in place. Search
    reads an index: at once, or only after ``converge()`` when ``eventual_search`` is on. Every
    call counts in ``calls``.
    """

    behaviour: FakeBehaviour = field(default_factory=FakeBehaviour)
    records: dict[str, Record] = field(default_factory=dict)
    index: dict[str, Record] = field(default_factory=dict)
    available: bool = True
    refusing_writes: bool = False
    malformed: bool = False
    calls: int = 0

    def reset(self) -> None:
        """Forget every record and fault."""
        self.records.clear()
        self.index.clear()
        self.available = True
        self.refusing_writes = False
        self.malformed = False

    def converge(self) -> None:
        """Bring the search index up to date with every acknowledged write."""
        self.index = dict(self.records)

    def _enter(self) -> None:
        self.calls += 1
        if not self.available:
            msg = "connection refused: fake service is down"
            raise FakeTransportError(msg)

    def write(self, record: Record) -> Record:
        """Store a record and acknowledge it with its id."""
        self._enter()
        if self.refusing_writes:
            msg = "403 write refused by fake service"
            raise FakeServiceRefused(msg)
        if self.malformed:
            return {"status": "ok"}  # an acknowledgement without the identity
        lie = self.behaviour
        kept = json.loads(json.dumps(record), parse_int=_double if lie.big_ints_as_doubles else int)
        if lie.normalised_text:
            kept["content"] = _nfc(kept["content"])
            kept["tags"] = [_nfc(tag) for tag in kept["tags"]]
        if lie.dropped_fields:
            kept.pop("created_at", None)
            kept.pop("metadata", None)
        self.records[kept["id"]] = kept
        if not self.behaviour.eventual_search:
            self.index[kept["id"]] = kept
        return {"id": kept["id"]}

    def read(self, native_id: str) -> Record | None:
        """Return the record with this id (of any kind), or None."""
        self._enter()
        record = self.records.get(native_id)
        if record is not None and self.malformed:
            return {"kind": "memory", "id": native_id, "tags": "alpha,beta", "created_at": "soon"}
        return json.loads(json.dumps(record)) if record is not None else None

    def query(
        self, text: str | None, tags: list[str] | None, filters: dict[str, Any] | None, limit: int
    ) -> list[Record]:
        """Return memory records matching all given predicates, in index order, cut at ``limit``."""
        self._enter()
        if self.malformed:
            return [{"score": 0.93, "snippet": "..."}]
        hits: list[Record] = []
        for record in self.index.values():
            if record.get("kind") != "memory":
                continue
            if text and text.lower() not in str(record["content"]).lower():
                continue
            if tags and set(tags).isdisjoint(record["tags"]):
                continue
            if filters and not self.behaviour.unsupported_filters:
                metadata = record.get("metadata", {})
                if not all(self._equal(metadata.get(key), value) for key, value in filters.items()):
                    continue
            hit = json.loads(json.dumps(record))
            if self.behaviour.tagless_search_hits:
                del hit["tags"]
            elif self.behaviour.canonical_search_tags:
                hit["tags"] = sorted(set(hit["tags"]))
            hits.append(hit)
        if self.behaviour.reversed_search_order:
            hits.reverse()
        return hits[:limit]

    def _equal(self, stored: Any, wanted: Any) -> bool:
        """Filter equality: Python's ``==``; lists and objects as JSON text with json_text_filters."""
        both_containers = isinstance(stored, list | dict) and isinstance(wanted, list | dict)
        if self.behaviour.json_text_filters and both_containers:
            return json.dumps(stored) == json.dumps(wanted)
        return bool(stored == wanted)

    def plant(self, record: Record) -> None:
        """Add a record as-is (e.g. of another kind), visible to every operation."""
        self.records[record["id"]] = record
        self.index[record["id"]] = record


def _double(text: str) -> int | float:
    """The big_ints_as_doubles defect: an integer beyond a double's exact range becomes a float."""
    number = int(text)
    return number if abs(number) < 2**53 else float(number)


def _nfc(value: Any) -> Any:
    """The normalised_text defect: every string in ``value`` in Unicode normal form C."""
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, list):
        return [_nfc(element) for element in value]
    if isinstance(value, dict):
        return {_nfc(key): _nfc(element) for key, element in value.items()}
    return value


def _wire(name: str, value: Any) -> Any:
    """Return ``value`` as the service would hold it, or refuse it before any I/O (ADR-0093 D3)."""
    try:
        back = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        msg = f"the fake service cannot hold {name} of type {type(value).__name__}: {exc}"
        raise MemoryAdapterError(msg) from exc
    if not same_value(back, value):
        msg = f"{name} of type {type(value).__name__} would not come back exactly from the fake service"
        raise MemoryAdapterError(msg)
    return back


class FakeMemoryAdapter:
    """An ``ExternalMemoryStore`` over ``FakeService``: the pattern a real adapter follows."""

    def __init__(
        self, service: FakeService, manifest: MemoryAdapterManifest, behaviour: FakeBehaviour
    ) -> None:
        self._service = service
        self._manifest = manifest
        self._behaviour = behaviour
        self._used = False

    @property
    def manifest(self) -> MemoryAdapterManifest:
        """The immutable claims of this adapter instance."""
        if self._behaviour.unstable_manifest and self._used:
            flipped = (
                "eventual" if self._manifest.search_consistency == "immediate" else "immediate"
            )
            return self._manifest.model_copy(update={"search_consistency": flipped})
        return self._manifest

    async def store(self, item: MemoryItem) -> UUID:
        """Write ``item``; refuse what cannot be represented before any I/O."""
        self._used = True
        if not isinstance(item, MemoryItem):
            msg = f"store() takes a MemoryItem, got {type(item).__name__}"
            raise TypeError(msg)
        record: Record = {
            "kind": "memory",
            "id": str(item.id),
            "created_at": item.created_at,
            "metadata": _wire("metadata", item.metadata),
            "content": _wire("content", item.content),
            "tags": list(item.tags),
        }
        lie = self._behaviour
        try:
            ack = self._service.write(record)
        except FakeTransportError as exc:
            if lie.transport_failure:
                return item.id
            msg = "the fake service is unavailable"
            raise MemoryAdapterUnavailable(msg) from exc
        except FakeServiceRefused as exc:
            if lie.acknowledges_rejected_writes:
                return item.id
            msg = f"the fake service refused the write: {exc}"
            raise MemoryAdapterError(msg) from exc
        if ack.get("id") != str(item.id) and not lie.malformed_responses:
            msg = f"the fake service acknowledged the write without its identity: {ack!r}"
            raise MemoryAdapterError(msg)
        if lie.returns_native_ids:
            return cast("UUID", record["id"])
        return item.id

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        """Look ``item_id`` up by identity; ``None`` when unknown or not a memory record."""
        self._used = True
        key = uuid_key(item_id)
        if key is None:
            return None
        lie = self._behaviour
        if lie.misses:
            return None
        try:
            record = self._service.read(str(key))
            if record is None and lie.recall_for_unknown_ids:
                hits = self._service.query(str(key), None, None, 1) or self._service.query(
                    None, None, None, 1
                )
                record = hits[0] if hits else None
        except FakeTransportError as exc:
            if lie.transport_failure:
                return None
            msg = "the fake service is unavailable"
            raise MemoryAdapterUnavailable(msg) from exc
        if record is None:
            return None
        is_memory = record.get("kind") == "memory"
        if not is_memory and not lie.coerces_foreign_records:
            return None
        return self._project(record, tags_optional=not is_memory)

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Search the service; rejected queries raise before any I/O, limit 0 needs none."""
        self._used = True
        lie = self._behaviour
        if not lie.no_query_guard and not check_query(query, self._manifest):
            return []
        text = query.text
        if lie.magic_empty_query and not (query.text or query.tags or query.filters):
            text = "*"
        try:
            records = self._service.query(text, query.tags, query.filters, query.limit)
        except FakeTransportError as exc:
            if lie.transport_failure:
                return []
            msg = "the fake service is unavailable"
            raise MemoryAdapterUnavailable(msg) from exc
        if lie.native_search_hits:
            return cast("list[MemoryItem]", records)
        hits = [self._project(record, tags_optional=True) for record in records]
        return [hit for hit in hits if hit is not None]

    def _project(self, record: Record, *, tags_optional: bool) -> MemoryItem | None:
        """Build a new MemoryItem from a service record; a malformed record raises MemoryAdapterError."""
        try:
            return _memory_item(record, tags_optional=tags_optional)
        except (KeyError, TypeError, ValueError) as exc:  # ValidationError is a ValueError
            if self._behaviour.malformed_responses:
                return _salvage(record)
            msg = f"the fake service returned a malformed record: {exc!r}"
            raise MemoryAdapterError(msg) from exc


def _memory_item(record: Record, *, tags_optional: bool) -> MemoryItem:
    """Project a record strictly: the keys the wire format requires, values that validate as they are."""
    fields_: dict[str, Any] = {
        "id": record["id"],
        "content": record["content"],
        # Search hits may lack tags (tagless_search_hits, declared as search_returns_tags=False).
        "tags": record.get("tags", []) if tags_optional else record["tags"],
    }
    # Absent when the service drops them (dropped_fields, declared): MemoryItem's defaults apply.
    for name in ("created_at", "metadata"):
        if name in record:
            fields_[name] = record[name]
    created_at = fields_.get("created_at", 0.0)
    if isinstance(created_at, bool) or not isinstance(created_at, int | float):
        # MemoryItem would parse a date string; the wire format says a number, so anything else is wrong.
        msg = f"created_at is {type(created_at).__name__}, not a number"
        raise TypeError(msg)
    return MemoryItem.model_validate(fields_)


def _salvage(record: Record) -> MemoryItem | None:
    """The malformed_responses defect: keep whatever validates, default the rest, or give up."""
    try:
        return MemoryItem(id=record.get("id"), content=record.get("content"))
    except ValueError:
        return None


class FakeHarness:
    """The conformance harness over one ``FakeService``; every adapter it makes shares it.

    ``manifest`` defaults to ``declared_manifest(behaviour)``: pass another one to make the fake
    lie. It implements the optional harness controls too (refused writes, malformed responses and
    foreign records), so every case of the suite applies to it.
    """

    def __init__(
        self,
        behaviour: FakeBehaviour = FakeBehaviour(),
        *,
        manifest: MemoryAdapterManifest | None = None,
        any_filter_key: bool = False,
    ) -> None:
        self.behaviour = behaviour
        self.manifest = manifest or declared_manifest(behaviour, any_filter_key=any_filter_key)
        self.service = FakeService(behaviour)
        self.closed = False

    async def make_store(self) -> FakeMemoryAdapter:
        """Return a new adapter over the harness's service."""
        return FakeMemoryAdapter(self.service, self.manifest, self.behaviour)

    async def reset(self) -> None:
        """Empty the service and clear every fault."""
        self.service.reset()

    async def make_search_index_visible(self) -> None:
        """Let the search index catch up with every write."""
        self.service.converge()

    async def make_transport_unavailable(self) -> None:
        """Make every service call fail with ``FakeTransportError`` until ``reset``."""
        self.service.available = False

    async def make_writes_rejected(self) -> None:
        """Make the service refuse every write until ``reset``."""
        self.service.refusing_writes = True

    async def make_responses_malformed(self) -> None:
        """Make the service answer with malformed payloads until ``reset``."""
        self.service.malformed = True

    async def make_foreign_record(self) -> UUID:
        """Plant a record of another kind (a "note") and return its identity."""
        identity = uuid4()
        self.service.plant({"kind": "note", "id": str(identity), "content": "not a memory"})
        return identity

    async def close(self) -> None:
        """Mark the harness closed (idempotent; the fake holds no resources)."""
        self.closed = True
