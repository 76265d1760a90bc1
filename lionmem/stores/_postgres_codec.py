"""The PostgreSQL store's row format, on top of the exact JSON codec it shares with SQLite.

Content, metadata and tags are kept as the verbatim JSON text ``_sqlite_codec`` writes (jsonb
would reorder keys, merge duplicates and rewrite numbers), so round trips stay exact. Beside them:

* ``search``: ``str(content).lower()`` by Python's rules; a ``text`` value cannot hold U+0000, so
  NUL is written as ``NUL_STANDIN``, and a needle holding either character is confirmed in Python;
* ``tag_keys``: each distinct tag as its JSON string (NUL-free, distinct for distinct tags);
* ``field_keys``: ``"v" + key + canonical value`` for each metadata entry (Python equality, as
  ``_sqlite_codec.canonical`` defines it) and ``"k" + key`` for each entry whose value is not
  ``None``. Keys are JSON strings, so an entry reads back unambiguously.

Entries longer than ``_MAX_ENTRY`` characters are stored as a digest (GIN keys must stay small);
every search confirms tags and filters in Python, so a digest only ever pre-selects rows.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

from lionmem.stores._sqlite_codec import EncodedItem, lowered_text

__all__ = [
    "NUL_STANDIN",
    "Row",
    "field_entry",
    "needle_pattern",
    "present_entry",
    "row_of",
    "search_text",
    "tag_entry",
]

NUL_STANDIN = "\ufffd"
"""What U+0000 becomes in ``search``; a needle holding it (or NUL) is confirmed in Python."""

_MAX_ENTRY = 200
_quote = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Row(NamedTuple):
    """The values of one ``lionmem_items`` row besides its namespace."""

    id: str
    created_at: str
    metadata: str
    content: str
    tags: str
    search: str
    tag_keys: list[str]
    field_keys: list[str]


def _entry(text: str) -> str:
    if len(text) <= _MAX_ENTRY:
        return text
    return "#" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def tag_entry(tag: str) -> str:
    """The ``tag_keys`` entry of ``tag`` (a string UTF-8 can encode)."""
    return _entry(_quote(tag))


def field_entry(key: str, value_text: str) -> str:
    """The ``field_keys`` entry saying metadata ``key`` holds a value of canonical text ``value_text``."""
    return _entry("v" + _quote(key) + value_text)


def present_entry(key: str) -> str:
    """The ``field_keys`` entry saying metadata ``key`` holds a value other than ``None``."""
    return _entry("k" + _quote(key))


def search_text(content: Any) -> str:
    """The ``search`` column for ``content``: its Python-lowered text, NUL replaced."""
    return lowered_text(content).replace("\x00", NUL_STANDIN)


def needle_pattern(needle: str) -> str:
    """A ``LIKE`` pattern (escape character ``\\``) matching texts that contain ``needle``."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + escaped.replace("\x00", NUL_STANDIN) + "%"


def row_of(encoded: EncodedItem) -> Row:
    """The row for an item ``_sqlite_codec.encode_item`` accepted."""
    fields: list[str] = []
    for key, value_text in encoded.fields:
        fields.append(field_entry(key, value_text))
        if value_text != "null":  # canonical() gives "null" for None only
            fields.append(present_entry(key))
    return Row(
        id=encoded.id,
        created_at=encoded.created_at,
        metadata=encoded.metadata,
        content=encoded.content,
        tags=encoded.tags,
        search=encoded.text.replace("\x00", NUL_STANDIN),
        tag_keys=sorted({tag_entry(tag) for tag in encoded.tag_set}),
        field_keys=fields,
    )
