"""Differential checks: where SEMANTICS.md §9 says match, lionmem stores what lionagi 0.36.0 stores."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from types import MappingProxyType, SimpleNamespace
from typing import Any
from uuid import UUID

import lionagi  # the oracle (dependency group 'oracle'); a missing oracle must fail the run, not skip
import pytest
from pydantic import BaseModel, ValidationError

import lionmem

CANONICAL = "12345678-1234-5678-1234-567812345678"


def outcome(cls: Callable[..., Any], field: str, value: object) -> tuple[Any, ...]:
    """Return ('ok', stored value) or ('error', [(loc, type, msg), ...]) of ``cls(field=value)``."""
    try:
        built = cls(**{field: value})
    except ValidationError as exc:
        return "error", [(e["loc"], e["type"], e["msg"]) for e in exc.errors()]
    stored = getattr(built, field)
    return "ok", type(stored), stored


def assert_same(field: str, value: object, *, query: bool = False) -> None:
    """Assert lionmem and lionagi store the same value (or raise the same errors) for one input."""
    ours = lionmem.MemoryQuery if query else lionmem.MemoryItem
    theirs = lionagi.MemoryQuery if query else lionagi.MemoryItem
    assert outcome(ours, field, value) == outcome(theirs, field, value)


@dataclasses.dataclass
class Record:
    """A dataclass given as metadata."""

    a: int = 1


class Point(BaseModel):
    """A pydantic model given as metadata."""

    x: int = 1


class Exportable:
    """An object exporting itself through to_dict()."""

    def to_dict(self) -> dict[str, int]:
        return {"a": 1}

    def __repr__(self) -> str:
        return "Exportable()"


@pytest.mark.parametrize(
    "value",
    [
        1.5,
        2,
        True,
        Decimal("1.25"),
        datetime(2020, 1, 1, tzinfo=UTC),
        datetime(2020, 1, 1, tzinfo=timezone(timedelta(hours=2))),
        "2020-01-01T00:00:00",
        "2020-01-01 00:00:00",
        "2020-01-01T00:00:00Z",
        "2020-01-01",
        "20200101",
        "20200101T000000Z",
        "2020-01-01T00:00:00+02:00",
        "1577836800",
        "1.5",
        " 5 ",
        "1e3",
        "-1",
        "1_000",
        "2020",
        "garbage",
        "0x10",
        "",
        [1],
        date(2020, 1, 1),
        10**400,
        b"5",
        datetime.min,  # naive and out of range once read as local time: "year 0 is out of range"
    ],
    ids=repr,
)
def test_created_at_matches_the_reference(value: object) -> None:
    """Every matched created_at input is stored (or rejected) exactly as lionagi does."""
    assert_same("created_at", value)


@pytest.mark.parametrize("tz", ["UTC0", "EST5EDT,M3.2.0,M11.1.0", "JST-9"])
def test_naive_datetime_matches_the_reference(local_tz: Callable[[str], None], tz: str) -> None:
    """A naive datetime is read in local time exactly as lionagi reads it."""
    local_tz(tz)
    assert_same("created_at", datetime(2020, 1, 1))


@pytest.mark.parametrize(
    "value",
    [
        UUID(CANONICAL),
        CANONICAL,
        CANONICAL.upper(),
        CANONICAL.replace("-", ""),
        "{" + CANONICAL + "}",
        "urn:uuid:" + CANONICAL,
        UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),  # a version-1 UUID
        "not-a-uuid",
        "",
        123,
        None,
        b"x",
        1.5,
    ],
    ids=repr,
)
def test_id_matches_the_reference(value: object) -> None:
    """Every id input is stored (or rejected with the same error) exactly as lionagi does."""
    assert_same("id", value)


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "b": {"c": [1]}},
        OrderedDict(a=1),
        defaultdict(int, a=1),
        None,
        {},
        "",
        [],
        (),
        0,
        False,
        '{"a": 1}',
        ' {"a": 1} ',
        '{"a": 1, "a": 2}',
        '{"a": "1", "b": "[2]"}',
        MappingProxyType({"a": 1}),
        Point(),
        Record(),
        SimpleNamespace(a=1),
        Exportable(),
        {"lion_class": "lionagi.protocols.memory.MemoryItem"},
        {"lion_class": "MemoryItem"},
        {"lion_class": "lionagi.protocols.generic.element.Element"},
    ],
    ids=repr,
)
def test_metadata_matches_the_reference(value: object) -> None:
    """Every matched metadata input is stored exactly as lionagi stores it."""
    assert_same("metadata", value)


def test_json_array_string_is_rejected_where_the_reference_rejects_it() -> None:
    """A JSON-array string fails on ('metadata',) with value_error in both; lionmem's message is more precise."""
    ours = outcome(lionmem.MemoryItem, "metadata", "[1, 2]")
    theirs = outcome(lionagi.MemoryItem, "metadata", "[1, 2]")
    assert ours[0] == theirs[0] == "error"
    assert (
        [e[:2] for e in ours[1]] == [e[:2] for e in theirs[1]] == [(("metadata",), "value_error")]
    )


@pytest.mark.parametrize(
    "value",
    [
        ["a", "a", ""],
        ("a",),
        {"a"},
        frozenset(["a"]),
        [b"a"],
        [1, 2],
        "abc",
        None,
        5,
        {"a": 1},
        ["a", None],
    ],
    ids=repr,
)
def test_tags_match_the_reference(value: object) -> None:
    """Every tags input is stored (or rejected with the same errors) exactly as lionagi does."""
    assert_same("tags", value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("limit", v)
        for v in [0, -1, -(10**6), 10**30, "5", " 5 ", "5.0", 5.0, True, 5.5, None, "five", [5]]
    ]
    + [("text", v) for v in ["", "a", b"ab", 5, None]]
    + [("tags", v) for v in [[], ["t"], [1], "abc", ("a",)]]
    + [("filters", v) for v in [{}, {"k": None}, {1: "a"}, '{"a": 1}', [("a", 1)]]],
    ids=repr,
)
def test_query_fields_match_the_reference(field: str, value: object) -> None:
    """Every MemoryQuery field input is stored (or rejected) exactly as lionagi does."""
    assert_same(field, value, query=True)


def test_query_dump_matches_the_reference() -> None:
    """MemoryQuery.model_dump_json() gives the same string as lionagi's."""
    fields: dict[str, Any] = {"text": "a", "tags": ["t"], "filters": {"k": None}, "limit": -1}
    ours = lionmem.MemoryQuery(**fields).model_dump_json()
    assert ours == lionagi.MemoryQuery(**fields).model_dump_json()


def test_item_dump_matches_the_reference() -> None:
    """model_dump_json() of the §2.9 sample gives the same string as lionagi's."""
    fields: dict[str, Any] = {
        "id": CANONICAL,
        "created_at": 1.5,
        "metadata": {"k": "v"},
        "content": {"a": [1, 2], "u": UUID(int=1)},
        "tags": ["x"],
    }
    ours = lionmem.MemoryItem(**fields)
    theirs = lionagi.MemoryItem(**fields)
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours.model_dump() == theirs.model_dump()


def test_l11_lionagi_export_loads_and_keeps_its_lion_class() -> None:
    """L11: lionagi's to_dict() of an item loads into lionmem with the same fields and lion_class kept."""
    exported = lionagi.MemoryItem(id=CANONICAL, created_at=1.5, content="c", tags=["t"]).to_dict()
    item = lionmem.MemoryItem.model_validate(exported)
    assert item.model_dump() == exported
    assert item.metadata == {"lion_class": "lionagi.protocols.memory.MemoryItem"}


def test_l11_lionagi_json_export_loads() -> None:
    """L11: lionagi's to_json() of an item loads into lionmem through model_validate_json."""
    source = lionagi.MemoryItem(id=CANONICAL, created_at=1.5, content={"a": 1})
    item = lionmem.MemoryItem.model_validate_json(source.to_json())
    assert (item.id, item.content) == (UUID(CANONICAL), {"a": 1})


def test_lionmem_dump_loads_into_lionagi() -> None:
    """A lionmem dump (no lion_class) loads into lionagi's MemoryItem with the same dump."""
    item = lionmem.MemoryItem(
        id=CANONICAL, created_at=1.5, metadata={"k": 1}, content=[1], tags=["t"]
    )
    assert (
        lionagi.MemoryItem.model_validate_json(item.model_dump_json()).model_dump()
        == item.model_dump()
    )
