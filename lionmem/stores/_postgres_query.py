"""Turn a MemoryQuery into one keyset-paged SQL statement and the checks Python confirms.

The statement reads the store's namespace in ``seq`` (insertion) order after a given ``seq``, up
to a row count; PostgreSQL's planner (with custom plans for every call) chooses between walking
that order and the GIN indexes. Every value from the query is a bound parameter. The SQL
predicates select a superset of the matches: ``LIKE`` on the Python-lowered ``search`` column
(exact, except for a needle holding NUL or its stand-in), ``&&`` on ``tag_keys``, ``@>`` and
``NOT &&`` on ``field_keys`` for filters whose value has a canonical text. ``Plan.keep`` then
applies the reference's rules to each decoded item: the needle where SQL was not exact, any-of
tags, and ``metadata.get(key) == value`` for every filter, so digests and values only Python can
compare (a ``Decimal``, a custom ``__eq__``) stay exact.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lionmem.stores._postgres_codec import (
    NUL_STANDIN,
    field_entry,
    needle_pattern,
    present_entry,
    tag_entry,
)
from lionmem.stores._sqlite_codec import (
    MAX_TAGS,
    encodable,
    lowered_text,
    sql_filters,
    wanted_tags,
)
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["MAX_TAGS", "SELECT", "Plan", "plan_search"]

SELECT = "SELECT seq, id::text, created_at, metadata, content, tags FROM lionmem_items"


class Plan(NamedTuple):
    """The statement (``$1`` namespace, ``$2`` the last ``seq`` read, ``$3`` the row count)."""

    sql: str
    params: tuple[Any, ...]
    needle: str | None
    """A needle SQL cannot decide exactly (it holds NUL or ``NUL_STANDIN``), else ``None``."""
    tags: frozenset[str] | None
    filters: tuple[tuple[str, Any], ...]

    def keep(self, item: MemoryItem) -> bool:
        """Whether ``item`` (a row SQL selected) matches, by the reference's rules."""
        if self.needle is not None and self.needle not in lowered_text(item.content):
            return False
        if self.tags is not None and self.tags.isdisjoint(item.tags):
            return False
        metadata = item.metadata
        return all(metadata.get(key) == value for key, value in self.filters)


def _field_entries(filters: tuple[tuple[str, Any], ...]) -> tuple[list[str], list[str]]:
    """The ``field_keys`` entries every match holds, and those none holds (``None`` filters).

    A filter whose key UTF-8 cannot encode gives none, and neither do the filters from the
    first value without a canonical text on: Python alone decides them.
    """
    present: list[str] = []
    absent: list[str] = []
    for key, value, text in sql_filters(filters):
        if value is None:
            absent.append(present_entry(key))
        else:
            present.append(field_entry(key, text))
    return present, absent


def plan_search(query: MemoryQuery) -> Plan | None:
    """Build the plan without I/O; ``None`` when no stored item can match ``query``.

    Raises ``UnsupportedMemoryQuery`` (naming ``tags``) for more than ``MAX_TAGS`` distinct tags.
    """
    where = ["namespace = $1", "seq > $2"]
    params: list[Any] = []

    def bind(value: Any) -> str:
        params.append(value)
        return f"${len(params) + 3}"

    needle: str | None = None
    if query.text:
        lowered = query.text.lower()
        if not encodable(lowered):
            return None  # stored text never holds a lone surrogate
        where.append(f"search LIKE {bind(needle_pattern(lowered))}")
        if "\x00" in lowered or NUL_STANDIN in lowered:
            needle = lowered
    tags: frozenset[str] | None = None
    if query.tags:
        tags = frozenset(query.tags)
        wanted = wanted_tags(query.tags)
        if wanted is None:
            return None
        where.append(f"tag_keys && {bind([tag_entry(tag) for tag in wanted])}::text[]")
    filters: tuple[tuple[str, Any], ...] = ()
    if query.filters:
        filters = tuple(query.filters.items())
        present, absent = _field_entries(filters)
        if present:
            where.append(f"field_keys @> {bind(present)}::text[]")
        if absent:
            where.append(f"NOT (field_keys && {bind(absent)}::text[])")
    sql = f"{SELECT} WHERE {' AND '.join(where)} ORDER BY seq LIMIT $3"
    return Plan(sql, tuple(params), needle, tags, filters)
