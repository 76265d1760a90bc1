"""Every exception lionmem raises of its own, all exported from ``lionmem``.

The stable errors of ADR-0093 D3 let applications tell "not found" (``None``), "unsupported"
(:class:`UnsupportedMemoryQuery`) and "temporarily unavailable" (:class:`MemoryAdapterUnavailable`)
apart without knowing the service's SDK; adapters chain the native exception as the cause. The
durable stores (SQLite, PostgreSQL) add :class:`UnrepresentableValueError` (a value JSON cannot
give back exactly) and :class:`IncompatibleDatabaseError` (a file or database they cannot read),
and ``Session.remove_branch`` raises
:class:`BranchNotFoundError`, the MCP server :class:`UnknownToolError`. Invalid
``MemoryItem``/``MemoryQuery``/manifest input stays a pydantic ``ValidationError``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "BranchNotFoundError",
    "IncompatibleDatabaseError",
    "MemoryAdapterError",
    "MemoryAdapterUnavailable",
    "UnknownToolError",
    "UnrepresentableValueError",
    "UnsupportedMemoryQuery",
]


class MemoryAdapterError(RuntimeError):
    """An explicit store, retrieve or search failed at the adapter boundary (the native error is chained)."""


class UnsupportedMemoryQuery(MemoryAdapterError):
    """The query asks for something the adapter cannot do; nothing was sent to the backend.

    ``rejected_keys`` holds every rejected filter key (and ``"limit"`` for a negative limit,
    ``"tags"`` for more tags than a store takes in one query), sorted and de-duplicated; the
    message lists them in the same order. A single string is one key, not a sequence of
    one-letter keys.
    """

    rejected_keys: tuple[str, ...]

    def __init__(self, rejected_keys: Iterable[str]) -> None:
        keys = (rejected_keys,) if isinstance(rejected_keys, str) else tuple(rejected_keys)
        if not keys:
            # An error that rejects nothing would tell the caller nothing about what to change.
            msg = "UnsupportedMemoryQuery needs at least one rejected key"
            raise ValueError(msg)
        self.rejected_keys = tuple(sorted(set(keys)))
        super().__init__("unsupported memory query keys: " + ", ".join(self.rejected_keys))

    def __reduce__(self) -> tuple[type[UnsupportedMemoryQuery], tuple[tuple[str, ...]]]:
        # Keep the error picklable (multiprocessing, pytest-xdist) despite the custom __init__.
        return (type(self), (self.rejected_keys,))


class MemoryAdapterUnavailable(MemoryAdapterError):
    """Transport or service availability prevented an explicit operation; nothing is assumed done."""


class UnrepresentableValueError(MemoryAdapterError, ValueError):
    """A field holds a value that JSON cannot give back exactly; nothing was written.

    ``field`` is the dotted path of the offending value (``"content[0]['k']"``) and
    ``value_type`` the name of its type (``"dict key of type int"`` for an offending key).
    """

    def __init__(self, field: str, value_type: str, reason: str) -> None:
        self.field = field
        self.value_type = value_type
        # A key's type is given as "dict key of type X": the message then reads "a dict key of
        # type X", not "a value of type dict key of type X".
        subject = "a " if value_type.startswith("dict key ") else "a value of type "
        super().__init__(
            f"MemoryItem.{field}: {subject}{value_type} cannot be stored exactly: {reason}"
        )

    def __reduce__(self) -> tuple[type[UnrepresentableValueError], tuple[str, str, str]]:
        # The custom __init__ needs its own arguments back when the error is pickled.
        reason = str(self).split(" cannot be stored exactly: ", 1)[1]
        return (type(self), (self.field, self.value_type, reason))


class IncompatibleDatabaseError(MemoryAdapterError):
    """The file or database is not a lionmem one this version can read; it was left unchanged."""


class BranchNotFoundError(LookupError):
    """``Session.remove_branch`` was given a branch, id or id string that the session does not hold."""


class UnknownToolError(LookupError):
    """An MCP client called a tool that ``lionmem mcp`` does not list (for its store)."""
