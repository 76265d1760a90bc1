"""``validate FILE...``: JSON or JSON Lines documents checked against the shipped JSON schemas.

A ``.jsonl`` or ``.ndjson`` file is JSON Lines (read line by line, each problem printed as it
is found), a ``.json`` file one document, any other file one document if it parses as one or
its first line is not a whole value (a document written over several lines), else JSON Lines.
Each problem is printed as ``FILE:LINE: PATH: message`` with ``PATH`` a JSON path
(``$.tags[0]``), in the order the values stand in the document (of a key given twice, the
last value, the one import keeps); text that is not UTF-8 or not JSON is a problem of its
document too, and so is ``NaN``, ``Infinity``, ``-Infinity`` (which Python reads, JSON has
not), a number too large for a float, a lone surrogate escape or nesting of about 200 levels
(which pydantic's JSON parser, the one import reads with, refuses), and of an item, content or
metadata nesting deeper than the stores keep (import refuses it). The schema is ``--schema``
(default ``memory_item``). Validation is JSON Schema draft 2020-12 with format checking on (a ``uuid`` in the canonical
form, as the MCP server and ajv check it), cross-file ``$ref`` resolved: the verdicts of the
schema vectors. Needs jsonschema (the ``cli`` extra).
"""

from __future__ import annotations

import argparse
import bisect
import codecs
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed omits it
from pathlib import Path
from typing import Any, BinaryIO

from pydantic_core import from_json

from lionmem._formats import format_checker
from lionmem._schemas import schema_path, schemas
from lionmem.cli._errors import OK, PROBLEM, open_file, require_extra
from lionmem.cli._lines import MAX_LINE_BYTES, TOO_LONG, lines_of
from lionmem.cli._output import plural, say, visible, visible_json, writable
from lionmem.cli._schema import resolve_schema_name
from lionmem.stores._sqlite_codec import MAX_DEPTH

__all__ = ["Report", "json_path", "problems", "register"]

_LINES = (".jsonl", ".ndjson")
# A document deeper than Python's recursion limit lets the parser or the validator follow.
_TOO_DEEP = "nested too deeply to check"
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
# The levels an item's document may nest: the document, then content or metadata nesting at most
# MAX_DEPTH (the stores' limit, so that an exported item imports again).
_ITEM_DEPTH = MAX_DEPTH + 1


@cache
def _validator(name: str) -> Any:
    require_extra("jsonschema")
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    return Draft202012Validator(schema, registry=_registry(), format_checker=format_checker())


@cache
def _registry() -> Any:
    """Every shipped schema by its ``$id``, for cross-file ``$ref`` (``referencing``)."""
    from referencing import Registry, Resource

    resources = [(c["$id"], Resource.from_contents(c)) for c in schemas().values()]
    return Registry().with_resources(resources)


def json_path(parts: Any) -> str:
    """Return the JSON path of a sequence of keys and indexes: ``$``, ``$.tags[0]``, ``$["a b"]``."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier() and writable(part) == part:  # else quoted: JSON's escapes
            text += f".{part}"
        else:
            key = visible_json(json.dumps(part, ensure_ascii=False))
            text += f"[{writable(key, json_text=True)}]"
    return text


def _offsets(text: str, paths: Iterable[tuple[Any, ...]]) -> dict[tuple[Any, ...], int]:
    """Return the offset in the JSON ``text`` of the value at each of ``paths`` (keys and
    indexes), all found in one reading of the text; of a key given twice, the last one's, the
    value the parser keeps."""
    wanted: dict[Any, Any] = {}
    for path in paths:
        node = wanted
        for part in path:
            node = node.setdefault(part, {})
    found: dict[tuple[Any, ...], int] = {}
    _find(text, _skip(text, 0), (), wanted, found)
    return found


# The most digits of an integer import's JSON parser (pydantic's) reads, whatever Python's limit.
_IMPORT_DIGITS = 4300


def _most_digits() -> int:
    """The most digits of an integer validate reads: as many as import reads, or fewer where
    Python's limit (``sys.get_int_max_str_digits()``, 0 for none) is lower."""
    return min(sys.get_int_max_str_digits() or _IMPORT_DIGITS, _IMPORT_DIGITS)


class _Unread(int):
    """An integer with more digits than lionmem reads (``_most_digits()``), kept as its
    literal so the rest of its document is checked; the problem is its own.

    It is an int (the schema's ``type: integer`` holds), never read: it equals, hashes and shows
    (``<an integer of 5000 digits>``) as the integer it writes, and orders as it: its value is
    10 to the power of the limit, with its sign, beyond every number read. So the
    problems of the values around it (a ``uniqueItems``, a ``const``, a root of another type)
    are true of the document.
    """

    literal: str

    def __new__(cls, literal: str) -> _Unread:
        negative = literal.startswith("-")
        unread = super().__new__(cls, (-1 if negative else 1) * 10 ** _most_digits())
        unread.literal = literal
        return unread

    def __repr__(self) -> str:
        sign = "a negative" if self.literal.startswith("-") else "an"
        return f"<{sign} integer of {len(self.literal.lstrip('-'))} digits>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unread) and other.literal == self.literal  # no leading zeros

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.literal)

    def _key(self) -> tuple[int, int, str]:
        """A key that orders these integers as their values: sign, then length, then digits."""
        digits = self.literal.lstrip("-")
        if self.literal.startswith("-"):  # the longer, the smaller; digits compared inverted
            return (-1, -len(digits), digits.translate(_INVERTED))
        return (1, len(digits), digits)

    def __lt__(self, other: float) -> bool:
        return self._key() < other._key() if isinstance(other, _Unread) else int(self) < other

    def __le__(self, other: float) -> bool:
        return self._key() <= other._key() if isinstance(other, _Unread) else int(self) <= other

    def __gt__(self, other: float) -> bool:
        return self._key() > other._key() if isinstance(other, _Unread) else int(self) > other

    def __ge__(self, other: float) -> bool:
        return self._key() >= other._key() if isinstance(other, _Unread) else int(self) >= other


_INVERTED = str.maketrans("0123456789", "9876543210")


def _read_int(literal: str) -> int:
    """The integer ``literal``, or ``_Unread`` if it has more digits than lionmem reads."""
    if len(literal) - literal.startswith("-") > _most_digits():
        return _Unread(literal)
    return int(literal)


_DECODER = json.JSONDecoder(parse_int=_read_int)


def _find(
    text: str,
    position: int,
    path: tuple[Any, ...],
    wanted: dict[Any, Any],
    found: dict[tuple[Any, ...], int],
) -> int:
    """Record in ``found`` where the value at ``position`` (at ``path``) begins, and the values
    in it that ``wanted`` names; return the offset after the value. A later value of the same
    path (a key given twice) overwrites an earlier one."""
    found[path] = position
    opener = text[position]
    if not wanted or opener not in ("[", "{"):
        _, end = _DECODER.raw_decode(text, position)
        return end
    closer = "]" if opener == "[" else "}"
    position = _skip(text, position + 1)
    index = 0
    while text[position] != closer:
        if opener == "{":
            key, position = scanstring(text, position + 1)
            position = _skip(text, _skip(text, position) + 1)
        else:
            key, index = index, index + 1
        inner = wanted.get(key)
        if inner is None:
            _, position = _DECODER.raw_decode(text, position)
        else:
            position = _find(text, position, (*path, key), inner, found)
        position = _skip(text, position)
        if text[position] == ",":
            position = _skip(text, position + 1)
    return position + 1


def _loads(document: str) -> tuple[Any, bool, int]:
    """``document`` parsed, whether it holds a number that is not finite (NaN, an infinity, or
    one too large for a float) or an integer too long to read, so that only such a document is
    searched for it, and how many integers too long to read it holds (one under a key given
    again later is not in the value parsed, though import refuses it too)."""
    seen = False
    unread = 0

    def integer(literal: str) -> int:
        nonlocal seen, unread
        parsed = _read_int(literal)
        if parsed.__class__ is _Unread:
            seen, unread = True, unread + 1
        return parsed

    def constant(literal: str) -> float:
        nonlocal seen
        seen = True
        return float(literal)

    def number(literal: str) -> float:
        nonlocal seen
        parsed = float(literal)
        seen = seen or math.isinf(parsed)
        return parsed

    parsed = json.loads(document, parse_constant=constant, parse_float=number, parse_int=integer)
    return parsed, seen, unread


# Where pydantic's JSON parser says it stopped, as "... at line 2 column 8".
_WHERE = re.compile(r" at line (\d+) column (\d+)$")


# Fewer opening brackets than this cannot reach the depth pydantic's JSON parser refuses.
_DEEP_BRACKETS = 190


def _unreadable(document: str) -> tuple[int, str] | None:
    """Why pydantic's JSON parser (import's and the models') refuses ``document``, which
    Python's reads, and the line of it where (from 1): nesting, or a lone surrogate escape.
    ``None`` when it reads it, or refuses it for a number (those are found where they stand).
    Parsed again only when it holds an escape or enough brackets to be refused."""
    brackets = document.count("[") + document.count("{")
    if "\\u" not in document and brackets < _DEEP_BRACKETS:
        return None
    try:
        from_json(document)
    except ValueError as error:
        found = _WHERE.search(str(error))
        if found is None:
            return None
        reason = str(error)[: found.start()]
        if reason == "recursion limit exceeded":
            reason = "nested too deeply (about 200 levels at most)"
        elif "hex escape" in reason:  # Python's parser took every escape: one half of a pair
            reason = "a lone surrogate escape (\\ud800-\\udfff not in a pair)"
        else:
            return None
        line = int(found.group(1))
        # The parser counts the column in UTF-8 bytes; a person counts characters.
        text = document.split("\n")[line - 1].encode("utf-8")[: int(found.group(2)) - 1]
        column = len(text.decode("utf-8", errors="ignore")) + 1
        return line, f"not JSON lionmem reads: {reason} at column {column}"
    return None


def _too_deep_to_store(document: str, value: Any) -> tuple[int, str] | None:
    """Where the item ``value`` (parsed from ``document``) nests deeper than a store keeps, as
    (line within the document from 0, message), or ``None``: the parser reads one level more
    than an item a store writes, which import then refuses."""
    if document.count("[") + document.count("{") <= _ITEM_DEPTH or not isinstance(value, dict):
        return None
    # Only content and metadata are stored as they are: any other key is the schema's to refuse.
    stored = [key for key in value if key in ("content", "metadata")]
    stack: list[tuple[tuple[Any, ...], Any]] = [((key,), value[key]) for key in reversed(stored)]
    while stack:  # depth first, in document order
        path, node = stack.pop()
        if isinstance(node, list | dict):
            if len(path) == _ITEM_DEPTH:
                where = document.count("\n", 0, _offsets(document, [path])[path])
                return where, (
                    f"{json_path(path)}: nested deeper than an item lionmem stores (lists and "
                    f"dicts in content or metadata nest at most {MAX_DEPTH} levels)"
                )
            children = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend(((*path, key), child) for key, child in reversed(list(children)))
    return None


def _not_finite(value: Any) -> Iterator[tuple[Any, ...]]:
    """Yield the path of every number in ``value`` that is not finite (NaN, an infinity) or
    too long to read (``_Unread``)."""
    pending: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while pending:
        path, current = pending.pop()
        if isinstance(current, _Unread) or (
            isinstance(current, float) and not math.isfinite(current)
        ):
            yield path
        elif isinstance(current, dict):
            pending.extend(((*path, key), item) for key, item in current.items())
        elif isinstance(current, list):
            pending.extend(((*path, index), item) for index, item in enumerate(current))


# A number Python reads as not finite, as written: NaN or an infinity, or one too large for a float.
_NOT_FINITE = re.compile(r"NaN|-?Infinity|[-+.0-9eE]+")


def _not_json_number(text: str, position: int) -> str:
    """The problem of the number at ``position`` in ``text`` that Python reads as not finite."""
    found = _NOT_FINITE.match(text, position)
    literal = found.group() if found is not None else "a number"
    if literal in ("NaN", "Infinity", "-Infinity"):
        return f"{literal} is not JSON: JSON has no NaN or Infinity"
    if literal.lstrip("-").isdigit():  # an integer: only its length keeps Python from reading it
        digits = len(literal.lstrip("-"))
        return (
            f"an integer of {digits} digits is more than lionmem reads "
            f"({_most_digits()} digits at most)"
        )
    sign = "-" if literal.startswith("-") else ""
    return f"{literal} is too large a number (read as {sign}Infinity): JSON has no NaN or Infinity"


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


class _NotText(ValueError):
    """A document that is not UTF-8 text."""


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        msg = f"not UTF-8 text ({error.reason} at byte {error.start})"
        raise _NotText(msg) from None


def _without_bom(data: bytes) -> bytes:
    """``data`` without the UTF-8 byte-order mark it may begin with (an editor's, not JSON)."""
    return data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data


def _documents(path: Path, stream: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """Yield ``(line, bytes)`` of every document in the file, JSON Lines read line by line;
    ``None`` for a document or line longer than ``MAX_LINE_BYTES`` (not held whole)."""
    start = b""
    if path.suffix not in _LINES:
        start = stream.read(MAX_LINE_BYTES + 1)
        # All of it (one document, or JSON Lines), or a document too long to hold.
        data = _without_bom(start) if len(start) <= MAX_LINE_BYTES else None
        if path.suffix == ".json" or (data is not None and not _read_as_lines(data)):
            yield 1, data
            return
    for number, line in enumerate(lines_of(stream.read, start), 1):
        if isinstance(line, int):  # the length of a line too long to hold
            yield number, None
            continue
        text = _without_bom(line) if number == 1 else line  # only the start of the input
        if text.strip():
            # Without its line break, so an error at the end of the line stays on that line.
            yield number, text.rstrip(b"\r\n")


def _read_as_lines(data: bytes) -> bool:
    """Whether a file of another name than ``.json`` and ``.jsonl`` is JSON Lines: not one
    document, and looking like lines (``_looks_like_lines``)."""
    try:
        json.loads(data, parse_int=_read_int)  # a long integer: not Python's slow parse
    except (ValueError, RecursionError):  # not one document, or one too deep to parse
        return _looks_like_lines(data)
    return False


def _looks_like_lines(data: bytes) -> bool:
    """Whether text that is not one JSON document is JSON Lines: its first line holds a whole
    value (by its brackets, outside strings) and other lines follow, or its first line is cut
    or broken (a sample taken with ``tail -c``, a log rotated mid-line) and one of the next few
    lines is a JSON object on its own while none of them reads as a part of a document written
    over several lines. Such a document, too deep to parse or broken, begins with a line that is
    not a whole value, and has lines after it that are indented, a bracket on its own, or end
    with a comma."""
    found = _NOT_BLANK.search(data)
    start = 0 if found is None else found.start()
    end = data.find(b"\n", start)
    if end < 0 or _NOT_BLANK.search(data, end) is None:  # nothing follows the first line
        return False
    first = _STRINGS.sub(b"", data[start:end])
    opened = first.count(b"[") + first.count(b"{")
    if b'"' not in first and opened == first.count(b"]") + first.count(b"}"):
        return True
    following = list(_next_lines(data, end, _LINES_LOOKED_AT))
    return any(map(_is_object, following)) and not any(map(_is_a_part, following))


_LINES_LOOKED_AT = 3  # the lines after a broken first one that may show the file is JSON Lines


def _next_lines(data: bytes, end: int, count: int) -> Iterator[bytes]:
    """Up to ``count`` lines that are not blank after the line break at ``end``."""
    while count and end >= 0:
        start = end + 1
        end = data.find(b"\n", start)
        line = data[start:] if end < 0 else data[start:end]
        if line.strip():
            count -= 1
            yield line


def _is_a_part(line: bytes) -> bool:
    """Whether ``line`` reads as a line of a pretty-printed document: indented, a bracket on
    its own, or an item followed by its comma."""
    text = line.rstrip()
    return line[:1] in (b" ", b"\t") or text.endswith(b",") or text in (b"[", b"]", b"{", b"}")


def _is_object(line: bytes) -> bool:
    """Whether ``line`` is one JSON object on its own from its first column (a line of a
    pretty-printed document is indented, or a part of one: a key and its value, a bracket)."""
    if not line.startswith(b"{"):
        return False
    try:
        return isinstance(json.loads(line, parse_int=_read_int), dict)
    except (ValueError, RecursionError):
        return False


_NOT_BLANK = re.compile(rb"[^ \t\r\n]")  # JSON's white space is these four
# A complete JSON string on one line: what is inside cannot open or close a value.
_STRINGS = re.compile(rb'"(?:[^"\\\n]|\\.)*"')


@dataclass
class Report:
    """What ``check`` found in one file."""

    documents: int = 0
    invalid: int = 0


def problems(path: Path, stream: BinaryIO, schema: str, report: Report) -> Iterator[str]:
    """Yield one line per problem in the file as it is read; count documents into ``report``."""
    validator = _validator(schema)
    name = visible(str(path))  # a name may hold a line break or a terminal's escape
    for line, data in _documents(path, stream):
        report.documents += 1
        if data is None:
            report.invalid += 1
            yield f"{name}:{line}: {TOO_LONG}"
            continue
        try:
            document = _decoded(data)
            value, odd_numbers, too_long = _loads(document)
        except _NotText as error:
            report.invalid += 1
            yield f"{name}:{line}: {error}"
            continue
        except ValueError as error:
            report.invalid += 1
            reason = getattr(error, "msg", str(error))
            yield f"{name}:{line + getattr(error, 'lineno', 1) - 1}: not JSON: {reason}"
            continue
        except RecursionError:
            report.invalid += 1
            yield f"{name}:{line}: {_TOO_DEEP}"
            continue
        refused = _unreadable(document)
        if refused is not None:  # first: import stops there, whatever else the document holds
            yield f"{name}:{line + refused[0] - 1}: {refused[1]}"
        elif schema == "memory_item":
            refused = _too_deep_to_store(document, value)
            if refused is not None:
                yield f"{name}:{line + refused[0]}: {refused[1]}"
        try:
            located = _checked(
                validator, document, value, odd_numbers=odd_numbers, too_long=too_long
            )
        except RecursionError:
            report.invalid += 1
            yield f"{name}:{line}: {_TOO_DEEP}"
            continue
        report.invalid += bool(located) or refused is not None
        for where, at, message in located:
            yield f"{name}:{line + where}: {at}: {visible(message)}"


def _checked(
    validator: Any, document: str, value: Any, *, odd_numbers: bool, too_long: int
) -> list[tuple[int, str, str]]:
    """The problems of the parsed ``document``, each as (line within it from 0, JSON path,
    message), in the order a person reads it: by where its value begins, then by message.
    ``odd_numbers``, ``too_long``: what ``_loads`` found of numbers that are not finite."""
    not_finite = list(_not_finite(value)) if odd_numbers else []
    # An integer too long to read stands for itself (_Unread): what the schema says at its own
    # path is not its problem, the one _not_finite reports is; nor, of an infinity, its bounds.
    unread = {path for path in not_finite if _at(value, path).__class__ is _Unread}
    infinite = set(not_finite) - unread
    found = []
    for problem in validator.iter_errors(value):
        path = tuple(problem.absolute_path)
        if path in unread or (path in infinite and problem.validator in _BOUNDS):
            continue
        message = problem.message
        if problem.validator == "unevaluatedProperties":
            message = _unknown_properties(validator.schema, problem.instance)
            if message is None:
                continue
        found.append((path, message))
    if too_long > len(unread):  # one under a key given again later: not in ``value``
        message = (
            f"an integer of more than {_most_digits()} digits, under a key given again later, "
            "is more than lionmem reads"
        )
        found.append(((), message))
    if not found and not not_finite:
        return []
    offsets = _offsets(document, [path for path, _ in found] + not_finite)
    found += [(path, _not_json_number(document, offsets[path])) for path in not_finite]
    # A set: one problem found through two schemas (the root type of MemoryItem and of the
    # Element it extends) is printed once.
    ordered = sorted({(offsets[path], json_path(path), message) for path, message in found})
    breaks = [match.start() for match in re.finditer("\n", document)]
    return [(bisect.bisect(breaks, offset), at, message) for offset, at, message in ordered]


def _unknown_properties(schema: dict[str, Any], instance: Any) -> str | None:
    """The message for the keys of ``instance`` that no part of ``schema`` declares, or ``None``.

    ``unevaluatedProperties`` also counts a declared property whose value its own schema
    refuses (MemoryItem's ``id``, declared by the Element schema it extends, when it is not a
    UUID): that value's own problem is reported where it stands, and the key is not unknown.
    """
    declared = _declared(schema["$id"])
    unknown = sorted((key for key in instance if key not in declared), key=str)
    if not unknown:
        return None
    names = ", ".join(repr(key) for key in unknown)
    return f"Unevaluated properties are not allowed ({names} {'was' if len(unknown) == 1 else 'were'} unexpected)"


@cache
def _declared(schema_id: str) -> frozenset[str]:
    """The property names the root of the shipped schema ``schema_id`` declares: its own, and
    those of the parts of its ``allOf`` (one level of ``$ref``, as the shipped schemas use)."""
    resolver = _registry().resolver(base_uri=schema_id)
    root = resolver.lookup(schema_id).contents
    names = set(root.get("properties", {}))
    for part in root.get("allOf", []):
        named = resolver.lookup(part["$ref"]).contents if "$ref" in part else part
        names.update(named.get("properties", {}))
    return frozenset(names)


def _run(args: argparse.Namespace) -> int:
    schema = resolve_schema_name(args.schema)
    require_extra("jsonschema")
    invalid = 0
    for name in args.files:
        stream = open_file(name, "JSON file")
        report = Report()
        with stream:
            for problem in problems(Path(name), stream, schema, report):
                say(problem)
        invalid += report.invalid
        documents = plural(report.documents, "document")
        say(f"{visible(name)}: {documents}, {report.invalid} invalid ({schema})")
    return PROBLEM if invalid else OK


# ``commands`` is argparse's subparsers action, whose class argparse keeps private.
def register(commands: Any) -> None:
    """Add ``validate`` to ``commands``."""
    parser = commands.add_parser(
        "validate",
        help="check JSON or JSON Lines documents against a shipped schema",
        description=(
            "Check every document of each FILE against a JSON schema shipped with lionmem; "
            "print each problem with its line and JSON path. Exit 1 if any is invalid."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="a .json or .jsonl file")
    parser.add_argument(
        "--schema",
        default="memory_item",
        metavar="NAME",
        help="memory_item (default), memory_query, or any name lionmem schema lists",
    )
    parser.set_defaults(handler=_run)
