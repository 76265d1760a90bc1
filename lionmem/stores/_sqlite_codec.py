"""Exact JSON encoding of MemoryItem fields for the SQLite and PostgreSQL stores, the text they
index, and the parts of a query their SQL can decide.

A value is accepted only if JSON gives it back equal *and* of the same type, so that ``str()`` of
the decoded content is the ``str()`` the reference store would search: ``None``, ``bool``,
``int``, finite ``float``, ``str`` without lone surrogates, ``list`` and ``dict`` with ``str``
keys, nested freely, and exactly those types (an ``OrderedDict`` or an ``IntEnum`` prints
differently from what comes back, so it is refused). Anything else raises
``UnrepresentableValueError`` naming the field, the path inside it and the value's type, before
anything is written.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from pydantic import ValidationError

from lionmem._base import accepted_class_names
from lionmem.errors import MemoryAdapterError, UnrepresentableValueError, UnsupportedMemoryQuery
from lionmem_models.memory_item import MemoryItem

__all__ = [
    "MAX_TAGS",
    "EncodedItem",
    "UnrepresentableValueError",
    "canonical",
    "decode_item",
    "decode_row",
    "encode_item",
    "fields_of",
    "fts_text",
    "id_text",
    "json_text",
    "lowered_text",
    "plain_json",
    "read_json",
    "sql_filters",
    "wanted_tags",
]

# Canonical texts longer than this are stored (and looked up) as a digest, so the metadata index
# stays small whatever the values hold. Equality of digests is confirmed in Python.
_MAX_CANONICAL = 96

# Lists and dicts may nest this deep: an item's JSON document, one level more, is then within
# the 200 levels around a value that pydantic's JSON parser reads, so an exported item imports
# again. It also keeps every recursive step (the checks here, the json module, decoding) far
# inside Python's recursion limit, so a value is either refused here with a clear message or
# encoded, indexed and decoded in full.
MAX_DEPTH = 199

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_dumps = _ENCODER.encode
_encode_str = json.encoder.encode_basestring  # what _dumps writes for a str
json_text = _dumps
"""The JSON text the store writes for a value (compact, not ASCII-escaped)."""
_JSON_SCALARS = (str, int, float, bool, type(None))
_CLASS_NAMES = accepted_class_names(MemoryItem)


class EncodedItem(NamedTuple):
    """One MemoryItem as the rows the store writes."""

    id: str
    created_at: str
    metadata: str
    content: str
    tags: str
    text: str
    tag_set: frozenset[str]
    fields: tuple[tuple[str, str], ...]


def _reason_for(value: Any) -> str:
    if isinstance(value, tuple):
        return "JSON has no tuples; it would come back as a list (store a list)"
    if isinstance(value, set | frozenset):
        return "JSON has no sets (store a sorted list)"
    if isinstance(value, bytes | bytearray | memoryview):
        return "JSON has no bytes (store text, for example base64)"
    if type(value) is float:
        return "JSON has no NaN or Infinity"
    for plain in (str, int, float, list, dict):
        if isinstance(value, plain):
            return (
                f"it is a subclass of {plain.__name__}; JSON gives back the plain {plain.__name__}, "
                "whose str() and equality may differ (convert it first)"
            )
    return "only None, bool, int, finite float, str, list and dict with str keys round-trip"


def plain_json(value: Any, depth: int = 0) -> bool:
    """Return whether ``value`` is plain JSON data: exactly None, bool, int, finite float, str,
    list and dict with str keys, at most ``MAX_DEPTH`` deep (the fast path; ``_check`` explains a
    refusal). Lone surrogates are not looked for."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth == MAX_DEPTH:
        return False
    if kind is list:
        for element in value:  # noqa: SIM110 - a plain loop is much faster than all() over a genexpr
            if not plain_json(element, depth + 1):
                return False
        return True
    if kind is dict:
        for key, element in value.items():  # noqa: SIM110 - a plain loop is much faster than all() over a genexpr
            if type(key) is not str or not plain_json(element, depth + 1):
                return False
        return True
    return False


def _check(value: Any, path: str, active: set[int], depth: int = 0) -> None:
    """Raise ``UnrepresentableValueError`` for the first value under ``path`` JSON cannot keep."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return
    if kind is float:
        if not math.isfinite(value):
            raise UnrepresentableValueError(path, "float", f"{value!r}: {_reason_for(value)}")
        return
    if kind is list or kind is dict:
        if depth == MAX_DEPTH:
            raise UnrepresentableValueError(
                path, kind.__name__, f"lists and dicts may nest at most {MAX_DEPTH} levels deep"
            )
        marker = id(value)
        if marker in active:
            raise UnrepresentableValueError(path, kind.__name__, "it contains itself")
        active.add(marker)
        if kind is list:
            for index, element in enumerate(value):
                _check(element, f"{path}[{index}]", active, depth + 1)
        else:
            for key, element in value.items():
                if type(key) is not str:
                    raise UnrepresentableValueError(
                        f"{path}[{key!r}]",
                        f"dict key of type {type(key).__name__}",
                        "JSON object keys are strings; it would come back as a str",
                    )
                _check(element, f"{path}[{key!r}]", active, depth + 1)
        active.discard(marker)
        return
    raise UnrepresentableValueError(path, kind.__qualname__, _reason_for(value))


def encodable(text: str) -> bool:
    """Whether UTF-8 can encode ``text`` (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _find_surrogate(value: Any, path: str) -> tuple[str, str] | None:
    """Return the path and type of the first string (or key) holding a lone surrogate."""
    if isinstance(value, str):
        return None if encodable(value) else (path, "str")
    if isinstance(value, list):
        for index, element in enumerate(value):
            found = _find_surrogate(element, f"{path}[{index}]")
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, element in value.items():
            found = _find_surrogate(key, f"{path}[{key!r}]")
            if found is not None:
                return found[0], "dict key of type str"
            found = _find_surrogate(element, f"{path}[{key!r}]")
            if found is not None:
                return found
    return None


def _encode_field(value: Any, name: str) -> str:
    try:
        # A cycle makes plain_json recurse to MAX_DEPTH and fail; _check then names it.
        if not plain_json(value):
            _check(value, name, set())
        text = _dumps(value)
    except ValueError as exc:
        if isinstance(exc, UnrepresentableValueError):
            raise
        # int -> str conversion limit (sys.set_int_max_str_digits) and the like.
        raise UnrepresentableValueError(name, type(value).__name__, str(exc)) from exc
    if not encodable(text):
        found = _find_surrogate(value, name) or (name, type(value).__name__)
        raise UnrepresentableValueError(
            found[0], found[1], "it holds a lone surrogate, which UTF-8 cannot encode"
        )
    return text


def _encode_tags(tags: list[str]) -> str:
    """The JSON text of a list of plain strings, as ``_dumps`` writes it (without its overhead)."""
    text = "[" + ",".join([_encode_str(tag) for tag in tags]) + "]"
    if not encodable(text):
        return _encode_field(tags, "tags")  # raises, naming the tag that holds the surrogate
    return text


def lowered_text(content: Any) -> str:
    """What text search looks in: ``str(content).lower()``, by this Python's Unicode rules."""
    return str(content).lower()


def fts_text(text: str) -> str:
    """The form of ``text`` given to the trigram index: FTS5 stops reading a value at NUL.

    Replacing NUL by a space only adds candidate rows (every NUL-free substring is kept); the
    exact ``instr()`` check on the real text removes them. Needles holding NUL never use the index.
    """
    return text.replace("\x00", " ")


def canonical(value: Any) -> str | None:
    """Return a text equal for two JSON values exactly when Python's ``==`` says they are equal.

    Numbers are written by value (``True``, ``1`` and ``1.0`` all give ``1``), dict keys are
    sorted, strings are JSON-quoted. Non-finite floats give a text no stored value has. Returns
    ``None`` for anything that is not a plain JSON value, whose equality only Python can decide.
    """
    try:
        text = _canonical(value)
        encoded = text.encode("utf-8")
    except (_NotCanonical, RecursionError, UnicodeEncodeError, ValueError):
        return None
    if len(encoded) > _MAX_CANONICAL:
        return "#" + hashlib.blake2b(encoded, digest_size=16).hexdigest()
    return text


class _NotCanonical(Exception):
    """The value is not built from plain JSON types only."""


def _canonical(value: Any) -> str:
    kind = type(value)
    if value is None:
        return "null"
    if kind is str:
        return _dumps(value)
    if kind is bool:
        return "1" if value else "0"
    if kind is int:
        return str(value)
    if kind is float:
        if not math.isfinite(value):
            return "NaN"  # not JSON: equals no stored text, as NaN and inf equal no stored value
        if value.is_integer():
            return str(int(value))
        return repr(value)
    if kind is list:
        return "[" + ",".join([_canonical(element) for element in value]) + "]"
    if kind is dict:
        keys = sorted(value, key=_require_str)
        return "{" + ",".join([_dumps(key) + ":" + _canonical(value[key]) for key in keys]) + "}"
    raise _NotCanonical


def _require_str(key: Any) -> str:
    if type(key) is not str:
        raise _NotCanonical
    return key


def id_text(item_id: UUID) -> str:
    """The canonical text of ``item_id``, by its value: a subclass's own ``str()`` (a driver's
    UUID type, say) may differ from it. Such an id comes back as a plain, equal UUID."""
    return str(item_id) if type(item_id) is UUID else str(UUID(int=item_id.int))


def encode_item(item: MemoryItem) -> EncodedItem:
    """Encode every field of ``item`` exactly, or raise before anything is written.

    An item built without validation (``model_construct``) is checked for what reading it back
    validates: a UUID id and, if present, an accepted ``metadata['lion_class']``. An id of a UUID
    subclass is stored by its value and comes back as a plain, equal UUID.
    """
    item_id = item.id
    if not isinstance(item_id, UUID):
        raise UnrepresentableValueError("id", type(item_id).__qualname__, "id must be a UUID")
    metadata = item.metadata
    if type(metadata) is not dict:
        raise UnrepresentableValueError(
            "metadata", type(metadata).__qualname__, "metadata must be a plain dict"
        )
    if "lion_class" in metadata:
        named = metadata["lion_class"]
        if type(named) is not str or named not in _CLASS_NAMES:
            raise UnrepresentableValueError(
                "metadata['lion_class']",
                type(named).__qualname__,
                f"a MemoryItem is read back only with lion_class absent or one of {sorted(_CLASS_NAMES)}",
            )
    tags = item.tags
    if type(tags) is not list:
        raise UnrepresentableValueError("tags", type(tags).__qualname__, "tags must be a list")
    for index, tag in enumerate(tags):
        if type(tag) is not str:
            raise UnrepresentableValueError(
                f"tags[{index}]", type(tag).__qualname__, "tags must be plain strings"
            )
    content = item.content
    content_json = _encode_field(content, "content")
    metadata_json = _encode_field(metadata, "metadata")
    tags_json = _encode_tags(tags)
    created_at = item.created_at
    if type(created_at) is not float or not math.isfinite(created_at):
        raise UnrepresentableValueError(
            "created_at", type(created_at).__qualname__, "created_at must be a finite float"
        )
    fields = fields_of(metadata)
    return EncodedItem(
        id=id_text(item_id),
        created_at=repr(created_at),
        metadata=metadata_json,
        content=content_json,
        tags=tags_json,
        text=lowered_text(content),
        tag_set=frozenset(tags),
        fields=fields,
    )


def fields_of(metadata: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The ``(key, canonical value)`` entries the metadata index holds for ``metadata``."""
    # Every stored value passed _check, so canonical() cannot fail on it.
    return tuple((key, canonical(element) or "") for key, element in metadata.items())


_decode = json.JSONDecoder().decode


def read_json(text: str) -> Any:
    """Parse stored JSON text; ``ValueError`` for text that is not JSON, also for JSON nested
    deeper than Python can parse (only a damaged row holds such text: writes refuse it)."""
    try:
        return _decode(text)
    except RecursionError:
        msg = "its JSON nests too deeply to be read"
        raise ValueError(msg) from None


def decode_item(
    item_id: str, created_at: str, metadata: str, content: str, tags: str
) -> MemoryItem:
    """Rebuild the MemoryItem a row holds (validated, so a damaged row cannot pass as an item)."""
    return MemoryItem.model_validate(
        {
            "id": UUID(item_id),
            "created_at": float(created_at),
            "metadata": read_json(metadata),
            "content": read_json(content),
            "tags": read_json(tags),
        }
    )


def decode_row(row: Sequence[Any]) -> MemoryItem:
    """``decode_item`` of a row's first five columns; ``MemoryAdapterError`` for a damaged row."""
    try:
        return decode_item(row[0], row[1], row[2], row[3], row[4])
    except (ValueError, TypeError, ValidationError) as exc:
        if "for integer string conversion" in str(exc):  # CPython's words for its digit limit
            msg = (
                f"the stored row of item {row[0]!r} holds an integer of more digits than this "
                f"process reads (sys.get_int_max_str_digits() is {sys.get_int_max_str_digits()}; "
                f"PYTHONINTMAXSTRDIGITS raises it): {exc}"
            )
        else:
            msg = f"the stored row of item {row[0]!r} is malformed: {exc}"
        raise MemoryAdapterError(msg) from exc


MAX_TAGS = 10_000
"""Most distinct tags one query may hold; more raise UnsupportedMemoryQuery."""


def wanted_tags(tags: Sequence[str]) -> list[str] | None:
    """The distinct query tags a stored tag can equal, sorted; ``None`` when there is none.

    A tag UTF-8 cannot encode equals no stored tag, nor does one that is not a string (put in
    a query's list after it was validated). Raises ``UnsupportedMemoryQuery`` (naming ``tags``)
    for more than ``MAX_TAGS``.
    """
    # set() first: an unhashable tag raises TypeError, as InMemoryStore's set of tags does.
    wanted = sorted({tag for tag in set(tags) if isinstance(tag, str) and encodable(tag)})
    if not wanted:
        return None
    if len(wanted) > MAX_TAGS:
        # The message is the contract's; a note says why (shown with the traceback).
        refused = UnsupportedMemoryQuery(["tags"])
        refused.add_note(
            f"a query may hold at most {MAX_TAGS:,} distinct tags; this one holds {len(wanted):,}"
        )
        raise refused
    return wanted


def sql_filters(filters: Sequence[tuple[str, Any]]) -> Iterator[tuple[str, Any, str]]:
    """The filters SQL may pre-select by: ``(key, value, canonical text)``, in order.

    Python still confirms every filter on the rows SQL selects. A filter whose key UTF-8 cannot
    encode, or that is not a string (put in a query's dict after it was validated), is left to
    it (no stored key: it compares with None), and so is every filter from the
    first value without a canonical text on: only Python compares that value, and its ``==`` may
    raise, so the reference runs it on every item the filters before it let through.
    """
    for key, value in filters:
        text = canonical(value)
        if text is None:
            return
        if isinstance(key, str) and encodable(key):
            yield key, value, text
