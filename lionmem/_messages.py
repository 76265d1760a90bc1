"""How error messages name the type of a value a caller passed where another type was due,
and the place of a refused item in a batch."""

from __future__ import annotations

from uuid import UUID

__all__ = ["place_in_batch", "received"]

_LIONAGI_HINT = (
    " (lionagi's own type: wrap the store in lionmem.integrations.lionagi.LionagiMemoryStore "
    "to use it from lionagi)"
)


def received(value: object, expected: type) -> str:
    """The name of ``value``'s type: its ``__qualname__``, or its full name and where it comes
    from when that reads like ``expected`` (lionagi's MemoryItem for lionmem's, say)."""
    kind = type(value)
    if kind.__qualname__ != expected.__qualname__:
        return kind.__qualname__
    hint = _LIONAGI_HINT if kind.__module__.partition(".")[0] == "lionagi" else ""
    return f"{kind.__module__}.{kind.__qualname__}{hint}"


def place_in_batch(error: BaseException, method: str, position: int, item: object) -> None:
    """Note on ``error`` that it refuses the item at ``position`` of ``method``'s items (with
    its id, when it has one), and that none of them was written."""
    known = getattr(item, "id", None)  # lionmem's and lionagi's items both have one
    of = f", id {known}" if isinstance(known, UUID) else ""
    error.add_note(
        f"{method}(): the item at position {position}{of}; none of the items was written"
    )
