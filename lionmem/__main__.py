"""Command line: ``python -m lionmem COMMAND`` (``demo``, ``schema``, ``conformance``; later issues add more)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from lionmem._cli_conformance import add_conformance_command
from lionmem._cli_schema import add_schema_command


def _demo(_: argparse.Namespace) -> int:
    from lionmem.demo import main

    main()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lionmem", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser("demo", help="build items and queries and show what lionmem does")
    demo.set_defaults(handler=_demo)
    add_schema_command(commands)
    add_conformance_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
