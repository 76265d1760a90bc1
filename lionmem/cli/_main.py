"""The parser and dispatch of the ``lionmem`` command: every subcommand is one module in ``COMMANDS``.

A command module has ``register(commands)``, which adds its subparsers (each with
``set_defaults(handler=...)``, a function of the parsed arguments that returns the exit
status); adding a command is one module and one line in ``COMMANDS``. ``main`` turns
``CommandError``, ``StoreSelectionError``, store errors and failed file operations (a full
disk) into one line on stderr and exit status 2, so a person sees what to fix and never a
traceback. Ctrl-C ends a command with ``interrupted`` and exit status 130; SIGTERM, handled as
Ctrl-C (``lionmem.cli._signals``), with ``terminated`` and 143.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING

from lionmem.cli._errors import PROBLEM, USAGE, CommandError
from lionmem.cli._output import descriptor_named, visible
from lionmem.cli._signals import Stop, sigterm_as_ctrl_c
from lionmem.cli._store import StoreSelectionError
from lionmem.errors import MemoryAdapterError

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["COMMANDS", "build_parser", "main"]

# One line per command module, in the order ``lionmem --help`` lists them.
COMMANDS: tuple[str, ...] = (
    "lionmem.cli._items",
    "lionmem.cli._transfer",
    "lionmem.cli._validate",
    "lionmem.cli._schema",
    "lionmem.cli._conformance",
    "lionmem.cli._mcp",
)

_DESCRIPTION = (
    "Look into a lionmem store, load data into it, move it between stores and check JSON "
    "documents. Exit status: 0 done, 1 the work found a problem, 2 usage or store error."
)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that writing its help, version or usage raises when it fails:
    argparse ignores the error, so ``lionmem --help >/dev/full`` ended with status 0 and
    nothing written. Its subcommands' parsers are of this class too."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        stream = file or sys.stderr
        if message and stream is not None:  # None: the stream is closed, nothing to tell
            stream.write(message)
            getattr(stream, "flush", lambda: None)()


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every ``lionmem`` command."""
    parser = _Parser(prog="lionmem", description=_DESCRIPTION)
    from lionmem import __version__

    parser.add_argument("--version", action="version", version=f"lionmem {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        import_module(module).register(commands)
    return parser


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command``, one of ``parser``'s subcommands."""
    # argparse lists a parser's subcommands only in its private action list.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[command]
            return found
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``lionmem`` command with ``argv`` (default ``sys.argv[1:]``); return its exit status."""
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            # Said with the command's usage when all of it came after the command's name.
            given = list(sys.argv[1:] if argv is None else argv)
            after = given[given.index(args.command) + 1 :] if args.command in given else []
            told = _command_parser(parser, args.command) if set(extra) <= set(after) else parser
            told.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exit_:  # --help, --version and usage errors
        return exit_.code if isinstance(exit_.code, int) else USAGE
    except BrokenPipeError:  # the reader of the help went away (lionmem --help | head -1)
        _drop_stdout()
        return PROBLEM
    except OSError as error:  # the help, version or usage could not be written (a full disk)
        with contextlib.suppress(OSError):
            _drop_stdout()
            print(f"lionmem: writing the output failed: {error.strerror or error}", file=sys.stderr)
        return USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    with sigterm_as_ctrl_c() as stop:
        return _run(handler, args, stop)


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace, stop: Stop) -> int:
    """Run ``handler``; turn the failures ``main`` describes into a line and an exit status."""
    try:
        _check_streams(args)
        return handler(args)
    except (CommandError, StoreSelectionError, MemoryAdapterError) as error:
        text = " ".join(str(error).split()) or type(error).__name__
        # A file name or a stored value in the message: shown, never acted on by the terminal.
        print(f"lionmem {args.command}: {visible(text)}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (handled as Ctrl-C)
        print(f"lionmem {args.command}: {stop.word}", file=sys.stderr)
        return stop.status
    except BrokenPipeError:
        # The reader went away (``lionmem export | head``): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        _drop_stdout()
        return PROBLEM
    except OSError as error:
        # A file or stream the command could not write or read: a full disk, a file-size
        # limit, a path that is not a directory.
        reason = error.strerror or str(error) or type(error).__name__
        text = f"{error.filename}: {reason}" if error.filename is not None else reason
        try:
            sys.stdout.flush()
        except OSError:  # the output itself failed: what is left of it cannot be written
            _drop_stdout()
        print(f"lionmem {args.command}: {visible(text)}", file=sys.stderr)
        return USAGE


def _check_streams(args: argparse.Namespace) -> None:
    """Give a closed stderr (``2>&-``) the null device, since print(file=None) would write the
    messages to stdout; raise ``CommandError`` for a closed stdout (``>&-``) unless ``--out``
    carries the data, as the result would be lost (``mcp`` over HTTP has no use of stdout).
    Over stdio, ``mcp`` answers on stdout, and a closed stdin (``<&-``) gets the null device:
    no requests, so the server ends at once."""
    stdio = args.command == "mcp" and getattr(args, "http", None) is None
    if sys.stdin is None and stdio:
        # Before any other file: the null device takes descriptor 0, which the server reads, so
        # that no descriptor opened later (the event loop's) takes its number.
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115  # open until exit
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115  # open until exit
    if sys.stdout is None and stdio:
        msg = "standard output is closed: the server answers on it; redirect it, or serve --http"
        raise CommandError(msg)
    if sys.stdout is None and args.command != "mcp":
        out = getattr(args, "out", None)
        if out in (None, "-") or descriptor_named(str(out)) == 1:
            given = "give --out, or " if hasattr(args, "out") else ""
            names = f" (--out {out} names it)" if out not in (None, "-") else ""
            msg = (
                f"standard output is closed{names}: {given}redirect it "
                "(to /dev/null to drop what the command prints)"
            )
            raise CommandError(msg)
        # Standard output's descriptor gets the null device, so no file opened later takes it.
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  # the summary line


def _drop_stdout() -> None:
    """Send stdout to the null device, so the flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
