"""Exact comparison and short descriptions of values, for the cases' verdicts and messages."""

from __future__ import annotations

import reprlib
import unicodedata
from typing import Any

__all__ = ["mismatch", "same_value", "short"]

_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = 8
_REPR.maxdict = 8
_REPR.maxlevel = 4


def same_value(left: Any, right: Any) -> bool:
    """Return whether two JSON-like values are equal *and* of the same types throughout.

    ``==`` is too lax for fidelity: ``1 == 1.0 == True`` and ``(1,) != [1]`` but ``{1} == {1}``.
    Dict key order is part of the value here, because text search sees ``str(content)``.
    """
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same_value(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(map(same_value, left, right))
    if isinstance(left, float) and left != left and right != right:  # noqa: PLR0124 - NaN check
        return True
    return bool(left == right)


def short(value: Any) -> str:
    """Return a bounded ``repr`` of ``value`` for a failure message."""
    return _REPR.repr(value)


def mismatch(got: Any, stored: Any) -> str:
    """Return ``"<got> for stored <stored>"``, bounded, telling apart two values that print alike.

    Text differing only in Unicode normalisation (``'\u00e9'`` and ``'e\u0301'``) prints the same,
    as do values cut short at the same place: then both are shown in full with ``ascii()`` too.
    """
    shown, kept = short(got), short(stored)
    text = f"{shown} for stored {kept}"
    if unicodedata.normalize("NFC", shown) != unicodedata.normalize("NFC", kept):
        return text
    note = "they differ only in Unicode normalisation" if shown != kept else "in full"
    return f"{text} ({note}: {got!a} and {stored!a})"
