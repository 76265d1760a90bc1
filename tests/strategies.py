"""Random items and queries for the differential tests: one recipe, each test's own value pools.

A differential test stores random items in two stores and compares what random queries find.
The queries are drawn from what has been stored (pieces of contents, stored tags, metadata
entries given as equal twins such as ``1.0`` for ``1``), so that searches find something often.
``payload`` and ``id_form`` are how the tests compare items and spell ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from hypothesis import strategies as st

WORDS = ["straße", "STRASSE", "ΟΔΟΣ", "οδος", "Σίσυφος", "İstanbul", "ǅemal", "None", "True"]
"""Whole words whose case mapping is a trap (sharp s, final sigma, dotted I, titlecase ǅ)."""
MISSING = "missing"
"""A filter key no stored metadata has."""


ID_FORMS = st.sampled_from(["uuid", "str", "upper", "hex", "garbage", "empty"])
"""The ways a retrieve may spell an id (``id_form``)."""


def id_form(item_id: UUID, form: str) -> Any:
    """``item_id`` spelled as ``form`` (one of ``ID_FORMS``)."""
    return {
        "uuid": item_id,
        "str": str(item_id),
        "upper": str(item_id).upper(),
        "hex": item_id.hex,
        "garbage": "garbage",
        "empty": "",
    }[form]


def payload(item: Any) -> str:
    """Every field of an item as text (repr tells 1 from 1.0 and True; hex tells -0.0 from 0.0)."""
    if item is None:
        return "None"
    return repr((str(item.id), item.created_at.hex(), item.metadata, item.content, item.tags))


def text_values(
    special: str, *, special_size: int, other_size: int, phrases: bool
) -> st.SearchStrategy[str]:
    """Texts: strings of ``special`` characters, any strings, ``WORDS`` and (with ``phrases``)
    a few of them joined by spaces."""
    texts = (
        st.text(alphabet=special, max_size=special_size)
        | st.text(max_size=other_size)
        | st.sampled_from(WORDS)
    )
    if phrases:
        texts |= st.lists(st.sampled_from(WORDS), min_size=2, max_size=4).map(" ".join)
    return texts


def scalar_values(
    texts: st.SearchStrategy[str], floats: st.SearchStrategy[float], *, big_ints: bool = True
) -> st.SearchStrategy[Any]:
    """JSON scalars: None, booleans, small integers (and any integer with ``big_ints``),
    ``floats`` and ``texts``."""
    integers = st.integers(min_value=-30, max_value=30)
    if big_ints:
        integers |= st.integers()
    return st.none() | st.booleans() | integers | floats | texts


def id_pool(size: int) -> list[UUID]:
    """Return ``size`` fixed ids; drawing from a small pool makes stores replace items."""
    return [UUID(int=n * 0x1F1F1F1F1F1F1F1F1F1F1F1F1F1F1F + 7) for n in range(1, size + 1)]


def json_values(
    scalars: st.SearchStrategy[Any], keys: st.SearchStrategy[str]
) -> st.SearchStrategy[Any]:
    """Return contents: ``scalars`` nested in small lists and dicts keyed by ``keys``."""
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=6,
    )


@dataclass(frozen=True)
class Pools:
    """The values one differential test draws items and queries from."""

    ids: list[UUID]
    tags: list[str]
    keys: list[str]
    """Filter keys, ending with ``MISSING``; metadata uses all the others."""
    values: list[Any]
    """Metadata values."""
    filter_values: list[Any]
    """Values of random filters (not taken from stored metadata)."""
    equal_twins: dict[Any, list[Any]]
    """Values a filter may give instead of a stored one, and still equal it."""
    needles: list[str]
    """Text needles that are Unicode (or syntax) traps."""
    texts: st.SearchStrategy[str]
    piece_size: int
    """The longest piece of stored content a needle is cut from."""

    def __post_init__(self) -> None:
        assert self.keys[-1] == MISSING, self.keys

    def item_specs(
        self, created_at: st.SearchStrategy[float], contents: st.SearchStrategy[Any]
    ) -> st.SearchStrategy[dict[str, Any]]:
        """Return keyword arguments of random ``MemoryItem``s with ids from the pool."""
        metadatas = st.dictionaries(
            st.sampled_from(self.keys[:-1]), st.sampled_from(self.values), max_size=3
        )
        return st.fixed_dictionaries(
            {
                "id": st.sampled_from(self.ids),
                "created_at": created_at,
                "metadata": metadatas,
                "content": contents,
                "tags": st.lists(st.sampled_from(self.tags), max_size=3),
            }
        )

    def retrieve_ids(self) -> st.SearchStrategy[UUID]:
        """Return an id of the pool or one never stored."""
        return st.sampled_from([*self.ids, UUID(int=1)])

    def query_fields(
        self, data: st.DataObject, stored: list[dict[str, Any]], limits: st.SearchStrategy[int]
    ) -> dict[str, Any]:
        """Draw the keyword arguments of a ``MemoryQuery`` over the ``stored`` item specs."""
        return {
            "text": self.draw_text(data, stored),
            "tags": self.draw_tags(data, stored),
            "filters": self.draw_filters(data, stored),
            "limit": data.draw(limits),
        }

    def draw_text(self, data: st.DataObject, stored: list[dict[str, Any]]) -> str | None:
        """A needle: None, "", a trap, a random string, or a (case-changed) piece of stored content."""
        kind = data.draw(st.sampled_from(["none", "empty", "trap", "random", "piece", "piece"]))
        if kind == "none":
            return None
        if kind == "empty":
            return ""
        if kind == "trap":
            return data.draw(st.sampled_from(self.needles))
        if kind == "random" or not stored:
            return data.draw(self.texts)
        source = str(data.draw(st.sampled_from(stored))["content"])
        start = data.draw(st.integers(0, max(0, len(source) - 1)))
        end = data.draw(
            st.integers(min(len(source), start + 1), min(len(source), start + self.piece_size))
        )
        piece = source[start:end]
        return piece.swapcase() if data.draw(st.booleans()) else piece

    def draw_tags(self, data: st.DataObject, stored: list[dict[str, Any]]) -> list[str] | None:
        """Query tags: None, [], random tags, or the tags of a stored item plus maybe another."""
        kind = data.draw(st.sampled_from(["none", "empty", "random", "stored"]))
        if kind == "none":
            return None
        if kind == "empty":
            return []
        extra = data.draw(st.lists(st.sampled_from(self.tags), min_size=1, max_size=2))
        if kind == "random" or not stored:
            return extra
        return [*data.draw(st.sampled_from(stored))["tags"], *extra[:1]]

    def draw_filters(
        self, data: st.DataObject, stored: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """Filters: None, {}, random ones, or a stored item's entries (1 given as 1.0 or True)."""
        kind = data.draw(st.sampled_from(["none", "empty", "random", "stored", "stored"]))
        if kind == "none":
            return None
        if kind == "empty":
            return {}
        random_filters = data.draw(
            st.dictionaries(
                st.sampled_from(self.keys), st.sampled_from(self.filter_values), max_size=2
            )
        )
        if kind == "random" or not stored:
            return random_filters or {MISSING: None}
        filters: dict[str, Any] = {}
        for key, value in data.draw(st.sampled_from(stored))["metadata"].items():
            if data.draw(st.booleans()):
                twins = (
                    self.equal_twins.get(value, [value])
                    if isinstance(value, int | None)
                    else [value]
                )
                filters[key] = data.draw(st.sampled_from(twins))
        if data.draw(st.booleans()):
            filters[MISSING] = None
        return filters or random_filters
