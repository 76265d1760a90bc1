"""``lionmem schema [NAME] [--out DIR]``: the exact JSON schemas of the installed lionmem.

A client in another language fetches the schemas of the very version it talks to:
``schema NAME`` prints one file, ``schema --out DIR`` writes every file (or only NAME) into DIR,
and ``schema`` alone lists the names. The bytes are those of the shipped files, unchanged.
NAME is a file name (``memory_item``, ``.json`` optional) or a schema title (``MemoryItem``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lionmem._schemas import schema_path, schemas
from lionmem.cli._errors import CommandError
from lionmem.cli._output import flush_all, say, write_all

__all__ = ["register", "resolve_schema_name"]


# ``commands`` is argparse's subparsers action, whose class argparse keeps private.
def register(commands: Any) -> None:
    """Add the ``schema`` subcommand to ``commands`` (the result of ``add_subparsers``)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "schema",
        help="print or write the JSON schemas of this lionmem version",
        description="Print one JSON schema of this lionmem version, list them, or write them to a folder.",
    )
    parser.add_argument(
        "name",
        nargs="?",
        help='a schema such as memory_item (".json" optional) or MemoryItem; without it, all schemas',
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write <name>.json files into DIR (created if missing) instead of printing",
    )
    parser.set_defaults(handler=_run)


def resolve_schema_name(name: str) -> str:
    """Return the file name (without ``.json``) of the schema called ``name`` or titled so.

    Raises ``CommandError`` naming the available schemas when there is none.
    """
    shipped = schemas()
    for stem, schema in shipped.items():
        if name in (stem, f"{stem}.json", schema.get("title")):
            return stem
    try:
        schema_path(name)
    except LookupError as error:
        raise CommandError(error.args[0]) from None
    raise AssertionError  # pragma: no cover - schema_path finds no name schemas() lacks


def _run(args: argparse.Namespace) -> int:
    names = sorted(schemas())
    if args.name is not None:
        names = [resolve_schema_name(args.name)]
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name in names:
            target = args.out / f"{name}.json"
            with target.open("wb") as written:
                write_all(written, schema_path(name).read_bytes())
            say(target)
        return 0
    if args.name is None:
        say("\n".join(names))
        return 0
    # The file's own bytes, whatever the terminal's encoding.
    sys.stdout.flush()
    write_all(sys.stdout.buffer, schema_path(names[0]).read_bytes())
    flush_all(sys.stdout.buffer)
    return 0
