"""Exact comparison and short descriptions of values, for the cases' verdicts and messages."""

from __future__ import annotations

import math
import reprlib
import unicodedata
from typing import Any

__all__ = ["mismatch", "non_json", "same_value", "short"]

_JSON_SCALARS = (str, int, float, bool, type(None))

_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = 8
_REPR.maxdict = 8
_REPR.maxlevel = 4


def same_value(left: Any, right: Any) -> bool:
    """Return whether two JSON-like values are equal *and* of the same types throughout.

    ``==`` is too lax for fidelity: ``1 == 1.0 == True`` and ``(1,) != [1]`` but ``{1} == {1}``.
    Dict key order is part of the value here, because text search sees ``str(content)``, and so
    is the sign of a zero float (``-0.0 == 0.0`` in Python, not as JSON text).
    """
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same_value(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(map(same_value, left, right))
    if isinstance(left, float) and left != left and right != right:  # noqa: PLR0124 - NaN check
        return True
    if isinstance(left, float):
        return left == right and math.copysign(1.0, left) == math.copysign(1.0, right)
    return bool(left == right)


def non_json(value: Any, path: str = "") -> str | None:
    """Return where ``value`` holds something other than JSON data, or ``None`` if it holds none.

    JSON data is exactly ``dict`` with ``str`` keys, ``list``, ``str``, ``int``, ``float``,
    ``bool`` and ``None``: subclasses and other types (a tuple, an SDK object) are not.
    """
    kind, where = type(value), path or "the value"
    if kind in _JSON_SCALARS:
        return None
    if kind is list:
        children = [(f"{path}[{index}]", element) for index, element in enumerate(value)]
    elif kind is dict:
        if any(type(key) is not str for key in value):
            return f"a key of {where} is not a str"
        children = [(f"{path}[{key!r}]", element) for key, element in value.items()]
    else:
        return f"{where} is a {kind.__name__}"
    found = (non_json(element, inner) for inner, element in children)
    return next((problem for problem in found if problem is not None), None)


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
