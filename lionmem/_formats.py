"""The format checks of the shipped schemas: jsonschema's, with ``uuid`` held to the canonical form.

One checker for every place that validates against the schemas (``lionmem validate``, the MCP
tools, the tests' vectors), so each gives the verdict ajv gives with the format docs/clients.md
sets. Needs jsonschema, imported only when a checker is made.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jsonschema import FormatChecker

__all__ = ["format_checker", "is_canonical_uuid"]

_CANONICAL_UUID = re.compile("[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
"""The form of a ``format: uuid`` string, as docs/clients.md gives it to ajv."""


def is_canonical_uuid(instance: object) -> bool:
    """Whether ``instance`` passes ``format: uuid``: a string in the canonical form, or no string
    (a format applies to strings only)."""
    return not isinstance(instance, str) or _CANONICAL_UUID.fullmatch(instance) is not None


def format_checker() -> FormatChecker:
    """Draft 2020-12's format checks, with ``uuid`` held to the canonical form.

    jsonschema's own ``uuid`` check is ``UUID()``, which reads what ``int(..., 16)`` reads:
    digits of other scripts, underscores, a sign or white space too, taken for another id than
    the one written.
    """
    from jsonschema import Draft202012Validator, FormatChecker  # noqa: PLC0415 -- an optional extra

    checker = FormatChecker(())
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("uuid")(is_canonical_uuid)
    return checker
