"""lionmem.errors: the stable adapter errors of ADR-0093 D3 and the errors of the stores and sessions."""

from __future__ import annotations

import pickle

import pytest

import lionmem
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable, UnsupportedMemoryQuery


def test_errors_are_exported_from_lionmem() -> None:
    """lionmem exports the three errors from lionmem.errors."""
    assert (
        lionmem.MemoryAdapterError,
        lionmem.UnsupportedMemoryQuery,
        lionmem.MemoryAdapterUnavailable,
    ) == (MemoryAdapterError, UnsupportedMemoryQuery, MemoryAdapterUnavailable)


def test_adapter_error_is_a_runtime_error() -> None:
    """MemoryAdapterError derives from RuntimeError, as the ADR sketch has it."""
    assert issubclass(MemoryAdapterError, RuntimeError)


@pytest.mark.parametrize("error", [UnsupportedMemoryQuery, MemoryAdapterUnavailable])
def test_specific_errors_are_adapter_errors(error: type[Exception]) -> None:
    """Both specific errors are caught by ``except MemoryAdapterError``."""
    assert issubclass(error, MemoryAdapterError)


def test_rejected_keys_are_sorted_and_deduplicated() -> None:
    """rejected_keys holds every key once, sorted."""
    error = UnsupportedMemoryQuery(["zeta", "limit", "alpha", "zeta"])
    assert error.rejected_keys == ("alpha", "limit", "zeta")


def test_message_lists_the_sorted_keys() -> None:
    """The message is the ADR's, with the keys in the same order."""
    error = UnsupportedMemoryQuery(["zeta", "alpha", "zeta"])
    assert str(error) == "unsupported memory query keys: alpha, zeta"


def test_any_iterable_of_keys_is_accepted() -> None:
    """A generator of keys works like a list."""
    error = UnsupportedMemoryQuery(key for key in ("b", "a"))
    assert error.rejected_keys == ("a", "b")


def test_a_single_string_is_one_key() -> None:
    """A bare string is one key, not a sequence of one-letter keys."""
    assert UnsupportedMemoryQuery("limit").rejected_keys == ("limit",)


def test_no_keys_is_refused() -> None:
    """An UnsupportedMemoryQuery must name at least one key."""
    with pytest.raises(ValueError, match="at least one rejected key"):
        UnsupportedMemoryQuery([])


def test_unsupported_query_survives_pickling() -> None:
    """A pickled and unpickled error keeps its keys and message."""
    error = pickle.loads(pickle.dumps(UnsupportedMemoryQuery(["b", "a"])))
    assert (type(error), error.rejected_keys, str(error)) == (
        UnsupportedMemoryQuery,
        ("a", "b"),
        "unsupported memory query keys: a, b",
    )


def test_native_error_is_chained_as_the_cause() -> None:
    """``raise MemoryAdapterUnavailable(...) from native`` keeps the native error as __cause__."""
    native = ConnectionError("refused")
    with pytest.raises(MemoryAdapterUnavailable) as caught:
        raise MemoryAdapterUnavailable("service down") from native
    assert caught.value.__cause__ is native


def test_store_and_session_errors_are_the_ones_lionmem_exports() -> None:
    """The SQLite store and the session raise the classes of lionmem.errors, with their bases."""
    import lionmem
    from lionmem import session
    from lionmem.stores import sqlite

    assert sqlite.UnrepresentableValueError is lionmem.UnrepresentableValueError
    assert sqlite.IncompatibleDatabaseError is lionmem.IncompatibleDatabaseError
    assert session.BranchNotFoundError is lionmem.BranchNotFoundError
    assert lionmem.UnrepresentableValueError.__bases__ == (MemoryAdapterError, ValueError)
    assert issubclass(lionmem.IncompatibleDatabaseError, MemoryAdapterError)
    assert issubclass(lionmem.BranchNotFoundError, LookupError)
    assert not issubclass(lionmem.BranchNotFoundError, MemoryAdapterError)


def test_unrepresentable_value_error_names_the_field_and_survives_pickling() -> None:
    """The error carries the field path and the type, says why, and pickles back equal."""
    import pickle

    from lionmem import UnrepresentableValueError

    error = UnrepresentableValueError("content[0]", "set", "JSON has no sets")
    assert (error.field, error.value_type) == ("content[0]", "set")
    assert (
        str(error)
        == "MemoryItem.content[0]: a value of type set cannot be stored exactly: JSON has no sets"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.field, copy.value_type, str(copy)) == (
        UnrepresentableValueError,
        "content[0]",
        "set",
        str(error),
    )


def test_unrepresentable_key_error_names_it_a_key() -> None:
    """An offending dict key's message reads as a key's, and pickles back the same."""
    import pickle

    from lionmem import UnrepresentableValueError

    error = UnrepresentableValueError("content[1]", "dict key of type int", "keys are strings")
    assert str(error) == (
        "MemoryItem.content[1]: a dict key of type int cannot be stored exactly: keys are strings"
    )
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
