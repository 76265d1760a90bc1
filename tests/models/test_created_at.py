"""The ``created_at`` coercion table of SEMANTICS.md §2.3, and L2 (non-finite values rejected)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from pydantic import ValidationError

from lionmem import Element, MemoryItem
from tests.validation_support import only_error

NEW_YEAR_2020 = 1577836800.0

# POSIX TZ strings need no tz database, so these run on a bare machine. On 2020-01-01 New York is
# UTC-5 and Tokyo UTC+9.
UTC_TZ = "UTC0"
NEW_YORK_TZ = "EST5EDT,M3.2.0,M11.1.0"
TOKYO_TZ = "JST-9"


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        (1.5, 1.5),
        (2, 2.0),
        (True, 1.0),
        (Decimal("1.25"), 1.25),
        (datetime(2020, 1, 1, tzinfo=UTC), NEW_YEAR_2020),
        (datetime(2020, 1, 1, tzinfo=timezone(timedelta(hours=2))), 1577829600.0),
        ("2020-01-01T00:00:00", NEW_YEAR_2020),
        ("2020-01-01 00:00:00", NEW_YEAR_2020),
        ("2020-01-01T00:00:00Z", NEW_YEAR_2020),
        ("2020-01-01", NEW_YEAR_2020),
        ("20200101", NEW_YEAR_2020),
        ("20200101T000000Z", NEW_YEAR_2020),
        ("2020-01-01T00:00:00+02:00", 1577829600.0),
        ("1577836800", NEW_YEAR_2020),
        ("1.5", 1.5),
        (" 5 ", 5.0),
        ("1e3", 1000.0),
        ("-1", -1.0),
        ("1_000", 1000.0),
        ("2020", 2020.0),
    ],
    ids=repr,
)
def test_created_at_coercion_table(value: object, stored: float) -> None:
    """Each row of the §2.3 table is stored as the float it lists."""
    created_at = MemoryItem(created_at=value).created_at
    assert created_at == stored
    assert type(created_at) is float


def test_created_at_year_string_is_epoch_seconds() -> None:
    """'2020' is not ISO on 3.11, so it is read as 2020.0 seconds, not the year 2020."""
    assert MemoryItem(created_at="2020").created_at == 2020.0


def test_created_at_none_is_the_current_time() -> None:
    """created_at=None stores the current POSIX time."""
    before = time.time()
    created_at = MemoryItem(created_at=None).created_at
    after = time.time()
    assert before <= created_at <= after


def test_created_at_float_is_kept_unchanged() -> None:
    """A finite float is stored as the same value."""
    assert MemoryItem(created_at=1577836800.123456).created_at == 1577836800.123456


@pytest.mark.parametrize(
    ("tz", "stored"),
    [(UTC_TZ, 1577836800.0), (NEW_YORK_TZ, 1577854800.0), (TOKYO_TZ, 1577804400.0)],
    ids=["utc", "new-york", "tokyo"],
)
def test_naive_datetime_is_read_as_local_time(
    local_tz: Callable[[str], None], tz: str, stored: float
) -> None:
    """A naive datetime is read in the process's local time zone, as datetime.timestamp() does."""
    local_tz(tz)
    assert MemoryItem(created_at=datetime(2020, 1, 1)).created_at == stored


@pytest.mark.parametrize("tz", [UTC_TZ, NEW_YORK_TZ, TOKYO_TZ], ids=["utc", "new-york", "tokyo"])
def test_naive_iso_string_is_read_as_utc(local_tz: Callable[[str], None], tz: str) -> None:
    """A naive ISO string is read as UTC whatever the local time zone."""
    local_tz(tz)
    assert MemoryItem(created_at="2020-01-01T00:00:00").created_at == NEW_YEAR_2020


@pytest.mark.parametrize("tz", [UTC_TZ, NEW_YORK_TZ, TOKYO_TZ], ids=["utc", "new-york", "tokyo"])
def test_aware_datetime_ignores_the_local_time_zone(
    local_tz: Callable[[str], None], tz: str
) -> None:
    """An aware datetime gives the same timestamp in every local time zone."""
    local_tz(tz)
    assert MemoryItem(created_at=datetime(2020, 1, 1, tzinfo=UTC)).created_at == NEW_YEAR_2020


@pytest.mark.parametrize("value", ["garbage", "0x10", ""], ids=repr)
def test_unparseable_string_error(value: str) -> None:
    """A string neither ISO nor float raises 'Invalid datetime string: <value>' on ('created_at',)."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(created_at=value)
    assert only_error(exc) == (
        ("created_at",),
        "value_error",
        f"Value error, Invalid datetime string: {value}",
    )


@pytest.mark.parametrize(
    "value",
    [[1], date(2020, 1, 1), object(), 10**400],
    ids=["list", "date", "object", "huge-int"],
)
def test_unconvertible_value_error(value: object) -> None:
    """A non-string value float() refuses raises 'Invalid created_at: <value>' on ('created_at',)."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(created_at=value)
    assert only_error(exc) == (
        ("created_at",),
        "value_error",
        f"Value error, Invalid created_at: {value}",
    )


def test_element_applies_the_same_coercion() -> None:
    """Element coerces created_at as MemoryItem does."""
    assert Element(created_at="2020-01-01").created_at == NEW_YEAR_2020


def test_model_validate_applies_the_coercion() -> None:
    """model_validate coerces an ISO created_at as the constructor does."""
    assert MemoryItem.model_validate({"created_at": "2020-01-01"}).created_at == NEW_YEAR_2020


def test_created_at_is_frozen_even_for_the_same_value() -> None:
    """Assigning created_at, even its own value, raises frozen_field on ('created_at',)."""
    item = MemoryItem(created_at=1.5)
    with pytest.raises(ValidationError) as exc:
        item.created_at = 1.5
    assert only_error(exc) == (("created_at",), "frozen_field", "Field is frozen")


def test_created_at_is_frozen_for_a_new_value() -> None:
    """Assigning a different created_at raises and keeps the old value."""
    item = MemoryItem(created_at=1.5)
    with pytest.raises(ValidationError):
        item.created_at = 2.5
    assert item.created_at == 1.5


# --- L2: non-finite values cannot round-trip through JSON, so they are bad input ------------------


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        "nan",
        "inf",
        "-inf",
        "1e400",
        Decimal("NaN"),
        Decimal("1e400"),
    ],
    ids=repr,
)
def test_l2_non_finite_created_at_is_rejected(value: object) -> None:
    """L2: nan/inf would be written as JSON null and reloaded as 'now', so they raise instead."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(created_at=value)
    loc, kind, msg = only_error(exc)
    assert (loc, kind) == (("created_at",), "value_error")
    assert "finite" in msg


def test_l2_non_finite_is_rejected_on_element() -> None:
    """L2 applies to Element as well as MemoryItem."""
    with pytest.raises(ValidationError, match="finite"):
        Element(created_at=math.inf)


def test_l2_json_nan_literal_is_rejected() -> None:
    """L2: a NaN literal in a JSON document is rejected, not stored."""
    with pytest.raises(ValidationError, match="finite"):
        MemoryItem.model_validate_json('{"created_at": NaN}')


class _FailingFloat:
    """A value whose ``__float__`` raises an error of its own."""

    def __float__(self) -> float:
        raise ZeroDivisionError("boom")

    def __repr__(self) -> str:
        return "FailingFloat()"


def test_a_value_whose_float_conversion_fails_is_a_validation_error() -> None:
    """Whatever a value's ``__float__`` raises becomes a ValidationError on created_at."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(created_at=_FailingFloat())
    assert only_error(exc) == (
        ("created_at",),
        "value_error",
        "Value error, Invalid created_at: FailingFloat()",
    )
