"""``lionmem conformance MODULE:FACTORY [--json FILE]``: the conformance suite from a shell.

``MODULE:FACTORY`` names something importable that gives a ``MemoryAdapterHarness``: a callable
(class or function, sync or async) called with no arguments, or a harness object itself. The
suite runs, the report is printed as a table, and with ``--json`` also written as JSON. Exit
status: 0 when no case failed, 1 when one did or the harness's ``close()`` failed, 2 when the
harness could not be loaded (its module or factory raised, or gave no harness) or an option is
out of range.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

from lionmem.cli._errors import CommandError, refuse_empty, refuse_trailing_slash
from lionmem.cli._output import say
from lionmem.cli._signals import run
from lionmem.conformance._options import case_timeout, examples_count

__all__ = ["load_harness", "register"]


# ``commands`` is argparse's subparsers action, whose class argparse keeps private.
def register(commands: Any) -> None:
    """Add the ``conformance`` subcommand to ``commands`` (the result of ``add_subparsers``)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "conformance",
        help="run the ADR-0093 adapter conformance suite against a harness",
        description=(
            "Run lionmem's adapter conformance suite against the harness that MODULE:FACTORY "
            "gives, print the report and exit 1 when a case or the harness's close() failed."
        ),
    )
    parser.add_argument(
        "target",
        metavar="MODULE:FACTORY",
        help="e.g. lionmem.conformance.fake:FakeHarness (called with no arguments)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE")
    parser.add_argument("--seed", type=int, help="seed of the randomised cases")
    parser.add_argument(
        "--examples",
        type=examples_count,
        help="random examples of the reference-search profile (0 or more)",
    )
    parser.add_argument(
        "--timeout",
        type=case_timeout,
        metavar="SECONDS",
        help=(
            "seconds one case (or the harness's close()) may take before it fails as hung "
            "(default 300; 0: no limit)"
        ),
    )
    parser.add_argument(
        "--case",
        action="append",
        dest="cases",
        metavar="NAME",
        help="run only this case (repeatable); default: every case",
    )
    parser.set_defaults(handler=_run)


def _failure(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _resolve(target: str) -> Any:
    module_name, separator, attribute = target.partition(":")
    if not separator or not module_name or not attribute:
        msg = f"expected MODULE:FACTORY, got {target!r}"
        raise LookupError(msg)
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as error:
        msg = f"cannot import {module_name!r}: {error}"
        raise LookupError(msg) from error
    except (Exception, SystemExit) as error:  # anything the module raises while it is imported
        msg = f"cannot import {module_name!r}: importing it raised {_failure(error)}"
        raise LookupError(msg) from error
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            msg = f"{module_name!r} has no attribute {attribute!r}"
            raise LookupError(msg) from None
    return found


async def load_harness(target: str) -> Any:
    """Return the harness that ``MODULE:FACTORY`` gives (calling and awaiting as needed)."""
    from lionmem.conformance import MemoryAdapterHarness

    found = _resolve(target)
    if isinstance(found, MemoryAdapterHarness) and not isinstance(found, type):
        return _checked(target, found)
    if not callable(found):
        msg = f"{target} is neither a harness nor a callable that returns one"
        raise LookupError(msg)
    try:
        harness = found()
        if inspect.isawaitable(harness):
            harness = await harness
    except (Exception, SystemExit) as error:  # whatever the factory raises, there is no harness
        msg = f"{target}() raised {_failure(error)}"
        raise LookupError(msg) from error
    if not isinstance(harness, MemoryAdapterHarness):
        msg = f"{target}() returned a value of type {type(harness).__name__}, not a MemoryAdapterHarness"
        raise LookupError(msg)
    return _checked(target, harness)


def _checked(target: str, harness: Any) -> Any:
    """Return ``harness`` if the suite can run it; else raise ``LookupError`` saying why."""
    from lionmem.conformance._runner import check_harness

    try:
        check_harness(harness)
    except TypeError as error:
        raise LookupError(f"{target}: {error}") from None
    return harness


async def _main(args: argparse.Namespace) -> int:
    from lionmem.conformance import CASE_TIMEOUT, DEFAULT_SEED, REFERENCE_EXAMPLES, case_named, run

    if args.json is not None:  # before the suite runs, not once its report is lost
        refuse_empty(args.json, "file", "--json")
        report_path = Path(args.json)
        if report_path.is_dir():
            msg = f"--json {args.json} is a directory, not a file"
            raise CommandError(msg)
        refuse_trailing_slash(args.json, "file", "--json")
        if not report_path.parent.is_dir():
            msg = f"--json {args.json}: there is no directory {str(report_path.parent)!r}"
            raise CommandError(msg)
    try:
        for name in args.cases or ():
            case_named(name)
        harness = await load_harness(args.target)
    except LookupError as error:
        raise CommandError(error.args[0]) from None
    try:
        report = await run(
            harness,
            seed=DEFAULT_SEED if args.seed is None else args.seed,
            examples=REFERENCE_EXAMPLES if args.examples is None else args.examples,
            cases=args.cases,
            timeout=CASE_TIMEOUT if args.timeout is None else (args.timeout or None),
        )
    except SystemExit as stop:  # not a pass: the suite did not finish
        msg = f"the harness raised SystemExit({stop.code!r}) while the suite ran; no report"
        raise CommandError(msg) from None
    if args.json is not None:  # first: a table that cannot be printed loses no report
        Path(args.json).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    say(report.format_table())
    if args.json is not None:
        say(f"report written to {args.json}")
    return 0 if report.ok else 1


def _run(args: argparse.Namespace) -> int:
    # The current directory first, as `python -m` has it, so that local test harnesses import.
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return run(_main(args))
    except SystemExit as stop:  # raised in a task (wait_for, create_task), past _main's own check
        msg = f"the harness raised SystemExit({stop.code!r}) while the suite ran; no report"
        raise CommandError(msg) from None
