"""The README's list of what ``lionmem`` exports names every name of ``lionmem.__all__``, and
every error it names there has the base class it gives."""

from __future__ import annotations

import re
from pathlib import Path

import lionmem

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "### Everything `lionmem` exports"


def export_section() -> str:
    """The README's text from its exports heading to the next heading."""
    text = README.read_text(encoding="utf-8")
    return text.split(f"\n{HEADING}\n", 1)[1].split("\n#", 1)[0]


def test_the_exports_section_names_every_public_name() -> None:
    """Each name of ``lionmem.__all__`` is named in the section, in backticks."""
    named = set(re.findall(r"`([A-Za-z_]+)(?:\(\))?`", export_section()))
    assert sorted(set(lionmem.__all__) - named) == []


def test_the_errors_have_the_bases_the_section_gives() -> None:
    """The section's claims about the errors' classes hold."""
    for name in (
        "UnsupportedMemoryQuery",
        "MemoryAdapterUnavailable",
        "UnrepresentableValueError",
        "IncompatibleDatabaseError",
    ):
        assert issubclass(getattr(lionmem, name), lionmem.MemoryAdapterError), name
    assert issubclass(lionmem.BranchNotFoundError, LookupError)
    assert issubclass(lionmem.UnknownToolError, LookupError)
