"""Pure coercion tables: what ``created_at``, ``metadata`` and an id key accept.

``coerce_created_at`` and ``coerce_metadata`` turn every input the reference (lionagi 0.36.0)
accepts into the value it would store, and reject with a ``ValueError`` what it would store
wrongly (non-finite times, non-mapping metadata, non-string keys; SEMANTICS.md §2.3, §2.4, L1,
L2). ``uuid_key`` turns a ``UUID`` or any string ``uuid.UUID()`` parses into a ``UUID`` and
anything else into ``None``: the lookup rule of every store's ``retrieve`` (L6). Nothing here
knows about pydantic models; ``lionmem._base`` wires these functions into the validators.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import Enum
from types import ModuleType
from typing import Any
from uuid import UUID

__all__ = ["coerce_created_at", "coerce_metadata", "utc_timestamp", "uuid_key"]

utc_timestamp = time.time
"""Default factory of ``created_at``: the current time as UTC POSIX seconds (POSIX time is UTC)."""


def _finite(seconds: float) -> float:
    # L2: nan and inf cannot round-trip through JSON (they are written as null), so reject them.
    if not math.isfinite(seconds):
        msg = f"created_at must be a finite number of seconds, got {seconds!r}"
        raise ValueError(msg)
    return seconds


def coerce_created_at(value: Any) -> float:
    """Apply the ``created_at`` coercion table of SEMANTICS.md §2.3, rejecting non-finite values."""
    if isinstance(value, float):
        return _finite(value)
    if value is None:
        return utc_timestamp()
    if isinstance(value, datetime):
        # A naive datetime is read in the process's local time zone, as the reference does. Its
        # ValueError ("year 0 is out of range") passes through unchanged, as in the reference; an
        # OverflowError or OSError would escape pydantic unwrapped, so it becomes a ValueError.
        try:
            return _finite(value.timestamp())
        except (OverflowError, OSError):
            msg = f"Invalid created_at: {value}"
            raise ValueError(msg) from None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace(" ", "T"))
        except ValueError:
            try:
                seconds = float(value)
            except ValueError:
                msg = f"Invalid datetime string: {value}"
                raise ValueError(msg) from None
            return _finite(seconds)
        # A naive ISO string is read as UTC (unlike a naive datetime object).
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return _finite(parsed.timestamp())
    try:
        seconds = float(value)
    except Exception:  # any error of the value's own __float__, as the reference catches
        msg = f"Invalid created_at: {value}"
        raise ValueError(msg) from None
    return _finite(seconds)


def _decode_json_object(text: str, source: str) -> dict[str, Any]:
    try:
        decoded = json.loads(text)
    except ValueError as exc:
        msg = f"Invalid metadata: {source} is not valid JSON ({exc})"
        raise ValueError(msg) from None
    except RecursionError:
        msg = f"Invalid metadata: {source} nests too deeply to decode"
        raise ValueError(msg) from None
    if not isinstance(decoded, dict):
        msg = f"Invalid metadata: {source} holds a JSON {_json_kind(decoded)}, not an object"
        raise ValueError(msg)
    return decoded


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array"


def _not_a_mapping(value: Any, detail: str) -> ValueError:
    return ValueError(
        f"Invalid metadata: expected a mapping (dict, JSON object string, pydantic model or "
        f"dataclass), got {type(value).__name__}{detail}"
    )


def _object_to_mapping(value: Any) -> Any:
    """Convert an object the way the reference does: model_dump, then to_dict/dict/to_json/json."""
    if isinstance(value, type):
        # A class is not a record; its unbound model_dump() would fail with a confusing message.
        msg = f"Invalid metadata: expected a mapping instance, got the class {value.__qualname__}"
        raise ValueError(msg)
    for name in ("model_dump", "to_dict", "dict", "to_json", "json"):
        method = getattr(value, name, None)
        if method is not None:
            try:
                converted = method()
            except Exception as exc:
                msg = f"Invalid metadata: {type(value).__name__}.{name}() raised {exc!r}"
                raise ValueError(msg) from exc
            if isinstance(converted, str):
                return _decode_json_object(converted, f"the string from {name}()")
            if isinstance(converted, Mapping):
                return dict(converted)
            raise _not_a_mapping(converted, f" from {type(value).__name__}.{name}()")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, BaseException | ModuleType) or callable(value):
        # L1: the reference reads their __dict__, which is not their data (an exception keeps
        # its message in args, so it becomes {} silently; a function gives its attributes).
        raise _not_a_mapping(value, "")
    if hasattr(value, "__dict__"):
        return dict(vars(value))
    raise _not_a_mapping(value, "")


def coerce_metadata(value: Any) -> dict[str, Any]:
    """Turn a metadata input into a dict with string keys (SEMANTICS.md §2.4 and L1).

    What the reference converts is converted the same way: falsy values give ``{}``, a dict is kept
    (pydantic then copies it shallowly), any Mapping is copied, a string is parsed as a JSON object,
    a pydantic model is dumped, a dataclass goes through ``asdict``. What the reference would turn
    into ``{}`` silently, enumerate into an index-keyed dict or leak as a raw ``TypeError`` raises a
    ``ValueError`` here, which pydantic reports as a ``ValidationError`` on ``metadata``.
    """
    if type(value) is dict:
        result: dict[Any, Any] = value
    elif not value:
        return {}
    elif isinstance(value, Mapping):
        result = dict(value)
    elif isinstance(value, str):
        result = _decode_json_object(value, "the string")
    elif isinstance(value, type) and issubclass(value, Enum):
        result = dict(value.__members__)
    elif isinstance(value, list | tuple | set | frozenset | range | bytes | bytearray):
        raise _not_a_mapping(value, " (sequences and sets are not turned into dicts)")
    elif isinstance(value, bool | int | float | complex | UUID):
        raise _not_a_mapping(value, "")
    else:
        result = _object_to_mapping(value)
    for key in result:
        if not isinstance(key, str):
            msg = (
                f"Invalid metadata: keys must be strings, as in every JSON object; "
                f"got the {type(key).__name__} key {key!r}"
            )
            raise ValueError(msg)
    return result


def uuid_key(value: object) -> UUID | None:
    """``value`` as a ``UUID`` when it is one or a string ``uuid.UUID()`` parses, else ``None``."""
    if isinstance(value, UUID):
        return value
    if isinstance(value, str):
        try:
            return UUID(value)
        except ValueError:
            return None
    return None
