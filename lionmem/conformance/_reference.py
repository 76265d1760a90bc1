"""The reference-search profile: an adapter claiming reference semantics must search like InMemoryStore.

For ``examples`` random examples (seeded, so a failure repeats with the same seed), the profile
stores random items (0-10; 20-30 in every tenth example, whose first query then asks for a page
larger than ten) in both the adapter and a fresh ``InMemoryStore`` (with id collisions, so that
replacements happen; mixed content types; unicode whose lowering is tricky, and decomposed beside
precomposed text; duplicate and empty tags; metadata with ``None``, ``1``, ``1.0``, ``True`` and
lists and objects that are equal in Python but differ as JSON text, such as ``[1.0, 2]`` and
``[1, 2]`` or ``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}``), makes the index visible, and compares
the ids, in order, of random queries (text ``None``/``""``/absent needles/substrings with changed
case of any write's text, replaced ones too; tags ``None``/``[]``/subsets; filters on accepted keys
only, mostly with values equal to a stored item's but written differently, sometimes with a part
of a stored list or object, which containment would select; non-negative limits).
A write the adapter refuses with ``MemoryAdapterError`` (ADR-0093 D3 permits that for values it
cannot represent) is left out of the reference, and no query is aimed at it.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionmem.conformance._context import CaseContext, CaseFailed, CaseNotApplicable
from lionmem.conformance._values import same_value, short
from lionmem.errors import MemoryAdapterError
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

if TYPE_CHECKING:
    from lionmem.protocol import MemoryStore

__all__ = ["QUERIES_PER_EXAMPLE", "random_items", "random_query", "reference_search_profile"]

QUERIES_PER_EXAMPLE = 5
ANY_KEY_POOL = ("topic", "lang", "k", "", "a.b $x[0]", "ǅ")
"""Filter keys used when the manifest accepts every key."""
UNFILTERED_KEYS = ("other", "Ünïcode")
"""Metadata keys that are never filtered on (they make metadata differ from the filters)."""
TEXT_PIECES = (
    "alpha", "Beta", "GAMMA", "straße", "STRASSE", "İstanbul", "\u0131i", "ΟΔΟΣ", "οδος", "ς", "Σ",
    "ǅ", "ǆ", "Ǆ", "🦁", "naïve", " ", "1", "10", "none", "true",
    "caf\u00e9", "cafe\u0301", "nai\u0308ve", "e\u0301", "A\u030angstro\u0308m", "\u1100\u1161\u11a8",
)  # fmt: skip
"""Words whose lowering is tricky, and precomposed beside decomposed text (Unicode normalisation)."""
TAG_POOL = ("a", "b", "A", "", "ǅ", "tag one", "İ", "\u00e9", "e\u0301")
EQUAL_VALUES: tuple[tuple[Any, ...], ...] = (
    (None,), ("1",), ("x",), ("X",), (" x",), ("",), ("\u00e9",), ("e\u0301",),
    (1, 1.0, True), (0, False),
    ([1, 2], [1.0, 2]), ([True], [1]), ({"k": 1}, {"k": 1.0}),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ({"n": [{"k": True}]}, {"n": [{"k": 1}]}),
)  # fmt: skip
"""Metadata and filter values, in groups equal under ``==`` whose members differ as JSON text."""
LOOKALIKES: dict[str, tuple[str, ...]] = {
    "x": ("X", " x"), "X": ("x",), " x": ("x",), "\u00e9": ("e\u0301",), "e\u0301": ("\u00e9",),
}  # fmt: skip
"""Strings ``==`` tells apart that a service comparing loosely (case, spaces, Unicode
normalisation) would take for equal: a filter sometimes asks for one of them instead."""
LIMITS = (0, 1, 2, 3, 5, 20, 1000)
MANY_EVERY = 10
"""Every tenth example (the first included) stores 20-30 items instead of 0-10."""


def _value(rng: random.Random) -> Any:
    return rng.choice(rng.choice(EQUAL_VALUES))


def _filter_value(rng: random.Random, metadata: dict[str, Any], key: str) -> Any:
    """Return mostly a value equal to ``metadata[key]`` with another JSON text, else a random one."""
    if key not in metadata or rng.random() < 0.2:
        return _value(rng)
    value = metadata[key]
    if isinstance(value, str) and value in LOOKALIKES and rng.random() < 0.3:
        return rng.choice(LOOKALIKES[value])
    if isinstance(value, list | dict) and value and rng.random() < 0.2:
        return _part(rng, value)
    group = next(group for group in EQUAL_VALUES if value in group)
    return rng.choice([twin for twin in group if not same_value(twin, value)] or group)


def _part(rng: random.Random, value: list[Any] | dict[str, Any]) -> Any:
    """A part of a non-empty ``value`` that ``==`` tells apart from it, and that a service
    matching by containment would select it for (jsonb's ``@>``, a document store matching an
    element of an array): an element or a shorter list, an object with a key fewer, or with a
    part of one of its values."""
    if isinstance(value, list):
        return rng.choice((rng.choice(value), value[:-1]))
    key = rng.choice(list(value))
    inner = value[key]
    if isinstance(inner, list | dict) and inner and rng.random() < 0.5:
        return {**value, key: _part(rng, inner)}
    return {other: element for other, element in value.items() if other != key}


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(TEXT_PIECES) for _ in range(rng.randint(1, 4)))


def _content(rng: random.Random) -> Any:
    shape = rng.randrange(9)
    if shape <= 2:
        return _text(rng)
    if shape == 3:
        return {"text": _text(rng), "n": rng.randint(-5, 20)}
    if shape == 4:
        return [rng.randint(0, 20), _text(rng)]
    return rng.choice((rng.randint(-3, 21), rng.choice((0.5, 1.0, -2.25)), True, False, None))


def random_items(
    rng: random.Random, keys: tuple[str, ...], *, many: bool = False
) -> list[MemoryItem]:
    """Return 0-10 random items whose ids repeat (so that later ones replace earlier ones).

    With ``many``, 20-30 items with fewer repeats: more than a page of ten is then live.
    """
    count = rng.randint(20, 30) if many else rng.randint(0, 10)
    distinct = count if many else max(1, count * 2 // 3)
    ids = [UUID(int=rng.getrandbits(128), version=4) for _ in range(distinct)]
    items = []
    for _ in range(count):
        metadata = {key: _value(rng) for key in keys if rng.random() < 0.5}
        items.append(
            MemoryItem(
                id=rng.choice(ids),
                created_at=rng.uniform(0, 2e9),
                content=_content(rng),
                tags=[rng.choice(TAG_POOL) for _ in range(rng.randint(0, 3))],
                metadata=metadata,
            )
        )
    return items


def _needle(rng: random.Random, items: list[MemoryItem]) -> str | None:
    roll = rng.random()
    if roll < 0.25:
        return None
    if roll < 0.35:
        return ""
    if roll < 0.8 and items:
        # Any write, replaced ones too: a needle only a replaced text holds catches a stale index.
        text = str(rng.choice(items).content) or " "
        start = rng.randrange(len(text))
        piece = text[start : start + rng.randint(1, 6)]
        return rng.choice((piece, piece.upper(), piece.lower(), piece.swapcase(), piece.casefold()))
    return rng.choice(TEXT_PIECES)


def random_query(
    rng: random.Random, items: list[MemoryItem], filter_keys: tuple[str, ...]
) -> MemoryQuery:
    """Return a random query with non-negative limit, filtering only on ``filter_keys``.

    ``items`` are the writes both stores took, in order. The text is often a piece of one of them;
    filters, when there are some, are usually aimed at one item the stores hold: values equal to
    its metadata but written differently (``1.0`` for ``1``, ``{"b": 2, "a": 1}`` for ``{"a": 1, "b": 2}``).
    """
    live = list({item.id: item for item in items}.values())  # the last write of each id
    tags: list[str] | None = None
    roll = rng.random()
    if roll < 0.2:
        tags = []
    elif roll < 0.55:
        tags = [rng.choice(TAG_POOL) for _ in range(rng.randint(1, 2))]
    filters: dict[str, Any] | None = None
    target: MemoryItem | None = None
    roll = rng.random()
    if filter_keys and roll < 0.45:
        chosen = rng.sample(filter_keys, rng.randint(1, min(2, len(filter_keys))))
        aimed = [item for item in live if not set(chosen).isdisjoint(item.metadata)]
        target = rng.choice(aimed) if aimed else None
        metadata = target.metadata if target is not None else {}
        filters = {key: _filter_value(rng, metadata, key) for key in chosen}
    elif roll < 0.55:
        filters = {}
    needle = _needle(rng, items)
    if target is not None and rng.random() < 0.5:
        # Text and tags the aimed item holds, so that the filters alone decide it.
        needle = _needle(rng, [target])
        tags = rng.choice((None, target.tags[:1] or None))
    return MemoryQuery(text=needle, tags=tags, filters=filters, limit=rng.choice(LIMITS))


def _ids(ids: list[UUID]) -> str:
    return "[" + ", ".join(str(item_id)[:8] for item_id in ids) + "]"


async def reference_search_profile(ctx: CaseContext) -> str | None:
    """Compare the adapter with InMemoryStore on ``ctx.examples`` random examples."""
    from lionmem.stores.memory import InMemoryStore

    manifest = ctx.manifest
    if manifest.search_semantics != "reference":
        msg = f"the manifest declares {ctx.claim('search_semantics')}"
        raise CaseNotApplicable(msg)
    if ctx.examples < 1:
        msg = f"no random example was asked for (examples={ctx.examples})"
        raise CaseNotApplicable(msg)
    if manifest.supports_any_filter_key:
        filter_keys: tuple[str, ...] = ANY_KEY_POOL
    else:
        filter_keys = tuple(sorted(manifest.supported_filters))
    metadata_keys = filter_keys + UNFILTERED_KEYS
    rng = random.Random(ctx.seed)
    accepted = refused = queries = 0
    for example in range(ctx.examples):
        await ctx.harness.reset()
        store = await ctx.new_store()
        reference: MemoryStore = InMemoryStore()
        many = example % MANY_EVERY == 0
        items = random_items(rng, metadata_keys, many=many)
        written: list[MemoryItem] = []
        for item in items:
            try:
                await store.store(item.model_copy(deep=True))
            except MemoryAdapterError:
                refused += 1
                continue
            await reference.store(item)
            written.append(item)
        accepted += len(written)
        await ctx.harness.make_search_index_visible()
        for number in range(QUERIES_PER_EXAMPLE):
            query = random_query(rng, written, filter_keys)
            if many and number == 0:  # a page larger than ten over more than ten live items
                query = MemoryQuery(limit=rng.choice(LIMITS[-2:]))
            queries += 1
            expected = [hit.id for hit in await reference.search(query)]
            got = await ctx.search_ids(query)
            if got != expected:
                msg = (
                    f"manifest claims {ctx.claim('search_semantics')}, but with seed {ctx.seed}, "
                    f"example {example} ({len(items)} writes), search({short(query.model_dump())}) "
                    f"returned ids {_ids(got)} where InMemoryStore returns {_ids(expected)}; "
                    f"repeat with run(harness, seed={ctx.seed}, cases=['reference_search_profile'])"
                )
                raise CaseFailed(msg)
    if refused and not accepted:
        msg = "the adapter refused every write of the reference-search profile"
        raise CaseFailed(msg)
    return (
        f"{ctx.examples} examples, {queries} queries, {accepted} writes "
        f"({refused} refused), seed {ctx.seed}"
    )
