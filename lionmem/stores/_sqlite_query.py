"""Turn a MemoryQuery into one SQL statement whose rows come out in insertion order.

The statement is assembled only from the fixed fragments below; every value from the query (the
needle, tags, filter keys and values) is a bound parameter. The rows it returns are:

* exact for ``text`` (``instr()`` on the Python-lowered ``text`` column) and ``tags`` (binary
  equality on ``item_tags``), so those need no further check;
* a superset for ``filters``: each filter whose value is plain JSON is pre-filtered by canonical
  equality on ``item_fields``, up to the first whose value is not (a ``Decimal``, a tuple, a
  custom ``__eq__``, which may raise: the rows it would see must all reach Python); the caller
  confirms every filter, in order, with Python's ``==`` on the decoded metadata.

One predicate drives the scan; the others are checked on each row it yields. Every driver yields
rows in ``seq`` (insertion) order, so the caller stops after ``limit`` confirmed rows. The choice:
the tag and filter drivers count their rows, up to ``CAP``; the smallest drives if it holds fewer
than ``CAP`` rows (a bounded amount of work), otherwise a needle of three or more characters drives
through the trigram index (whose size cannot be counted cheaply), otherwise the smallest anyway.
A driver that counts zero rows proves the indexed items hold no match. Without tags, filters and
a long needle the items table is scanned in order.

The indexes cover the items up to ``indexed_seq``; the statement is bounded to them, and ``tail``
reads the items above, which come after them in insertion order. Its SQL checks only pre-select
(the needle exactly, tags and filters by their JSON text); the caller confirms tags and filters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from lionmem.stores._sqlite_codec import (
    MAX_TAGS,
    encodable,
    json_text,
    sql_filters,
    wanted_tags,
)
from lionmem_models.memory_query import MemoryQuery

__all__ = [
    "CAP",
    "DISTINCT",
    "MAX_SQL_FILTERS",
    "MAX_TAGS",
    "RUNS",
    "SCANNED",
    "Counter",
    "SearchDraft",
    "SearchPlan",
    "plan_search",
]

_COLUMNS = "i.id, i.created_at, i.metadata, i.content, i.tags"
_TRIGRAM = 3  # the length of one trigram, the shortest needle the FTS5 index can answer

CAP = 4_000
"""Rows a tag or filter driver may count before the trigram index is preferred to it."""

TRIGRAMS = 8
"""Most trigrams of a needle the index is asked for."""

DISTINCT = 64
"""Distinct trigrams of a needle gathered before ``TRIGRAMS`` are chosen among them."""

RUNS = 512
"""Most runs of one character of a needle read for its distinct trigrams."""

SCANNED = 2_048
"""Most positions of the rest of a needle (after ``RUNS`` runs) whose trigrams are considered."""

MAX_SQL_FILTERS = 16
"""Filters pre-selected in SQL, each way (equal to a value; ``None``); the rest are confirmed in
Python only. Bounds the statement (SQLite refuses an expression more than 1,000 deep)."""

Counter = Callable[[str, tuple[Any, ...]], int]
"""Runs a ``SELECT count(*)`` statement with its parameters and returns the count."""


class SearchPlan(NamedTuple):
    """The SQL to run and the filters to confirm in Python on each decoded row."""

    sql: str
    params: tuple[Any, ...]
    confirm: tuple[tuple[str, Any], ...]


class _Driver(NamedTuple):
    """One predicate, as the driving table of the scan or as a check on each row."""

    source: str
    order: str
    drive: str
    check: str
    count_sql: str
    """Counts the predicate's rows up to ``CAP``, bound to ``params`` followed by ``CAP``."""
    params: tuple[Any, ...]
    """What ``drive``, ``check`` (and ``drive_many``) are bound to."""
    drive_many: str | None = None
    """The driving condition to use instead of ``drive`` when the count reached ``CAP``."""

    def count_rows(self, counter: Counter) -> int:
        """Return the predicate's row count, stopping at ``CAP``."""
        return counter(self.count_sql, (*self.params, CAP))


@functools.lru_cache(maxsize=1_024)
def _run_of(char: str) -> re.Pattern[str]:
    """Matches a run of ``char`` (at C speed, where ``(.)\\1*`` is slow)."""
    return re.compile(re.escape(char) + "*")


def _fts_query(needle: str) -> str:
    """Up to ``TRIGRAMS`` distinct trigrams of ``needle``, spread over it, all required.

    Every text holding the needle holds each of them, and ``instr()`` then checks exactly. A
    phrase of every trigram would select little better, at a cost of the needle's length times
    each trigram's occurrences (seconds for a long needle over repetitive content). The distinct
    trigrams are read at every position of a needle shorter than ``SCANNED`` positions. A longer one
    is read run by run of one character (found by the regex engine), where the only trigrams are
    the run's first and the two crossing its end, until ``DISTINCT`` are found or ``RUNS`` runs
    are read; the rest of the needle is read at ``SCANNED`` positions spread over it.
    """
    last = len(needle) - _TRIGRAM
    if last < SCANNED:  # every position, as cheap as the needle is short
        found = dict.fromkeys(needle[start : start + _TRIGRAM] for start in range(last + 1))
        return _required(list(found))
    found = {}
    read = runs = 0
    while read <= last and runs < RUNS and len(found) < DISTINCT:
        start = read
        read = _run_of(needle[start]).match(needle, start).end()  # type: ignore[union-attr]  # c* always matches
        for position in (start, read - 2, read - 1):
            if start <= position <= last:
                found.setdefault(needle[position : position + _TRIGRAM])
        runs += 1
    if read <= last and len(found) < DISTINCT:
        positions: Sequence[int] = range(read, last + 1)
        if len(positions) > SCANNED:
            spread = range(read, last + 1, -(-(last - read) // (SCANNED - 1)))
            positions = spread if spread[-1] == last else [*spread, last]
        for position in positions:
            found.setdefault(needle[position : position + _TRIGRAM])
    return _required(list(found))


def _required(trigrams: list[str]) -> str:
    """The FTS5 query requiring ``TRIGRAMS`` of ``trigrams`` spread over them (all, if fewer)."""
    if len(trigrams) > TRIGRAMS:
        step = (len(trigrams) - 1) / (TRIGRAMS - 1)
        trigrams = [trigrams[round(n * step)] for n in range(TRIGRAMS)]
    # FTS5 strings: double quotes are doubled; nothing else is special inside one.
    return " AND ".join('"' + trigram.replace('"', '""') + '"' for trigram in trigrams)


def _tags_driver(wanted: list[str]) -> _Driver:
    if len(wanted) == 1:
        return _Driver(
            source="item_tags AS t CROSS JOIN items AS i ON i.seq = t.seq",
            order="t.seq",
            drive="t.tag = ?",
            check="EXISTS (SELECT 1 FROM item_tags WHERE tag = ? AND seq = i.seq)",
            count_sql="SELECT count(*) FROM (SELECT 1 FROM item_tags WHERE tag = ? LIMIT ?)",
            params=(wanted[0],),
        )
    # One placeholder per tag: SQLite's JSON functions cut a string at NUL. Driving, the list of
    # seqs is computed once and sorted, and SQLite reads the items by those seqs in order: cheap
    # while the tags hold few items. Past CAP, the items are scanned in order instead, checking
    # each (the tags are common then, so the scan soon finds ``limit`` of them).
    marks = ", ".join("?" * len(wanted))
    exists = f"EXISTS (SELECT 1 FROM item_tags WHERE tag IN ({marks}) AND seq = i.seq)"
    return _Driver(
        source="items AS i",
        order="i.seq",
        drive=f"i.seq IN (SELECT seq FROM item_tags WHERE tag IN ({marks}))",
        check=exists,
        count_sql=f"SELECT count(*) FROM (SELECT 1 FROM item_tags WHERE tag IN ({marks}) LIMIT ?)",
        params=tuple(wanted),
        drive_many=exists,
    )


def _filter_driver(key: str, text: str) -> _Driver:
    return _Driver(
        source="item_fields AS f CROSS JOIN items AS i ON i.seq = f.seq",
        order="f.seq",
        drive="f.key = ? AND f.value = ?",
        check="EXISTS (SELECT 1 FROM item_fields WHERE key = ? AND value = ? AND seq = i.seq)",
        count_sql="SELECT count(*) FROM (SELECT 1 FROM item_fields WHERE key = ? AND value = ? LIMIT ?)",
        params=(key, text),
    )


class SearchDraft:
    """A checked query, split into predicates; ``finish`` picks the driver and writes the SQL."""

    def __init__(self) -> None:
        self.needle: str | None = None
        self.trigram = False
        self.candidates: list[_Driver] = []
        self.null_keys: list[str] = []
        self.confirm: tuple[tuple[str, Any], ...] = ()
        self.wanted: frozenset[str] | None = None
        """The tags of the query, one of which a tail item must carry."""
        self.markers: list[str] = []
        """Texts the metadata JSON of every matching item holds (``"key":`` or ``"key":"value"``)."""

    def _choose(self, count: Counter) -> tuple[_Driver | None, int]:
        """Return the driver (``None``: the trigram index or a plain scan) and its row count.

        The count is ``CAP`` when it was not taken, and ``0`` when it proves nothing matches.
        """
        if not self.candidates:
            return None, CAP
        if len(self.candidates) == 1 and not self.trigram:
            only = self.candidates[0]
            return only, CAP if only.drive_many is None else only.count_rows(count)
        best: _Driver | None = None
        best_rows = CAP + 1
        for candidate in self.candidates:
            rows = candidate.count_rows(count)
            if rows == 0:
                return candidate, 0
            if rows < best_rows:
                best, best_rows = candidate, rows
        if self.trigram and best_rows >= CAP:
            return None, CAP
        return best or self.candidates[0], best_rows

    def finish(self, count: Counter, upto: int) -> SearchPlan | None:
        """Return the statement over the items up to ``upto`` (the indexed ones), or ``None``
        when a count already proved that none of them matches."""
        driver, rows = self._choose(count)
        if rows == 0:
            return None
        where: list[str] = []
        params: list[Any] = []
        if driver is not None:
            source, order = driver.source, driver.order
            many = driver.drive_many is not None and rows >= CAP
            where.append(driver.drive_many if many and driver.drive_many else driver.drive)
            params.extend(driver.params)
        elif self.trigram:
            source = "items_text CROSS JOIN items AS i ON i.seq = items_text.rowid"
            order = "items_text.rowid"
            where.append("items_text MATCH ?")
            params.append(_fts_query(self.needle or ""))
        else:
            source, order = "items AS i", "i.seq"
        where.append(f"{order} <= ?")
        params.append(upto)
        if self.needle is not None:
            where.append("instr(i.text, ?) > 0")
            params.append(self.needle)
        for candidate in self.candidates:
            if candidate is not driver:
                where.append(candidate.check)
                params.extend(candidate.params)
        if self.null_keys:
            marks = ", ".join("?" * len(self.null_keys))
            where.append(
                "NOT EXISTS (SELECT 1 FROM item_fields "
                f"WHERE seq = i.seq AND key IN ({marks}) AND value <> 'null')"
            )
            params.extend(self.null_keys)
        sql = f"SELECT {_COLUMNS} FROM {source} WHERE {' AND '.join(where)} ORDER BY {order}"
        return SearchPlan(sql, tuple(params), self.confirm)

    def tail(self, upto: int) -> SearchPlan:
        """Return the statement over the items above ``upto``, which no index covers yet."""
        where = ["i.seq > ?"]
        params: list[Any] = [upto]
        if self.needle is not None:
            where.append("instr(i.text, ?) > 0")
            params.append(self.needle)
        if self.wanted is not None and len(self.wanted) <= MAX_SQL_FILTERS:
            # A carried tag's JSON text is part of the tags' JSON text.
            where.append("(" + " OR ".join(["instr(i.tags, ?) > 0"] * len(self.wanted)) + ")")
            params.extend(json_text(tag) for tag in sorted(self.wanted))
        for marker in self.markers:
            where.append("instr(i.metadata, ?) > 0")
            params.append(marker)
        sql = f"SELECT {_COLUMNS} FROM items AS i WHERE {' AND '.join(where)} ORDER BY i.seq"
        return SearchPlan(sql, tuple(params), self.confirm)


def plan_search(query: MemoryQuery) -> SearchDraft | None:
    """Split ``query`` into predicates without I/O; ``None`` when no stored item can match it.

    Raises ``UnsupportedMemoryQuery`` (naming ``tags``) for more than ``MAX_TAGS`` distinct tags.
    """
    draft = SearchDraft()
    if query.text:
        needle = query.text.lower()
        if not encodable(needle):
            return None  # stored text never holds a lone surrogate
        draft.needle = needle
        # FTS5 reads a query string only up to a NUL, and trigrams need three characters.
        draft.trigram = len(needle) >= _TRIGRAM and "\x00" not in needle
    if query.tags:
        wanted = wanted_tags(query.tags)
        if wanted is None:
            return None
        draft.wanted = frozenset(wanted)
        draft.candidates.append(_tags_driver(wanted))
    if query.filters:
        draft.confirm = tuple(query.filters.items())
        for key, value, text in sql_filters(draft.confirm):
            if value is None:
                if len(draft.null_keys) < MAX_SQL_FILTERS:
                    draft.null_keys.append(key)
            elif len(draft.candidates) < MAX_SQL_FILTERS:
                draft.candidates.append(_filter_driver(key, text))
                # A matching item holds the key (the value is not None), and for a string
                # value exactly that value, whose JSON text is its canonical text.
                exact = type(value) is str and not text.startswith("#")
                draft.markers.append(json_text(key) + ":" + (text if exact else ""))
    return draft
