"""The conformance matrix of ADR-0093 D2, one case per observation.

Each case gets a freshly reset harness and a store, checks one observation, and either returns
(passed, optionally with detail), raises ``CaseFailed`` with a message naming the broken claim,
or raises ``CaseNotApplicable`` when the manifest (or the harness) does not claim what it checks.
A case never passes silently for lack of a precondition.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any, Literal
from uuid import UUID, uuid4

from pydantic import ValidationError

from lionmem.conformance._context import (
    Case,
    CaseContext,
    CaseFailed,
    CaseNotApplicable,
    coroutine_method,
    declared,
    query_text,
)
from lionmem.conformance._reference import reference_search_profile
from lionmem.conformance._values import mismatch, same_value, short
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable, UnsupportedMemoryQuery
from lionmem.protocol import ExternalMemoryStore, MemoryStore
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["CASES", "case_named"]

_REGISTRY: list[Case] = []

Check = Callable[[CaseContext], Awaitable[str | None]]

# Rows of the ADR-0093 D2 matrix (their own words), plus D4's malformed payload and lionmem's profile.
STRUCTURAL = "Structural surface"
STORE_ID = "Store identifier"
DIRECT = "Direct retrieval"
UNKNOWN = "Unknown id"
WRONG_KIND = "Wrong native kind"
DROPPED = "Dropped write field"
TYPED = "Typed search"
LIMIT = "Limit"
EMPTY = "Empty query"
UNSUPPORTED = "Unsupported filter"
SUPPORTED = "Supported filter"
TAGS = "Tag projection"
METADATA = "Metadata projection"
CONSISTENCY = "Consistency"
OUTAGE = "Transport outage"
REJECTED = "Rejected write"
MALFORMED = "Malformed response (D4)"
REFERENCE = "Reference search (lionmem profile)"

UNICODE_TEXT = "Zürich straße İstanbul ΟΔΟΣ ǅ 🦁 naïve"
"""Text whose case mapping is tricky, in Unicode normal form C like UNICODE_TAGS."""
UNICODE_TAGS = ["alpha", "Beta", "ǅ", "\u00e9"]
DECOMPOSED_TEXT = "cafe\u0301 A\u030angstro\u0308m \u1100\u1161"
"""Text not in normal form C (combining accents, Hangul jamo): a normalising store changes it."""
DECOMPOSED_TAGS = ["e\u0301", "A\u030a"]
DECOMPOSED = "text not in Unicode normal form C"
"""What a store may refuse (ADR-0093 D3) of DECOMPOSED_TEXT and DECOMPOSED_TAGS."""
BIG_INTS = [2**53 + 1, -(2**63) - 1, 2**64 + 1]
"""One integer a double cannot hold, one beyond int64, one beyond uint64."""
BIG_METADATA = {"big": BIG_INTS}
"""Metadata an adapter may refuse (ADR-0093 D3), written apart from NESTED_METADATA."""
FIXED_CREATED_AT = 1_000_000_000.123456
"""2001-09-09T01:46:40.123456Z: far from "now", so a defaulted timestamp cannot pass for it."""
SUB_MICROSECOND_CREATED_AT = 1_000_000_000.1234567
"""A timestamp with bits below the microsecond, as most ``time.time()`` values have."""
FLOATS = [0.1, 1 / 3, 1.0, -0.0]
"""Floats a lossy codec changes: two a float32 or six digits cannot hold, an integral float (not
an int) and a negative zero (its sign kept)."""
EXTREMES = [5e-324, 1.7976931348623157e308, 2**63, 2**64 + 1]
"""The smallest and largest doubles, and integers beyond int64 and uint64."""
NUMBERS = [*FLOATS, *EXTREMES]
NUMBER_METADATA = ({"floats": FLOATS}, {"extremes": EXTREMES})
"""Metadata an adapter may refuse (ADR-0093 D3), each written apart from NESTED_METADATA."""
DUPLICATE_TAGS = ["a", "a", "", "b"]
"""Tags with a duplicate and an empty tag: a store keeping tags as a set changes them."""
DUPLICATED = "tags with a duplicate and an empty tag"
"""What a store may refuse (ADR-0093 D3) of DUPLICATE_TAGS."""
UNSORTED_OBJECT = {"b": 1, "a": 2}
"""An object whose keys are not in sorted order (a store sorting keys, as jsonb does, changes it)."""
CREATED_AT_TOLERANCE = 86_400.0  # seconds: a backend may keep time at day precision, not lose it
EMPTIES = {"notes": ["a", ""], "steps": [], "title": ""}
"""Empty values nested in an object (its keys sorted, as some stores keep them)."""
NESTED_METADATA = {
    "source": "conformance",
    "nested": {"list": [1, 2.5, None, True, "ǅ"], "empty": {}},
    "zero": 0,
    "flag": False,
    "none": None,
    "empties": EMPTIES,
}
DOTTED_METADATA = {"app.version": "1.2", "nested": {"a.b": ""}}
"""Keys holding dots, which a store may refuse (a document store's field paths) but must not
take for paths."""
CONTENT_SHAPES: tuple[object, ...] = (
    {"k": [1, 2.5, None, True, "ǅ"], "n": {"deep": "x"}},
    EMPTIES,
    DOTTED_METADATA,
    [1, "two", {"three": None}],
    *BIG_INTS,
    {"big": BIG_INTS},
    0,
    -7,
    2.5,
    True,
    False,
    None,
    "",
    "  indented\n",
    "a\x00b",
    *NUMBERS,
    FLOATS,
    EXTREMES,
)


_CANNOT_KEEP = "a value the adapter cannot keep exactly must be refused with MemoryAdapterError"
NATIVE_OPTION_KEYS = ("$where", "$or", "min_score")
"""Filter keys a service may take as native query options; unless declared, they are rejected."""
FILTER_VALUES: tuple[tuple[object, object], ...] = (
    ("match", "other"),
    (7000, 8000),
    (True, False),
)
"""Pairs of filter values: a filter on the first must not select an item holding the second.
(Each query gets a copy of its value: no object is shared with the item stored.)"""
FILTER_ITEMS = 1 + 2 * len(FILTER_VALUES)
"""Items the filter case stores for each key: one without the key and a pair per value."""
MANY_WRITES = 300
"""Writes whose every acknowledgement is checked (a few hundred: cheap on every lionmem store)."""
LIMIT_ITEMS = 25
"""Items matching the limit case's queries once it checks limits past a few hits."""


def case(name: str, row: str, summary: str) -> Callable[[Check], Check]:
    """Register ``check`` as the case ``name`` of matrix row ``row``."""

    def register(check: Check) -> Check:
        _REGISTRY.append(Case(name=name, row=row, summary=summary, check=check))
        return check

    return register


def case_named(name: str) -> Case:
    """Return the case called ``name``; ``KeyError`` listing the known names otherwise."""
    for known in CASES:
        if known.name == name:
            return known
    msg = f"no conformance case named {name!r}; known: {', '.join(c.name for c in CASES)}"
    raise KeyError(msg)


def _first_difference(got: MemoryItem, stored: MemoryItem, names: tuple[str, ...]) -> str | None:
    """Return the first of ``names`` whose value in ``got`` is not exactly the stored one."""
    for name in names:
        if not same_value(getattr(got, name), getattr(stored, name)):
            return name
    return None


def _hook(harness: object, name: str) -> Callable[[], Awaitable[Any]] | None:
    """The optional hook ``name`` of ``harness``, or ``None`` when it is left out: absent, or
    set to ``None`` on its class or on the harness itself."""
    hook: Callable[[], Awaitable[Any]] | None = getattr(harness, name, None)
    return hook


def _filter_key(manifest: MemoryAdapterManifest) -> str | None:
    """Return a filter key the manifest supports ("topic" when it accepts any), or ``None``."""
    if manifest.supports_any_filter_key:
        return "topic"
    return min(manifest.supported_filters, default=None)


async def _refusable(ctx: CaseContext, *candidates: tuple[MemoryItem, str]) -> list[MemoryItem]:
    """Store each ``(item, what)`` unless refused (ADR-0093 D3); return the items the store took."""
    return [item for item, what in candidates if await ctx.store_unless_refused(item, what)]


Problem = Callable[[MemoryItem, MemoryItem, bool], str | None]
"""Says how an item read back (first) differs from the one stored, given whether the store could
have refused it; ``None`` when it does not."""


async def _kept_exactly(
    ctx: CaseContext,
    stored: list[MemoryItem],
    candidates: tuple[tuple[MemoryItem, str], ...],
    via: Literal["retrieve", "search"],
    problem: Problem,
) -> str | None:
    """Store ``candidates`` unless refused, beside the ``stored`` items (written already and not
    refusable), read each back ``via`` retrieve or as a search hit (once the index is visible)
    and fail with the first ``problem``; return the pass's note of what was refused."""
    kept = await _refusable(ctx, *candidates)
    if via == "search":
        await ctx.harness.make_search_index_visible()
    for item in (*stored, *kept):
        got = await (ctx.retrieve_stored(item) if via == "retrieve" else _find_hit(ctx, item))
        message = problem(got, item, item not in stored)
        if message is not None:
            raise CaseFailed(message)
    return _refused_note(candidates, kept)


def _refused_note(
    candidates: tuple[tuple[MemoryItem, str], ...], kept: list[MemoryItem]
) -> str | None:
    """Return which of ``candidates`` were refused, as a pass's detail, or ``None`` if none were."""
    taken = {item.id for item in kept}
    refused = [what for item, what in candidates if item.id not in taken]
    return f"refused (ADR-0093 D3): {'; '.join(refused)}" if refused else None


# --- Structural surface ---------------------------------------------------------------------


@case(
    "protocols",
    STRUCTURAL,
    "The store satisfies MemoryStore and ExternalMemoryStore with async methods.",
)
async def _protocols(ctx: CaseContext) -> str | None:
    store = ctx.store
    if not isinstance(store, MemoryStore):
        msg = f"{type(store).__name__} does not satisfy MemoryStore (store, retrieve, search)"
        raise CaseFailed(msg)
    if not isinstance(store, ExternalMemoryStore):
        msg = f"{type(store).__name__} does not satisfy ExternalMemoryStore (no manifest property)"
        raise CaseFailed(msg)
    for method in ("store", "retrieve", "search"):
        if not coroutine_method(getattr(store, method)):
            msg = f"{type(store).__name__}.{method} is not a coroutine function (ADR-0092 D2: async methods)"
            raise CaseFailed(msg)
    return None


@case(
    "manifest_valid_and_stable",
    STRUCTURAL,
    "The manifest validates and stays the same while the store is used.",
)
async def _manifest_valid_and_stable(ctx: CaseContext) -> str | None:
    manifest = ctx.manifest
    try:
        MemoryAdapterManifest.model_validate(manifest.model_dump())
    except ValidationError as exc:
        msg = f"the manifest does not validate (built with model_construct?): {exc}"
        raise CaseFailed(msg) from exc
    item = ctx.item(tags=["stable"])
    await ctx.store_items(item)
    await ctx.retrieve(item.id)
    await ctx.search(MemoryQuery())
    _same_manifest(ctx, "while the store was used")
    return None


# --- Store identifier -----------------------------------------------------------------------


@case(
    "store_returns_item_id",
    STORE_ID,
    "store(item) returns item.id as a UUID, for any UUID version.",
)
async def _store_returns_item_id(ctx: CaseContext) -> str | None:
    for item in (ctx.item(), ctx.item(id=UUID("12345678-1234-1234-9234-567812345678"))):
        returned = await ctx.store_item(item)
        if not isinstance(returned, UUID) or returned != item.id:
            msg = (
                f"store() returned {short(returned)} ({type(returned).__name__}) for an item "
                f"with id {item.id}; ADR-0093 D2: a successful store returns item.id as a UUID"
            )
            raise CaseFailed(msg)
    return None


# --- Direct retrieval -----------------------------------------------------------------------


@case(
    "retrieve_anchors",
    DIRECT,
    "A stored id is retrievable at once, with id, content and tags exact (text not in NFC and, "
    "unless retrieval is lossy, duplicate and empty tags: exactly or refused), as a new object.",
)
async def _retrieve_anchors(ctx: CaseContext) -> str | None:
    item = ctx.item(content=UNICODE_TEXT, tags=UNICODE_TAGS)
    await ctx.store_item(item)
    candidates: tuple[tuple[MemoryItem, str], ...] = (
        (ctx.item(content=DECOMPOSED_TEXT, tags=DECOMPOSED_TAGS), DECOMPOSED),
    )
    if ctx.manifest.retrieve_fidelity != "lossy":
        candidates += ((ctx.item(tags=DUPLICATE_TAGS), DUPLICATED),)

    def problem(got: MemoryItem, stored: MemoryItem, refusable: bool) -> str | None:
        name = _first_difference(got, stored, ("id", "content", "tags"))
        if name is None:
            return None
        return (
            f"manifest lists {name!r} as native ({ctx.claim('retrieve_fidelity')}), but "
            f"retrieve() returned {name}={mismatch(getattr(got, name), getattr(stored, name))}; "
            "ADR-0093 D3: id, content and tags are anchors"
            + (f", and {_CANNOT_KEEP}" if refusable else "")
        )

    # Not searched: direct retrieval never waits for the search index.
    note = await _kept_exactly(ctx, [item], candidates, "retrieve", problem)
    got = await ctx.retrieve_stored(item)
    got.tags.append("changed by the caller")
    again = await ctx.retrieve_stored(item)
    if "changed by the caller" in again.tags:
        msg = (
            "a tag the caller appended to the item retrieve() returned is in the item a second "
            "retrieve() returns: the store handed out the object it keeps; ADR-0093 D3: "
            "projection yields a new MemoryItem"
        )
        raise CaseFailed(msg)
    return note


@case(
    "retrieve_structured_content",
    DIRECT,
    "Content of every JSON shape (objects, arrays, numbers, booleans, null, spaced text, NUL; key "
    "order unless retrieval is lossy) round-trips exactly or the write is refused.",
)
async def _retrieve_structured_content(ctx: CaseContext) -> str | None:
    accepted = 0
    shapes = CONTENT_SHAPES
    if ctx.manifest.retrieve_fidelity != "lossy":
        shapes += (UNSORTED_OBJECT,)
    for content in shapes:
        item = ctx.item(content=content)
        if not await ctx.store_unless_refused(item, f"content {short(content)}"):
            continue  # D3: a value the adapter cannot represent is refused before transport.
        accepted += 1
        got = await ctx.retrieve_stored(item)
        if not same_value(got.content, content):
            msg = (
                f"store() accepted content but retrieve() returned {type(got.content).__name__} "
                f"{mismatch(got.content, content)}; ADR-0093 D3: content is an anchor, so {_CANNOT_KEEP}"
            )
            raise CaseFailed(msg)
    if accepted == len(shapes):
        return f"all {accepted} content shapes accepted"
    return f"{accepted} of {len(shapes)} content shapes accepted, the rest refused"


@case(
    "retrieve_created_at",
    DIRECT,
    "A native created_at comes back as the exact float stored (below the microsecond exactly or refused).",
)
async def _retrieve_created_at(ctx: CaseContext) -> str | None:
    if "created_at" not in ctx.manifest.native_item_fields:
        msg = "the manifest lists created_at in dropped_item_fields"
        raise CaseNotApplicable(msg)
    if ctx.manifest.retrieve_fidelity == "lossy":
        msg = "retrieve_fidelity='lossy' permits a normalised created_at (no_silent_field_loss still checks it is kept)"
        raise CaseNotApplicable(msg)
    item = ctx.item(created_at=FIXED_CREATED_AT)
    await ctx.store_item(item)
    candidates = (
        (ctx.item(created_at=SUB_MICROSECOND_CREATED_AT), "a created_at below the microsecond"),
    )

    def problem(got: MemoryItem, stored: MemoryItem, refusable: bool) -> str | None:
        if same_value(got.created_at, stored.created_at):
            return None
        return (
            f"manifest lists 'created_at' as native with {ctx.claim('retrieve_fidelity')}, but "
            f"retrieve() returned created_at={got.created_at!r} for stored {stored.created_at!r}"
            + (f"; ADR-0093 D3: {_CANNOT_KEEP}" if refusable else "")
        )

    return await _kept_exactly(ctx, [item], candidates, "retrieve", problem)


# --- Unknown id -----------------------------------------------------------------------------


@case(
    "unknown_id_returns_none",
    UNKNOWN,
    "retrieve() of an id never stored (one differing from a stored id in a single bit too) returns None.",
)
async def _unknown_id_returns_none(ctx: CaseContext) -> str | None:
    unknown = uuid4()
    # A store whose text mentions the unknown id lures an adapter that "retrieves" by ranked recall.
    stored = ctx.item()
    await ctx.store_items(ctx.item(content=f"a note that mentions {unknown}"), stored)
    # Neighbours of a stored id lure an adapter that keys records by half of the UUID.
    for probe in (unknown, UUID(int=stored.id.int ^ 1), UUID(int=stored.id.int ^ (1 << 127))):
        got = await ctx.retrieve(probe)
        if got is not None:
            msg = (
                f"retrieve() of an id that was never stored returned a MemoryItem (id {got.id}); "
                "ADR-0093 D3: retrieve is identity lookup, an unknown id returns None, never a "
                "search result"
            )
            raise CaseFailed(msg)
    return None


# --- Wrong native kind ----------------------------------------------------------------------


@case(
    "foreign_record_returns_none",
    WRONG_KIND,
    "retrieve() of a non-memory record's identity returns None.",
)
async def _foreign_record_returns_none(ctx: CaseContext) -> str | None:
    harness = ctx.harness
    make_foreign_record = _hook(harness, "make_foreign_record")
    if make_foreign_record is None:
        msg = "the harness cannot plant a non-memory record (it has no make_foreign_record)"
        raise CaseNotApplicable(msg)
    foreign = await make_foreign_record()
    got = await ctx.retrieve(foreign)
    if got is not None:
        msg = (
            f"retrieve() of a non-memory record's identity returned a MemoryItem "
            f"(content {short(got.content)}); ADR-0093 D3: a record of another kind returns None, "
            "it is never coerced"
        )
        raise CaseFailed(msg)
    return None


# --- Dropped write field --------------------------------------------------------------------


@case(
    "no_silent_field_loss",
    DROPPED,
    "Every field not listed as dropped survives store and retrieve.",
)
async def _no_silent_field_loss(ctx: CaseContext) -> str | None:
    item = ctx.item(content=UNICODE_TEXT, tags=["kept"], created_at=FIXED_CREATED_AT)
    await ctx.store_item(item)
    got = await ctx.retrieve_stored(item)
    native = ctx.manifest.native_item_fields
    lost: list[str] = []
    if "created_at" in native and abs(got.created_at - FIXED_CREATED_AT) > CREATED_AT_TOLERANCE:
        lost.append(f"created_at (stored {FIXED_CREATED_AT!r}, got {got.created_at!r})")
    detail = None
    if "metadata" in native:
        with_metadata = await _store_some_metadata(ctx)
        if with_metadata is None:
            detail = "every metadata value tried was refused (ADR-0093 D3)"
        elif not (kept := (await ctx.retrieve_stored(with_metadata)).metadata):
            lost.append(f"metadata (stored {with_metadata.metadata!r}, got {kept!r})")
    if not got.tags:
        lost.append(f"tags (stored {item.tags!r}, got [])")
    if got.content is None:
        lost.append(f"content (stored {short(item.content)}, got None)")
    if lost:
        msg = (
            f"manifest claims {ctx.claim('native_item_fields')} and "
            f"{ctx.claim('dropped_item_fields')}, but store/retrieve silently dropped "
            + "; ".join(lost)
            + ". ADR-0093 D3: an unrepresentable field is refused or listed as dropped"
        )
        raise CaseFailed(msg)
    return detail


async def _store_some_metadata(ctx: CaseContext) -> MemoryItem | None:
    """Store an item with a one-entry metadata the store takes; ``None`` if it refuses them all.

    The entries tried: ``origin``, then a supported filter key (a closed-schema service may keep
    only those).
    """
    keys = ["origin", *sorted(ctx.manifest.supported_filters)[:1]]
    for key in keys:
        item = ctx.item(metadata={key: "conformance"})
        if await ctx.store_unless_refused(item, f"metadata {{{key!r}: 'conformance'}}"):
            return item
    return None


@case(
    "dropped_fields_accepted",
    DROPPED,
    "A field listed as dropped is accepted on write (dropped, not refused).",
)
async def _dropped_fields_accepted(ctx: CaseContext) -> str | None:
    dropped = ctx.manifest.dropped_item_fields
    if not dropped:
        msg = "the manifest lists no dropped_item_fields"
        raise CaseNotApplicable(msg)
    values = {"created_at": FIXED_CREATED_AT, "metadata": {"origin": "conformance"}}
    item = ctx.item(**{name: values[name] for name in sorted(dropped)})
    try:
        await ctx.write(item)
    except Exception as exc:
        msg = (
            f"manifest claims {ctx.claim('dropped_item_fields')} (stored without them), but "
            f"store() of an item carrying them raised {type(exc).__name__}: {exc}"
        )
        raise CaseFailed(msg) from exc
    await ctx.retrieve_stored(item)
    return None


# --- Typed search ---------------------------------------------------------------------------


@case(
    "search_returns_memory_items",
    TYPED,
    "Every search returns a list whose hits are all valid MemoryItems.",
)
async def _search_returns_memory_items(ctx: CaseContext) -> str | None:
    items = [ctx.item(content=f"{word} entry", tags=[f"t-{word}"]) for word in ("alpha", "beta")]
    await ctx.store_items(*items)
    for query in (MemoryQuery(), MemoryQuery(text="alpha"), MemoryQuery(tags=["t-beta"])):
        for hit in await ctx.search(query):
            try:
                MemoryItem.model_validate(hit.model_dump())
            except (ValidationError, ValueError, TypeError) as exc:
                msg = f"search() returned a MemoryItem that does not validate: {exc}"
                raise CaseFailed(msg) from exc
    return None


# --- Limit ----------------------------------------------------------------------------------


@case(
    "limit_positive",
    LIMIT,
    "A positive limit N returns at most N hits (and at least one when items match), with and "
    "without text, tags and a supported filter.",
)
async def _limit_positive(ctx: CaseContext) -> str | None:
    queries = [MemoryQuery(), MemoryQuery(text="probe"), MemoryQuery(tags=["t-limit"])]
    await ctx.store_items(
        *(ctx.item(content=f"limit probe {n}", tags=["t-limit"]) for n in range(5))
    )
    key = _filter_key(ctx.manifest)
    detail = None
    if key is not None:
        candidates = tuple(
            (ctx.item(metadata={key: "limit"}), f"metadata {{{key!r}: 'limit'}}") for _ in range(5)
        )
        if len(await _refusable(ctx, *candidates)) == len(candidates):
            queries.append(MemoryQuery(filters={key: "limit"}))
        else:
            detail = f"metadata {{{key!r}: 'limit'}} refused (ADR-0093 D3): no filtered query"
        await ctx.harness.make_search_index_visible()
    await _within_limits(ctx, queries, (1, 2, 3), 5)
    # Past the limits a page of one or two holds: the default limit (20) and one between.
    await ctx.store_items(
        *(ctx.item(content=f"limit probe {n}", tags=["t-limit"]) for n in range(5, LIMIT_ITEMS))
    )
    await _within_limits(ctx, queries[1:3], (12, MemoryQuery().limit), LIMIT_ITEMS)
    return detail


async def _within_limits(
    ctx: CaseContext, queries: list[MemoryQuery], limits: tuple[int, ...], matching: int
) -> None:
    for query in queries:
        for limit in limits:
            limited = query.model_copy(update={"limit": limit})
            hits = await ctx.search(limited)
            if not 1 <= len(hits) <= limit:
                msg = (
                    f"search({query_text(limited)}) over {matching} matching stored items "
                    f"returned {len(hits)} hits; ADR-0093 D2: a positive limit N returns at most "
                    "N, and the first page is not empty"
                )
                raise CaseFailed(msg)


@case(
    "limit_zero_without_io",
    LIMIT,
    "limit=0 returns [] without touching the transport, with and without text and tags.",
)
async def _limit_zero_without_io(ctx: CaseContext) -> str | None:
    await ctx.store_items(ctx.item(tags=["t-zero"]))
    await ctx.harness.make_search_index_visible()
    queries = (
        MemoryQuery(limit=0),
        MemoryQuery(text="conformance", tags=["t-zero"], limit=0),
    )
    for query in queries:
        hits = await ctx.search(query)
        if hits:
            msg = (
                f"search({query_text(query)}) returned {len(hits)} hits; ADR-0093 D3: limit=0 "
                "returns []"
            )
            raise CaseFailed(msg)
    await ctx.harness.make_transport_unavailable()
    for query in queries:
        try:
            hits = await ctx.store.search(query)
        except MemoryAdapterUnavailable as exc:
            msg = (
                f"search({query_text(query)}) reached the transport (with the transport down it "
                "raised MemoryAdapterUnavailable); ADR-0093 D3: limit=0 returns [] without "
                "transport"
            )
            raise CaseFailed(msg) from exc
        if hits != []:
            msg = (
                f"search({query_text(query)}) returned {short(hits)} with the transport down, "
                "not []"
            )
            raise CaseFailed(msg)
    return None


async def _expect_rejection(
    ctx: CaseContext, query: MemoryQuery, expected: tuple[str, ...], claim: str
) -> None:
    try:
        result = await ctx.store.search(query)
    except UnsupportedMemoryQuery as exc:
        if exc.rejected_keys != expected:
            msg = (
                f"{claim}; search({query_text(query)}) raised UnsupportedMemoryQuery naming "
                f"{list(exc.rejected_keys)} where every "
                f"rejected key, sorted, is {list(expected)}"
            )
            raise CaseFailed(msg) from exc
        wanted = "unsupported memory query keys: " + ", ".join(expected)
        if str(exc) != wanted:
            msg = f"{claim}; the error message is {str(exc)!r}, not {wanted!r}"
            raise CaseFailed(msg) from exc
        return
    except Exception as exc:
        msg = f"{claim}, but search({query_text(query)}) raised {type(exc).__name__}: {exc}"
        raise CaseFailed(msg) from exc
    msg = (
        f"{claim}, but search({query_text(query)}) returned "
        f"{len(result) if isinstance(result, list) else short(result)}"
        f"{' hits' if isinstance(result, list) else ''} instead of raising UnsupportedMemoryQuery"
    )
    raise CaseFailed(msg)


@case(
    "limit_negative_rejected",
    LIMIT,
    "A negative limit raises UnsupportedMemoryQuery naming 'limit', before any I/O, with and "
    "without text and tags.",
)
async def _limit_negative_rejected(ctx: CaseContext) -> str | None:
    await ctx.store_items(*(ctx.item(tags=["t-negative"]) for _ in range(3)))
    await ctx.harness.make_search_index_visible()
    claim = "ADR-0093 D3: a negative limit raises UnsupportedMemoryQuery naming 'limit'"
    # Whatever else the query holds: a guard run only for the plain listing is caught too.
    queries = (MemoryQuery(), MemoryQuery(text="conformance", tags=["t-negative"]))
    for query in queries:
        await _expect_rejection(ctx, query.model_copy(update={"limit": -1}), ("limit",), claim)
    await ctx.harness.make_transport_unavailable()
    for query in queries:
        limited = query.model_copy(update={"limit": -2})
        await _expect_rejection(ctx, limited, ("limit",), claim + " before any I/O")
    return None


# --- Empty query ----------------------------------------------------------------------------


@case(
    "empty_query_first_page",
    EMPTY,
    "An empty query returns the stored items (the first page), not a magic search; many "
    "acknowledged writes are all retrievable (and, under reference semantics, all listed).",
)
async def _empty_query_first_page(ctx: CaseContext) -> str | None:
    items = [ctx.item(content=word) for word in ("one", "two", "three")]
    await ctx.store_items(*items)
    stored = {item.id for item in items}
    for query in (MemoryQuery(), MemoryQuery(text="", tags=[], filters={})):
        got = set(await ctx.search_ids(query))
        if got != stored:
            msg = (
                f"search({'' if query == MemoryQuery() else 'text=, tags=[], filters={}'}) over "
                f"3 stored items returned {len(got & stored)} of them (and {len(got - stored)} "
                "others); ADR-0093 D3: an empty query returns the backend's first page up to the "
                "limit, it is not translated into a magic search string"
            )
            raise CaseFailed(msg)
    await _many_writes_kept(ctx, stored)
    return None


async def _many_writes_kept(ctx: CaseContext, earlier: set[UUID]) -> None:
    """Store MANY_WRITES more items; fail unless each is retrievable (and, under reference
    semantics, unless one large empty query lists them all, with the ``earlier`` ones).

    A service that silently discards writes past a quota is caught here. Only reference
    semantics promise InMemoryStore's unbounded first page; another backend may cap its page.
    """
    items = [ctx.item(tags=[f"t-write-{number}"]) for number in range(1, MANY_WRITES + 1)]
    await ctx.store_items(*items)
    for number, item in enumerate(items, start=1):
        if await ctx.retrieve(item.id) is None:
            msg = (
                f"retrieve() returned None for write {number} of {MANY_WRITES} (after "
                f"{len(earlier)} earlier ones), whose store() succeeded; ADR-0093 D3: a "
                "successful store is directly retrievable, otherwise it is not acknowledged"
            )
            raise CaseFailed(msg)
    # A search index that stops taking writes past a quota: the first, middle and last write.
    for number in (1, MANY_WRITES // 2, MANY_WRITES):
        item = items[number - 1]
        if item.id not in await ctx.search_ids(MemoryQuery(tags=item.tags)):
            msg = (
                f"search(tags={item.tags!r}) did not return write {number} of {MANY_WRITES}, "
                f"which retrieve() returns, once the index was made visible "
                f"({ctx.claim('search_consistency')}); ADR-0093 D2: an acknowledged write is "
                "searchable (at once, or once the index converges)"
            )
            raise CaseFailed(msg)
    if ctx.manifest.search_semantics != "reference":
        return
    wanted = earlier | {item.id for item in items}
    got = set(await ctx.search_ids(MemoryQuery(limit=2 * len(wanted))))
    if got != wanted:
        msg = (
            f"manifest claims {ctx.claim('search_semantics')}, but search(limit={2 * len(wanted)}) "
            f"over {len(wanted)} stored items returned {len(got & wanted)} of them (and "
            f"{len(got - wanted)} others), where InMemoryStore returns them all"
        )
        raise CaseFailed(msg)


# --- Unsupported filter ---------------------------------------------------------------------


def _unsupported_keys(manifest: MemoryAdapterManifest) -> tuple[str, str]:
    candidates = [f"lionmem-conformance-unsupported-{suffix}" for suffix in "zyxwvu"]
    free = [key for key in candidates if not manifest.supports_filter(key)]
    return free[0], free[1]


@case(
    "unsupported_filter_rejected",
    UNSUPPORTED,
    "Unsupported filter keys (native query options such as '$where' too) raise "
    "UnsupportedMemoryQuery naming all of them, sorted, before any I/O, beside text and tags too.",
)
async def _unsupported_filter_rejected(ctx: CaseContext) -> str | None:
    manifest = ctx.manifest
    if manifest.supports_any_filter_key:
        msg = "the manifest accepts every filter key (supports_any_filter_key=True)"
        raise CaseNotApplicable(msg)
    first, second = _unsupported_keys(manifest)
    filters: dict[str, object] = {first: "x", second: None}
    supported: dict[str, object] = {}
    if manifest.supported_filters:
        supported[min(manifest.supported_filters)] = "x"  # a supported key beside them is not named
    filters.update(supported)
    # A lure the filter would select if it were ignored; a store may refuse the key (ADR-0093 D3).
    lure = ctx.item(metadata={first: "x"}, tags=["t-unsupported"])
    await ctx.store_unless_refused(lure, f"metadata key {first!r}")
    await ctx.harness.make_search_index_visible()
    claim = f"manifest claims {ctx.claim('supported_filters')} (every other key is rejected)"
    expected = tuple(sorted((first, second)))
    await _expect_rejection(ctx, MemoryQuery(filters=filters), expected, claim)
    # Beside text and tags too: a guard run only for the plain listing is caught.
    beside = MemoryQuery(text="conformance", tags=["t-unsupported"], filters=filters)
    await _expect_rejection(ctx, beside, expected, claim)
    options = [key for key in NATIVE_OPTION_KEYS if not manifest.supports_filter(key)]
    if options:
        native = MemoryQuery(filters={**dict.fromkeys(options, "x"), **supported})
        await _expect_rejection(ctx, native, tuple(sorted(options)), claim)
    both = tuple(sorted((*expected, "limit")))
    await _expect_rejection(ctx, MemoryQuery(filters=filters, limit=-1), both, claim)
    await ctx.harness.make_transport_unavailable()
    for query in (MemoryQuery(filters=filters), beside):
        await _expect_rejection(ctx, query, expected, claim + " before any I/O")
    return None


# --- Supported filter -----------------------------------------------------------------------


@case(
    "supported_filter_selects",
    SUPPORTED,
    "Each supported filter key selects exactly the items whose metadata matches, alone and beside "
    "text and a tag: text, integer and boolean values (or the query is refused visibly), and None "
    "never selects a value that is set.",
)
async def _supported_filter_selects(ctx: CaseContext) -> str | None:
    manifest = ctx.manifest
    if manifest.supports_any_filter_key:
        keys = ["topic", "a.b $x"]
    elif manifest.supported_filters:
        keys = sorted(manifest.supported_filters)
    else:
        msg = "the manifest supports no filter key"
        raise CaseNotApplicable(msg)
    notes: list[str] = []
    # Every item the case stores can match a None filter (it lacks the key): no page may cut one.
    limit = FILTER_ITEMS * len(keys)
    for key in keys:
        notes.extend(await _filter_selects(ctx, key, limit))
    if keys[1:]:  # two keys at once
        notes.append(await _every_key_applies(ctx, keys[0], keys[1]))
    checked = [note for note in notes if not note.startswith("refused")]
    if not checked:
        msg = (
            "the adapter refused every metadata value carrying a supported filter key "
            f"(ADR-0093 D3): {'; '.join(notes)}"
        )
        raise CaseNotApplicable(msg)
    return "; ".join(notes)


BESIDE: tuple[dict[str, object], ...] = ({}, {"text": "conformance", "tags": ["t-filter"]})
"""What a filter query holds beside its filters: nothing, then text and a tag every item holds."""


async def _filter_selects(ctx: CaseContext, key: str, limit: int) -> list[str]:
    """Check the filters on ``key`` of FILTER_VALUES and of None, alone and beside text and a
    tag, with ``limit`` above every item stored; return what was checked or refused."""
    bare = ctx.item(tags=["t-filter"])
    await ctx.store_item(bare)
    pairs: list[tuple[MemoryItem, MemoryItem]] = []
    notes: list[str] = []
    for wanted, different in FILTER_VALUES:
        match = ctx.item(metadata={key: wanted}, tags=["t-filter"])
        other = ctx.item(metadata={key: different}, tags=["t-filter"])
        what = f"metadata {{{key!r}: {wanted!r}}} or {{{key!r}: {different!r}}}"
        pair = (match, what), (other, what)
        if len(await _refusable(ctx, *pair)) == len(pair):  # neither of the two was refused
            pairs.append((match, other))
        else:
            notes.append(f"refused (ADR-0093 D3): {what}")
    await ctx.harness.make_search_index_visible()
    for match, other in pairs:
        wanted = match.metadata[key]
        for beside in BESIDE:
            fresh = json.loads(json.dumps(wanted))  # equal, and not the object stored
            query = MemoryQuery(filters={key: fresh}, limit=limit, **beside)
            # A text filter must work alone; beside text and tags, a visible refusal broadens
            # nothing (a service may not combine them).
            strict = isinstance(wanted, str) and not beside
            got = await _filtered_ids(ctx, query, strict=strict)
            if got is None:
                shown = " beside text and a tag" if beside else ""
                notes.append(f"{key!r}={wanted!r}{shown} refused as a query")
                break
            problems = [
                *(["missed the item whose metadata matches"] if match.id not in got else []),
                *(["returned an item whose value differs"] if other.id in got else []),
                *(["returned an item without the key"] if bare.id in got else []),
            ]
            _fail_filter(ctx, query, key, problems)
        else:
            notes.append(f"{key!r}={wanted!r}")
    if pairs:
        valued = [item for pair in pairs for item in pair]
        notes.append(await _none_filter(ctx, key, bare, valued, limit))
    return notes


async def _every_key_applies(ctx: CaseContext, first: str, second: str) -> str:
    """Check a filter on two keys: it selects the item matching both, not one matching either
    key alone; return what was checked or refused."""
    both = ctx.item(metadata={first: "both", second: "both"})
    first_only = ctx.item(metadata={first: "both", second: "other"})
    second_only = ctx.item(metadata={first: "other", second: "both"})
    what = f"metadata with {first!r} and {second!r}"
    candidates = ((both, what), (first_only, what), (second_only, what))
    if len(await _refusable(ctx, *candidates)) < len(candidates):
        return f"refused (ADR-0093 D3): {what}"
    await ctx.harness.make_search_index_visible()
    filters = {first: "both", second: "both"}
    got = await ctx.search_ids(MemoryQuery(filters=filters, limit=FILTER_ITEMS * 10))
    problems = [
        *(["missed the item matching both"] if both.id not in got else []),
        *([f"returned an item matching only {first!r}"] if first_only.id in got else []),
        *([f"returned an item matching only {second!r}"] if second_only.id in got else []),
    ]
    if problems:
        msg = (
            f"search(filters={filters!r}) {' and '.join(problems)}; ADR-0093 D3: every key of "
            "a filter applies, so partial filtering cannot occur"
        )
        raise CaseFailed(msg)
    return f"{first!r} and {second!r} together"


async def _none_filter(
    ctx: CaseContext, key: str, bare: MemoryItem, valued: list[MemoryItem], limit: int
) -> str:
    """Check ``filters={key: None}``: never an item whose value is set; under reference
    semantics (InMemoryStore's ``metadata.get(key) == None``), the item without the key."""
    query = MemoryQuery(filters={key: None}, limit=limit)
    got = await _filtered_ids(ctx, query, strict=False)
    if got is None:
        return f"{key!r}=None refused as a query"
    problems = [
        f"returned the item whose value is {item.metadata[key]!r}"
        for item in valued
        if item.id in got
    ]
    if ctx.manifest.search_semantics == "reference" and bare.id not in got:
        problems.append("missed the item without the key (InMemoryStore selects it)")
    _fail_filter(ctx, query, key, problems)
    return f"{key!r}=None"


async def _filtered_ids(ctx: CaseContext, query: MemoryQuery, *, strict: bool) -> list[UUID] | None:
    """Search with ``query``; ``None`` when a non-``strict`` query is refused visibly.

    A store may refuse, with MemoryAdapterError, a filter value of a type its service cannot
    compare; what it may not do is ignore the filter and broaden the query.
    """
    try:
        return await ctx.search_ids(query)
    except CaseFailed as failure:
        if not strict and isinstance(failure.__cause__, MemoryAdapterError):
            return None
        raise


def _fail_filter(ctx: CaseContext, query: MemoryQuery, key: str, problems: list[str]) -> None:
    """Fail the case when ``problems`` is not empty, quoting the filter claim and the query."""
    if not problems:
        return
    manifest = ctx.manifest
    claim = ctx.claim(
        "supports_any_filter_key" if manifest.supports_any_filter_key else "supported_filters"
    )
    msg = (
        f"manifest claims filter key {key!r} is supported ({claim}), but "
        f"search({query_text(query)}) " + " and ".join(problems)
    )
    raise CaseFailed(msg)


# --- Tag projection -------------------------------------------------------------------------


@case(
    "search_hit_tags",
    TAGS,
    "Search hits carry the stored tags when the manifest says search_returns_tags: as stored "
    "(order and duplicates kept) unless search_fidelity='lossy' (then as a set, up to NFC); "
    "otherwise only tags the item has (omitted, never made up).",
)
async def _search_hit_tags(ctx: CaseContext) -> str | None:
    item = ctx.item(tags=[*UNICODE_TAGS, "alpha"])
    await ctx.store_item(item)
    candidates = (
        (ctx.item(tags=DECOMPOSED_TAGS), DECOMPOSED),
        (ctx.item(tags=DUPLICATE_TAGS), DUPLICATED),
    )

    def problem(hit: MemoryItem, stored: MemoryItem, refusable: bool) -> str | None:
        return _hit_tags_problem(ctx, hit.tags, stored.tags)

    return await _kept_exactly(ctx, [item], candidates, "search", problem)


def _hit_tags_problem(ctx: CaseContext, got: list[str], stored: list[str]) -> str | None:
    """Say how a hit's tags break the tag claims, or return ``None`` when they keep them."""
    manifest = ctx.manifest
    lossy = manifest.search_fidelity == "lossy"
    if not manifest.search_returns_tags:
        if _nfc_set(got) <= _nfc_set(stored):
            return None
        return (
            f"manifest claims {ctx.claim('search_returns_tags')} (hits may omit the stored tags), "
            f"but a search hit carried tags {mismatch(got, stored)}; ADR-0093 D2: search-hit "
            "tags agree with search_returns_tags (omitted, never made up)"
        )
    # Lossy hits may reorder, drop duplicates or normalise to NFC; others return the stored list.
    if (_nfc_set(got) == _nfc_set(stored)) if lossy else same_value(got, stored):
        return None
    return (
        f"manifest claims {ctx.claim('search_returns_tags')} with "
        f"{ctx.claim('search_fidelity')}, but the search hit carried tags {mismatch(got, stored)}"
        + ("" if lossy else " (only lossy hits may reorder, drop duplicates or normalise)")
    )


@case(
    "tag_search_selects",
    TAGS,
    "A one-tag query, alone and beside text, returns the item carrying that tag and not an item "
    "without it; a query of two tags never returns an item carrying neither.",
)
async def _tag_search_selects(ctx: CaseContext) -> str | None:
    tagged = ctx.item(tags=["t-alpha"])
    other = ctx.item(tags=["t-beta"])
    neither = ctx.item(tags=["t-gamma"])
    await ctx.store_items(tagged, other, neither)
    if neither.id in await ctx.search_ids(MemoryQuery(tags=["t-alpha", "t-beta"])):
        msg = (
            "search(tags=['t-alpha', 't-beta']) returned an item tagged only 't-gamma'; a query's "
            "tags select (ADR-0093 D3): a service may match them all or any, never none"
        )
        raise CaseFailed(msg)
    # Alone, and beside text every item holds: the tags select in both.
    for query in (MemoryQuery(tags=["t-alpha"]), MemoryQuery(text="conformance", tags=["t-alpha"])):
        got = await ctx.search_ids(query)
        if tagged.id not in got or other.id in got:
            msg = (
                f"search({query_text(query)}) "
                + ("missed the item tagged 't-alpha'" if tagged.id not in got else "")
                + (" and " if tagged.id not in got and other.id in got else "")
                + ("returned the item tagged only 't-beta'" if other.id in got else "")
                + "; tags are a portable input axis of MemoryQuery (ADR-0093 D3)"
            )
            raise CaseFailed(msg)
    return None


def _nfc_set(tags: list[str]) -> set[str]:
    return {unicodedata.normalize("NFC", tag) for tag in tags}


async def _find_hit(ctx: CaseContext, item: MemoryItem) -> MemoryItem:
    hits = [hit for hit in await ctx.search(MemoryQuery()) if hit.id == item.id]
    if not hits:
        msg = (
            "search() did not return a stored item after make_search_index_visible() "
            f"({ctx.claim('search_consistency')})"
        )
        raise CaseFailed(msg)
    return hits[0]


# --- Metadata projection --------------------------------------------------------------------


@case(
    "metadata_round_trip",
    METADATA,
    "With preserves_metadata, nested metadata comes back exactly on retrieve (big integers and "
    "hard floats exactly or refused).",
)
async def _metadata_round_trip(ctx: CaseContext) -> str | None:
    if not ctx.manifest.preserves_metadata:
        msg = "the manifest declares preserves_metadata=False"
        raise CaseNotApplicable(msg)
    item = ctx.item(metadata=NESTED_METADATA)
    await ctx.store_item(item)
    candidates = tuple(
        (ctx.item(metadata=metadata), f"metadata {short(metadata)}")
        for metadata in (BIG_METADATA, *NUMBER_METADATA, DOTTED_METADATA)
    )

    def problem(got: MemoryItem, stored: MemoryItem, refusable: bool) -> str | None:
        if same_value(got.metadata, stored.metadata):
            return None
        return (
            f"manifest claims {ctx.claim('preserves_metadata')}, but retrieve() returned "
            f"metadata {mismatch(got.metadata, stored.metadata)}"
            + (f"; ADR-0093 D3: {_CANNOT_KEEP}" if refusable else "")
        )

    return await _kept_exactly(ctx, [item], candidates, "retrieve", problem)


@case(
    "search_hit_fidelity",
    METADATA,
    "With search_fidelity='full' a search hit equals the stored item in every field; with "
    "'native_fields', in every native field (tags only when search_returns_tags).",
)
async def _search_hit_fidelity(ctx: CaseContext) -> str | None:
    manifest = ctx.manifest
    if manifest.search_fidelity == "lossy":
        msg = f"the manifest declares {ctx.claim('search_fidelity')}"
        raise CaseNotApplicable(msg)
    # Under 'full' every field is native, tags are returned and metadata preserved (D1 coherence);
    # under 'native_fields' tag presence is search_returns_tags's claim, exact metadata preserves_metadata's.
    names = tuple(
        name
        for name in ("id", "created_at", "metadata", "content", "tags")
        if name in manifest.native_item_fields
        and (name != "tags" or manifest.search_returns_tags)
        and (name != "metadata" or manifest.preserves_metadata)
    )
    item = ctx.item(
        content=UNICODE_TEXT, tags=["alpha", "Beta", "alpha"], created_at=FIXED_CREATED_AT
    )
    await ctx.store_item(item)
    nested = ctx.item(metadata=NESTED_METADATA, created_at=FIXED_CREATED_AT)
    if manifest.preserves_metadata:  # a claim that arbitrary metadata is kept: no refusal
        await ctx.store_item(nested)
    # Values a store may refuse (ADR-0093 D3), each in a write of its own.
    candidates = (
        *([] if manifest.preserves_metadata else [(nested, f"metadata {short(NESTED_METADATA)}")]),
        (ctx.item(content={"text": UNICODE_TEXT}), "content {'text': ...}"),
        *(
            (ctx.item(content=numbers), f"content {short(numbers)}")
            for numbers in (FLOATS, EXTREMES)
        ),
        *(
            (ctx.item(metadata=metadata), f"metadata {short(metadata)}")
            for metadata in (BIG_METADATA, *NUMBER_METADATA)
        ),
        (ctx.item(content=DECOMPOSED_TEXT, tags=DECOMPOSED_TAGS), DECOMPOSED),
        (ctx.item(created_at=SUB_MICROSECOND_CREATED_AT), "a created_at below the microsecond"),
    )

    def problem(hit: MemoryItem, stored: MemoryItem, refusable: bool) -> str | None:
        name = _first_difference(hit, stored, names)
        if name is None:
            return None
        return (
            f"manifest claims {ctx.claim('search_fidelity')}, but the search hit has "
            f"{name}={mismatch(getattr(hit, name), getattr(stored, name))}"
            + (f"; ADR-0093 D3: {_CANNOT_KEEP}" if refusable else "")
        )

    always = [item, nested] if manifest.preserves_metadata else [item]
    return await _kept_exactly(ctx, always, candidates, "search", problem)


# --- Consistency ----------------------------------------------------------------------------


@case(
    "search_visibility",
    CONSISTENCY,
    "An immediate adapter finds a write, and a replacement's new values, at once by listing, text, "
    "tag and a supported filter; every adapter finds them once the index is visible, and retrieve "
    "and search never return a replaced write's values.",
)
async def _search_visibility(ctx: CaseContext) -> str | None:
    key = _filter_key(ctx.manifest)
    item = _findable(ctx.item().id, "visibility", key)
    detail = None
    if key is not None and not await ctx.store_unless_refused(
        item, f"metadata {short(item.metadata)}"
    ):
        item = _findable(item.id, "visibility", None)
        await ctx.store_item(item)
        detail = f"metadata {{{key!r}: 'visibility'}} refused (ADR-0093 D3)"
    elif key is None:
        await ctx.store_item(item)
    await _expect_found(ctx, item, "visibility")
    replacement = _findable(item.id, "renamed", key if item.metadata else None)
    if not await ctx.store_unless_refused(replacement, "a second write of the same id"):
        return "a second write of the same id refused (ADR-0093 D3: the adapter owns duplicate ids)"
    await _expect_found(ctx, replacement, "renamed", replaced=item)
    return detail


def _findable(item_id: UUID, word: str, key: str | None) -> MemoryItem:
    """Return an item with id ``item_id`` whose text, tag and (with ``key``) metadata hold ``word``."""
    metadata = {} if key is None else {key: word}
    return MemoryItem(
        id=item_id, content=f"conformance {word}", tags=[f"t-{word}"], metadata=metadata
    )


async def _expect_found(
    ctx: CaseContext, item: MemoryItem, word: str, replaced: MemoryItem | None = None
) -> None:
    """Fail unless every query for ``item``'s values (``word`` in its text) finds it: at once when
    immediate, after make_search_index_visible() in any case; the ``replaced`` tags must not then."""
    queries = [MemoryQuery(), MemoryQuery(text=word), MemoryQuery(tags=item.tags)]
    if item.metadata:
        queries.append(MemoryQuery(filters=dict(item.metadata)))
    what = "a replaced item's new values" if replaced is not None else "a successful store()"
    if ctx.manifest.search_consistency == "immediate":
        for query in queries:
            if item.id not in await ctx.search_ids(query):
                msg = (
                    f"manifest claims {ctx.claim('search_consistency')}, but search({query_text(query)}) "
                    f"right after {what} did not return the item (before make_search_index_visible())"
                )
                raise CaseFailed(msg)
    await ctx.harness.make_search_index_visible()
    for query in queries:
        if item.id not in await ctx.search_ids(query):
            msg = (
                f"manifest claims {ctx.claim('search_consistency')}, but search({query_text(query)}) "
                f"did not return {what} even after make_search_index_visible()"
            )
            raise CaseFailed(msg)
    got = await ctx.retrieve(item.id)  # read before a replacement too: a cache then holds it
    if got is None:
        msg = (
            f"retrieve() returned None for {what}; ADR-0093 D3: a successful store is directly "
            "retrievable"
        )
        raise CaseFailed(msg)
    if replaced is None:
        return
    if item.id in await ctx.search_ids(MemoryQuery(tags=replaced.tags)):
        msg = (
            f"search(tags={replaced.tags!r}) still returned an item whose write replaced those tags "
            f"with {item.tags!r} ({ctx.claim('search_consistency')}); the index kept a stale entry"
        )
        raise CaseFailed(msg)
    hits = [hit for hit in await ctx.search(MemoryQuery(tags=item.tags)) if hit.id == item.id]
    if not hits:
        msg = (
            f"search(tags={item.tags!r}) did not return {what} when asked again, after it "
            "had returned it"
        )
        raise CaseFailed(msg)
    for call, read in (("retrieve()", got), (f"search(tags={item.tags!r})", hits[0])):
        stale = _stale_fields(read, item, replaced)
        if stale:
            msg = (
                f"{call} returned the replaced write's {' and '.join(stale)} after a second "
                "store() of the same id replaced them, once the index was visible; store() "
                "creates or replaces by id, and ADR-0093 D3 permits no stale direct retrieve"
            )
            raise CaseFailed(msg)


def _stale_fields(read: MemoryItem, new: MemoryItem, old: MemoryItem) -> list[str]:
    """The fields of ``read`` that hold ``old``'s value where ``new`` holds another."""
    return [
        name
        for name in ("content", "tags", "metadata")
        if same_value(getattr(read, name), getattr(old, name))
        and not same_value(getattr(new, name), getattr(old, name))
    ]


# --- Transport outage -----------------------------------------------------------------------


@case(
    "transport_outage",
    OUTAGE,
    "With the transport down, store, retrieve and every kind of search raise "
    "MemoryAdapterUnavailable, also as a new store's first call; the manifest stays the same.",
)
async def _transport_outage(ctx: CaseContext) -> str | None:
    claim = (
        "ADR-0093 D4: with the transport down every explicit call raises "
        "MemoryAdapterUnavailable (no None/[]/UUID fallback)"
    )
    kept = await _every_call_raises(
        ctx, ctx.harness.make_transport_unavailable, MemoryAdapterUnavailable, claim
    )
    # D4: transport creation failure raises from the first explicit call that requires it.
    broken: list[str] = []
    for label, call in _calls(ctx, kept):
        try:
            await ctx.new_store()
        except MemoryAdapterUnavailable as exc:
            msg = (
                f"the harness's make_store() raised MemoryAdapterUnavailable during the outage "
                f"({exc}); ADR-0093 D4: a store is made without its transport, whose failure "
                "surfaces at the first explicit call (the harness must not connect eagerly)"
            )
            raise CaseFailed(msg) from exc
        problem = await _raises(call, MemoryAdapterUnavailable)
        if problem is not None:
            broken.append(f"{label} as a new store's first call {problem}")
    if broken:
        msg = (
            f"{claim}, from the first call of a store made during the outage too, but "
            + "; ".join(broken)
        )
        raise CaseFailed(msg)
    return None


async def _store_kept(ctx: CaseContext) -> MemoryItem:
    """Store (and make visible) an item every query of ``_calls`` selects: metadata under a
    supported filter key when the store takes it."""
    key = _filter_key(ctx.manifest)
    kept = ctx.item(tags=["t-kept"], metadata={} if key is None else {key: "kept"})
    if key is None or not await ctx.store_unless_refused(kept, f"metadata {short(kept.metadata)}"):
        kept = ctx.item(tags=["t-kept"])
        await ctx.store_item(kept)
    await ctx.harness.make_search_index_visible()
    return kept


def _calls(ctx: CaseContext, kept: MemoryItem) -> list[tuple[str, Callable[[], Awaitable[object]]]]:
    """Return labelled calls of every kind on the case's current store (looked up when called)."""
    queries = [MemoryQuery(), MemoryQuery(text="conformance"), MemoryQuery(tags=["t-kept"])]
    if kept.metadata:
        queries.append(MemoryQuery(filters=dict(kept.metadata)))
    calls: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("store(item)", lambda: ctx.store.store(ctx.item())),
        ("retrieve(stored id)", lambda: ctx.store.retrieve(kept.id)),
    ]
    for query in queries:
        calls.append((f"search({query_text(query)})", functools.partial(_search, ctx, query)))
    return calls


async def _search(ctx: CaseContext, query: MemoryQuery) -> object:
    """Search the case's current store, unchecked (the outage cases check what comes back)."""
    return await ctx.store.search(query)


async def _raises(call: Callable[[], Awaitable[object]], expected: type[Exception]) -> str | None:
    """Run ``call``; return how it failed to raise ``expected``, or ``None`` when it did."""
    try:
        result = await call()
    except expected:
        return None
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"
    return f"returned {short(result)}"


async def _every_call_raises(
    ctx: CaseContext,
    inject_fault: Callable[[], Awaitable[None]],
    expected: type[Exception],
    claim: str,
) -> MemoryItem:
    """Store an item, inject the fault, then fail unless store, retrieve and searches by listing,
    text, tag and a supported filter raise ``expected``, and unless the manifest stays the same.

    Returns the item stored before the fault.
    """
    kept = await _store_kept(ctx)
    await inject_fault()
    broken: list[str] = []
    for label, call in _calls(ctx, kept):
        problem = await _raises(call, expected)
        if problem is not None:
            broken.append(f"{label} {problem}")
    if broken:
        msg = f"{claim}, but " + "; ".join(broken)
        raise CaseFailed(msg)
    _same_manifest(ctx, "after the failed calls")
    return kept


def _same_manifest(ctx: CaseContext, when: str) -> None:
    """Fail unless the store still shows the case's manifest (ADR-0093 D1: it never changes)."""
    again = ctx.store.manifest
    if isinstance(again, MemoryAdapterManifest):
        again = declared(again)
    if again != ctx.manifest:
        msg = (
            f"store.manifest changed {when}; ADR-0093 D1: the manifest is stable for the adapter "
            "instance's lifetime, and a service downgrade makes the adapter unavailable instead "
            f"(first {ctx.manifest!r}, then {again!r})"
        )
        raise CaseFailed(msg)


# --- Rejected write -------------------------------------------------------------------------


@case(
    "rejected_write_raises",
    REJECTED,
    "A write the service refuses raises MemoryAdapterError and returns no id.",
)
async def _rejected_write_raises(ctx: CaseContext) -> str | None:
    harness = ctx.harness
    make_writes_rejected = _hook(harness, "make_writes_rejected")
    if make_writes_rejected is None:
        msg = "the harness cannot make the service refuse writes (it has no make_writes_rejected)"
        raise CaseNotApplicable(msg)
    await make_writes_rejected()
    item = ctx.item()
    try:
        returned = await ctx.store.store(item)
    except MemoryAdapterError as refusal:
        # Reads still work: only writes are refused.
        await ctx.refused_stores_nothing(item, refusal, "a write the service refuses")
        return None
    except Exception as exc:
        msg = f"a refused write raised {type(exc).__name__}: {exc}, not MemoryAdapterError"
        raise CaseFailed(msg) from exc
    msg = (
        f"ADR-0093 D3: a rejected remote write raises MemoryAdapterError without returning a "
        f"UUID, but store() returned {short(returned)}"
    )
    raise CaseFailed(msg)


# --- Malformed response ---------------------------------------------------------------------


@case(
    "malformed_response_raises",
    MALFORMED,
    "A malformed service payload raises MemoryAdapterError on every call.",
)
async def _malformed_response_raises(ctx: CaseContext) -> str | None:
    harness = ctx.harness
    make_responses_malformed = _hook(harness, "make_responses_malformed")
    if make_responses_malformed is None:
        msg = "the harness cannot corrupt service responses (it has no make_responses_malformed)"
        raise CaseNotApplicable(msg)
    await _every_call_raises(
        ctx,
        make_responses_malformed,
        MemoryAdapterError,
        "ADR-0093 D4: a malformed service payload raises MemoryAdapterError (native error chained)",
    )
    return None


# --- Reference search profile ---------------------------------------------------------------

case(
    "reference_search_profile",
    REFERENCE,
    "With search_semantics='reference', random stores and queries give InMemoryStore's ids in its order.",
)(reference_search_profile)


CASES: tuple[Case, ...] = tuple(_REGISTRY)
"""Every case, in matrix order."""
