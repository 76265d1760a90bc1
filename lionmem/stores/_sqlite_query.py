"""Turn a MemoryQuery into one SQL statement whose rows come out in insertion order.

The statement is assembled only from the fixed fragments below; every value from the query (the
needle, tags, filter keys and values) is a bound parameter. The rows it returns are:

* exact for ``text`` (``instr()`` on the Python-lowered ``text`` column) and ``tags`` (binary
  equality on ``item_tags``), so those need no further check;
* a superset for ``filters``: each filter whose value is plain JSON is pre-filtered by canonical
  equality on ``item_fields``; the caller confirms every filter with Python's ``==`` on the decoded
  metadata, which also decides the values SQL cannot (a ``Decimal``, a tuple, a custom ``__eq__``).

One part of the query drives the scan, in this order of preference: a needle of three or more
characters (the trigram index), a single tag, a non-null plain-JSON filter, else the items table.
Each is read in ``seq`` order, so the caller can stop after ``limit`` confirmed rows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lionmem.errors import UnsupportedMemoryQuery
from lionmem.stores._sqlite_codec import canonical
from lionmem_models.memory_query import MemoryQuery

__all__ = ["MAX_TAGS", "SearchPlan", "plan_search"]

_COLUMNS = "i.id, i.created_at, i.metadata, i.content, i.tags"

MAX_TAGS = 10_000
"""Most distinct tags one query may hold (one SQL parameter each); more raise UnsupportedMemoryQuery."""


class SearchPlan(NamedTuple):
    """The SQL to run and the filters to confirm in Python on each decoded row."""

    sql: str
    params: tuple[Any, ...]
    confirm: tuple[tuple[str, Any], ...]


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fts_phrase(needle: str) -> str:
    # An FTS5 string: double quotes are doubled; nothing else is special inside one.
    return '"' + needle.replace('"', '""') + '"'


class _Builder:
    """Collects the pieces of one statement; the first ``drive`` call picks the scanned table."""

    def __init__(self) -> None:
        self.source = "items AS i"
        self.order = "i.seq"
        self.where: list[str] = []
        self.params: list[Any] = []
        self.driven = False

    def drive(self, source: str, order: str) -> None:
        self.source, self.order, self.driven = source, order, True

    def require(self, condition: str, *params: Any) -> None:
        self.where.append(condition)
        self.params.extend(params)

    def sql(self) -> str:
        sql = f"SELECT {_COLUMNS} FROM {self.source}"
        if self.where:
            sql += " WHERE " + " AND ".join(self.where)
        return sql + f" ORDER BY {self.order}"


def _add_text(plan: _Builder, text: str) -> bool:
    needle = text.lower()
    if not _encodable(needle):
        return False  # stored text never holds a lone surrogate
    if len(needle) >= 3 and "\x00" not in needle:
        plan.drive(
            "items_text CROSS JOIN items AS i ON i.seq = items_text.rowid", "items_text.rowid"
        )
        plan.require("items_text MATCH ?", _fts_phrase(needle))
    plan.require("instr(i.text, ?) > 0", needle)
    return True


def _add_tags(plan: _Builder, tags: list[str]) -> bool:
    # A tag that UTF-8 cannot encode equals no stored tag; leave it out of the SQL.
    wanted = sorted({tag for tag in tags if _encodable(tag)})
    if not wanted:
        return False
    if len(wanted) > MAX_TAGS:
        raise UnsupportedMemoryQuery(["tags"])
    if len(wanted) > 1:
        # Evaluated once into a sorted list of seqs: unless something else drives, SQLite reads
        # the items by those seqs in order (cost grows with the tags' items, not with the table).
        # One placeholder per tag: SQLite's JSON functions cut a string at NUL.
        marks = ", ".join("?" * len(wanted))
        plan.require(f"i.seq IN (SELECT seq FROM item_tags WHERE tag IN ({marks}))", *wanted)
    elif plan.driven:
        plan.require("EXISTS (SELECT 1 FROM item_tags WHERE tag = ? AND seq = i.seq)", wanted[0])
    else:
        plan.drive("item_tags AS t CROSS JOIN items AS i ON i.seq = t.seq", "t.seq")
        plan.require("t.tag = ?", wanted[0])
    return True


def _add_filter(plan: _Builder, key: str, value: Any) -> None:
    text = canonical(value)
    if text is None or not _encodable(key):
        return  # decided in Python only
    if value is None:
        plan.require(
            "NOT EXISTS (SELECT 1 FROM item_fields WHERE seq = i.seq AND key = ? AND value <> 'null')",
            key,
        )
    elif plan.driven:
        plan.require(
            "EXISTS (SELECT 1 FROM item_fields WHERE key = ? AND value = ? AND seq = i.seq)",
            key,
            text,
        )
    else:
        plan.drive("item_fields AS f CROSS JOIN items AS i ON i.seq = f.seq", "f.seq")
        plan.require("f.key = ? AND f.value = ?", key, text)


def plan_search(query: MemoryQuery) -> SearchPlan | None:
    """Return the plan for ``query``, or ``None`` when no stored item can match it."""
    plan = _Builder()
    if query.text and not _add_text(plan, query.text):
        return None
    if query.tags and not _add_tags(plan, query.tags):
        return None
    confirm: tuple[tuple[str, Any], ...] = ()
    if query.filters:
        confirm = tuple(query.filters.items())
        for key, value in confirm:
            _add_filter(plan, key, value)
    return SearchPlan(plan.sql(), tuple(plan.params), confirm)
