"""``validate FILE...``: JSON or JSON Lines documents checked against the shipped JSON schemas.

A ``.jsonl`` or ``.ndjson`` file is JSON Lines, a ``.json`` file one document, and any other
file one document if it parses as one, else JSON Lines. Every problem is printed as ``FILE:LINE: PATH: message``
with ``PATH`` a JSON path (``$.tags[0]``); the schema is ``--schema`` (default ``memory_item``).
Validation is JSON Schema draft 2020-12 with format checking on, cross-file ``$ref`` resolved:
the verdicts of the schema vectors. Needs jsonschema (the ``cli`` extra).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from functools import cache
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed omits it
from pathlib import Path
from typing import Any

from lionmem._schemas import schema_path, schemas
from lionmem.cli._errors import OK, PROBLEM, CommandError, require_extra
from lionmem.cli._schema import resolve_schema_name

__all__ = ["json_path", "problems", "register"]

_LINES = (".jsonl", ".ndjson")


@cache
def _validator(name: str) -> Any:
    require_extra("jsonschema")
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources = []
    for contents in schemas().values():
        resources.append((contents["$id"], Resource.from_contents(contents)))
    registry: Registry[Any] = Registry().with_resources(resources)
    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    return Draft202012Validator(
        schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def json_path(parts: Any) -> str:
    """Return the JSON path of a sequence of keys and indexes: ``$``, ``$.tags[0]``, ``$["a b"]``."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}"
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def _located(text: str, parts: list[Any]) -> int:
    """Return the offset in the JSON ``text`` of the value at ``parts`` (keys and indexes)."""
    decoder = json.JSONDecoder()
    position = _skip(text, 0)
    for part in parts:
        opener = text[position]
        position = _skip(text, position + 1)
        if opener == "[":
            for _ in range(int(part)):
                _, position = decoder.raw_decode(text, position)
                position = _skip(text, _skip(text, position) + 1)
        else:
            while text[position] != "}":
                key, position = scanstring(text, position + 1)
                position = _skip(text, _skip(text, position) + 1)
                if key == part:
                    break
                _, position = decoder.raw_decode(text, position)
                position = _skip(text, position)
                if text[position] == ",":
                    position = _skip(text, position + 1)
    return position


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _documents(path: Path, text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line, text)`` of every document in the file."""
    as_lines = path.suffix in _LINES
    if not as_lines and path.suffix != ".json":
        try:
            json.loads(text)
        except ValueError:
            as_lines = True
    if not as_lines:
        yield 1, text
        return
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield number, line


def problems(path: Path, text: str, schema: str) -> tuple[int, int, list[str]]:
    """Return the number of documents in ``text``, how many are invalid, and their problems."""
    validator = _validator(schema)
    found: list[str] = []
    count = invalid = 0
    for line, document in _documents(path, text):
        count += 1
        try:
            value = json.loads(document)
        except ValueError as error:
            invalid += 1
            reason = getattr(error, "msg", str(error))
            where = line + getattr(error, "lineno", 1) - 1
            found.append(f"{path}:{where}: not JSON: {reason}")
            continue
        located = []
        for problem in validator.iter_errors(value):
            parts = list(problem.absolute_path)
            where = line + document.count("\n", 0, _located(document, parts))
            located.append((where, json_path(parts), problem.message))
        invalid += bool(located)
        # In the order a person reads the file: by line, then path, then message.
        found.extend(f"{path}:{where}: {at}: {message}" for where, at, message in sorted(located))
    return count, invalid, found


def _run(args: argparse.Namespace) -> int:
    schema = resolve_schema_name(args.schema)
    require_extra("jsonschema")
    invalid = 0
    for name in args.files:
        path = Path(name)
        if path.is_dir():
            msg = f"{name} is a directory, not a JSON file"
            raise CommandError(msg)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            msg = f"{name}: no such file"
            raise CommandError(msg) from None
        except UnicodeDecodeError as error:
            msg = f"{name}: not UTF-8 text ({error.reason} at byte {error.start})"
            raise CommandError(msg) from None
        count, bad, found = problems(path, text, schema)
        for line in found:
            print(line)
        invalid += bad
        documents = f"{count} document{'' if count == 1 else 's'}"
        print(f"{name}: {documents}, {bad} invalid ({schema})")
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
