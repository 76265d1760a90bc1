"""How error messages name the type of a value a caller passed where another type was due."""

from __future__ import annotations

__all__ = ["received"]

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
