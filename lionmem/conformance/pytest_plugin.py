"""pytest plugin: one fixture named ``memory_adapter_harness`` turns into the whole conformance suite.

The fixture may also be named so with ``pytest.fixture(name="memory_adapter_harness")``.

Installed with lionmem (entry point ``pytest11``), so an adapter's test module needs only::

    @pytest.fixture
    def memory_adapter_harness():
        return MyHarness()  # a lionmem.conformance.MemoryAdapterHarness

Beside that fixture the plugin adds ``TestMemoryAdapterConformance``, one test per case (failed
cases fail with the reason, inapplicable ones skip). The harness is closed after every case, so
the fixture must make a new one per test (function scope, the default): a harness handed over
again after it was closed fails the test. Options: ``--lionmem-seed``,
``--lionmem-examples``, ``--lionmem-timeout``; without auto-loading, ``-p lionmem.conformance.pytest_plugin``.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING, Any

import pytest

from lionmem.conformance._options import case_timeout, examples_count

if TYPE_CHECKING:
    from lionmem.conformance._harness import MemoryAdapterHarness
    from lionmem.conformance._report import CaseResult

__all__ = ["FIXTURE", "SUITE_CLASS"]

FIXTURE = "memory_adapter_harness"
"""The fixture name that switches the suite on in a module or class."""
SUITE_CLASS = "TestMemoryAdapterConformance"
"""The name of the test class the plugin adds beside the fixture."""

_CLOSED: dict[int, weakref.ref[Any]] = {}
"""The harnesses the plugin has closed, by identity (those that accept weak references): a new
harness equal to a closed one is not the closed one."""
REUSED = (
    "the memory_adapter_harness fixture returned a harness the suite already closed after an "
    "earlier case; the plugin closes the harness after every case, so the fixture must make a "
    "new one for every test (function scope, the default)"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the suite's options: seed and example count of the randomised cases, per-case timeout."""
    group = parser.getgroup("lionmem-conformance", "lionmem adapter conformance suite")
    group.addoption(
        "--lionmem-seed",
        type=int,
        default=None,
        help="seed of the randomised conformance cases (default: lionmem's fixed seed)",
    )
    group.addoption(
        "--lionmem-examples",
        type=examples_count,
        default=None,
        help="random examples of the reference-search profile (default: 200)",
    )
    group.addoption(
        "--lionmem-timeout",
        type=case_timeout,
        default=None,
        help="seconds a conformance case, or the harness's close(), may take (default: 300; 0: no limit)",
    )


async def _run_one(
    harness: MemoryAdapterHarness,
    case: str,
    seed: int,
    examples: int,
    timeout: float | None = None,
) -> CaseResult:
    """Run ``case`` and close the harness within ``timeout``; a failed close fails the result."""
    from lionmem.conformance._runner import close_harness, run_case

    try:
        result = await run_case(harness, case, seed=seed, examples=examples, timeout=timeout)
    finally:
        close_failure = await close_harness(harness, timeout)
    if close_failure is None:
        return result
    reason = (
        f"{result.reason}; then {close_failure}" if result.status == "failed" else close_failure
    )
    return result.model_copy(update={"status": "failed", "reason": reason})


def _check(case: str, harness: Any, config: pytest.Config) -> None:
    """Run one case against ``harness``; fail or skip the current test with the case's reason."""
    from lionmem.conformance._runner import (
        CASE_TIMEOUT,
        DEFAULT_SEED,
        REFERENCE_EXAMPLES,
        check_harness,
    )

    if _was_closed(harness):
        pytest.fail(REUSED, pytrace=False)
    try:
        check_harness(harness)
    except TypeError as error:
        pytest.fail(str(error), pytrace=False)
    seed = config.getoption("lionmem_seed")
    examples = config.getoption("lionmem_examples")
    timeout = config.getoption("lionmem_timeout")
    result = asyncio.run(
        _run_one(
            harness,
            case,
            DEFAULT_SEED if seed is None else seed,
            REFERENCE_EXAMPLES if examples is None else examples,
            CASE_TIMEOUT if timeout is None else (timeout or None),
        )
    )
    _remember_closed(harness)
    if result.status == "failed":
        pytest.fail(f"[{result.row}] {result.reason}", pytrace=False)
    if result.status == "not_applicable":
        pytest.skip(f"not applicable: {result.reason}")


def _was_closed(harness: Any) -> bool:
    """Whether the plugin already closed this very ``harness`` after an earlier case."""
    closed = _CLOSED.get(id(harness))
    return closed is not None and closed() is harness


def _remember_closed(harness: Any) -> None:
    """Note that the plugin closed ``harness``, when it accepts a weak reference (the entry
    goes when the harness does)."""
    key = id(harness)
    with contextlib.suppress(TypeError):  # no weak references to it: it cannot be tracked
        _CLOSED[key] = weakref.ref(harness, lambda _: _CLOSED.pop(key, None))


def _suite_for(owner: object) -> type:
    """Return a new suite class for ``owner`` (a module or class), with its own test function."""
    from lionmem.conformance._cases import CASES

    # A fresh function per suite: marks are stored on the function object, so sharing one
    # between two modules would parametrize it twice.
    @pytest.mark.parametrize("conformance_case", [case.name for case in CASES])
    def test_conformance(
        self: object,
        conformance_case: str,
        memory_adapter_harness: Any,
        request: pytest.FixtureRequest,
    ) -> None:
        """The adapter passes this conformance case (or the case does not apply to it)."""
        _check(conformance_case, memory_adapter_harness, request.config)

    module = getattr(owner, "__module__", None) or getattr(owner, "__name__", __name__)
    return type(
        SUITE_CLASS,
        (),
        {
            "__module__": module,
            "__doc__": "One test per conformance case, against the memory_adapter_harness fixture.",
            "test_conformance": test_conformance,
        },
    )


def _fixture_name(obj: object) -> str | None:
    """The name ``pytest.fixture(name=...)`` gave the fixture ``obj``, if it is one."""
    # pytest keeps the fixture's marker on what the decorator returns: as
    # ``_fixture_function_marker`` since pytest 8.4, ``_pytestfixturefunction`` before.
    # Every object of every test module comes here: one whose attributes raise (a proxy outside
    # its context) is no fixture, and must not break the collection of its module.
    try:
        marker = getattr(obj, "_fixture_function_marker", None) or getattr(
            obj, "_pytestfixturefunction", None
        )
        name = getattr(marker, "name", None)
    except Exception:
        return None
    return name if isinstance(name, str) else None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> pytest.Class | None:
    """Add the suite class beside a ``memory_adapter_harness`` fixture definition."""
    if FIXTURE not in (name, _fixture_name(obj)):
        return None
    owner = collector.obj
    if SUITE_CLASS in vars(owner):
        return None  # the author placed (or subclassed) the suite here already
    # pytest collects a class by looking its name up on the module (or class) it belongs to.
    setattr(owner, SUITE_CLASS, _suite_for(owner))
    suite: pytest.Class = pytest.Class.from_parent(collector, name=SUITE_CLASS)
    return suite
