"""Running the cases against a harness and collecting the typed report."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from pydantic import ValidationError

from lionmem.conformance._cases import CASES, case_named
from lionmem.conformance._context import (
    Case,
    CaseContext,
    CaseFailed,
    CaseNotApplicable,
    checked_manifest,
    coroutine_method,
)
from lionmem.conformance._harness import MemoryAdapterHarness
from lionmem.conformance._report import CaseResult, CaseStatus, ConformanceReport
from lionmem.protocol import ExternalMemoryStore
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest

__all__ = [
    "CASE_TIMEOUT",
    "DEFAULT_SEED",
    "REFERENCE_EXAMPLES",
    "close_harness",
    "run",
    "run_case",
]

DEFAULT_SEED = 20260709
"""Seed of the randomised cases when none is given: every run checks the same examples."""
REFERENCE_EXAMPLES = 200
"""Random examples of the reference-search profile (each: one store, five queries)."""
CASE_TIMEOUT = 300.0
"""Seconds one case (or the harness's close()) may take before it fails as hung. The
reference-search profile is the longest case (about 200 resets, up to 2,400 writes and 1,000
searches): a networked adapter may need more, or ``None`` for no limit."""


_REQUIRED = (
    "make_store",
    "reset",
    "make_search_index_visible",
    "make_transport_unavailable",
    "close",
)
"""The methods every harness has."""
_OPTIONAL = ("make_writes_rejected", "make_responses_malformed", "make_foreign_record")
"""The hooks a harness may offer for the cases that need them."""


def check_harness(harness: object) -> None:
    """Raise ``TypeError`` naming what ``harness`` lacks to be a harness the suite can run."""
    if isinstance(harness, type):  # a class has the methods, unbound
        name = harness.__qualname__
        msg = f"the harness must be an instance, got the class {name}; call it first, e.g. {name}()"
        raise TypeError(msg)
    if not isinstance(harness, MemoryAdapterHarness):
        missing = [name for name in _REQUIRED if not hasattr(harness, name)]
        msg = f"{type(harness).__name__} is not a MemoryAdapterHarness (missing: {', '.join(missing)})"
        raise TypeError(msg)
    hooks = (*_REQUIRED, *_OPTIONAL)
    plain = [name for name in hooks if not _is_async(getattr(harness, name, None))]
    if plain:
        verb = "is not a coroutine method" if len(plain) == 1 else "are not coroutine methods"
        msg = (
            f"{type(harness).__name__}.{', .'.join(plain)} {verb} (async def): the suite awaits "
            "every harness method"
        )
        raise TypeError(msg)


def _is_async(method: object) -> bool:
    """Whether ``method`` is a coroutine method (``coroutine_method``); ``None`` (a hook left
    out) counts as one."""
    return method is None or coroutine_method(method)


_STOPS_THE_RUN = (KeyboardInterrupt, SystemExit, GeneratorExit)
"""What ends the run wherever it is raised (Ctrl-C, an exit, the run's coroutine closed); any
other exception of the adapter or the harness, a ``BaseException`` subclass of its own included,
fails the case it happens in."""


def _cancelled_from_outside() -> bool:
    """Whether the running task itself is being cancelled (not merely met a CancelledError).

    An adapter may raise ``asyncio.CancelledError`` of its own (a client tearing down its task
    group, say): that is the adapter's failure. A cancellation of the run itself must propagate.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _unexpected(error: BaseException) -> str:
    """Return the failure reason for an error a case did not expect; re-raise a real cancellation."""
    if isinstance(error, asyncio.CancelledError):
        if _cancelled_from_outside():
            raise error
        return f"unexpected CancelledError (the run was not cancelled): {error}"
    return f"unexpected {type(error).__name__}: {error}"


async def _open(
    harness: MemoryAdapterHarness, expected: MemoryAdapterManifest | None = None
) -> tuple[ExternalMemoryStore, MemoryAdapterManifest]:
    """Reset the harness and return a fresh store with its manifest (a real one, ``expected`` if given)."""
    await harness.reset()
    store = await harness.make_store()
    return store, checked_manifest(store, expected)


async def _execute(
    case: Case,
    harness: MemoryAdapterHarness,
    manifest: MemoryAdapterManifest | None,
    *,
    seed: int,
    examples: int,
) -> str | None:
    store, manifest = await _open(harness, manifest)
    context = CaseContext(case, harness, store, manifest, seed=seed, examples=examples)
    return await case.check(context)


async def run_case(  # noqa: PLR0913 - the harness, the case and four keyword-only options
    harness: MemoryAdapterHarness,
    case: Case | str,
    *,
    seed: int = DEFAULT_SEED,
    examples: int = REFERENCE_EXAMPLES,
    timeout: float | None = CASE_TIMEOUT,
    manifest: MemoryAdapterManifest | None = None,
) -> CaseResult:
    """Reset the harness and run one case; never raises for the adapter's behaviour.

    With ``manifest`` (the one a report records), a store showing another manifest fails the case.
    """
    chosen = case_named(case) if isinstance(case, str) else case

    def result(status: CaseStatus, reason: str | None) -> CaseResult:
        return CaseResult(case=chosen.name, row=chosen.row, status=status, reason=reason)

    try:
        async with asyncio.timeout(timeout) as deadline:
            detail = await _execute(chosen, harness, manifest, seed=seed, examples=examples)
    except CaseNotApplicable as exc:
        return result("not_applicable", str(exc))
    except CaseFailed as exc:
        return result("failed", str(exc))
    except TimeoutError as exc:
        if deadline.expired():
            return result("failed", f"the case did not finish within {timeout} s")
        return result("failed", f"unexpected TimeoutError: {exc}")
    except _STOPS_THE_RUN:
        raise
    except BaseException as exc:  # an adapter's own BaseException subclass fails the case too
        return result("failed", _unexpected(exc))
    return result("passed", detail)


async def close_harness(harness: MemoryAdapterHarness, timeout: float | None) -> str | None:
    """Close ``harness`` within ``timeout`` seconds; return why that failed, or ``None``."""
    try:
        async with asyncio.timeout(timeout) as deadline:
            await harness.close()
    except TimeoutError as exc:
        if deadline.expired():
            return f"the harness's close() did not finish within {timeout} s"
        return f"the harness's close() raised TimeoutError: {exc}"
    except asyncio.CancelledError as exc:
        if _cancelled_from_outside():
            raise
        return f"the harness's close() raised CancelledError (the run was not cancelled): {exc}"
    except _STOPS_THE_RUN:
        raise
    except BaseException as exc:
        return f"the harness's close() raised {type(exc).__name__}: {exc}"
    return None


def _valid(manifest: MemoryAdapterManifest | None) -> MemoryAdapterManifest | None:
    """``manifest``, or ``None`` when it does not validate (built with ``model_construct``,
    say): the report holds only a valid one, and ``manifest_valid_and_stable`` says why."""
    if manifest is None:
        return None
    try:
        return MemoryAdapterManifest.model_validate(manifest.model_dump())
    except ValidationError:
        return None


def _select(cases: Iterable[str] | None) -> tuple[Case, ...]:
    if cases is None:
        return CASES
    return tuple(case_named(name) for name in dict.fromkeys(cases))  # each once, in given order


async def run(
    harness: MemoryAdapterHarness,
    *,
    seed: int = DEFAULT_SEED,
    examples: int = REFERENCE_EXAMPLES,
    cases: Iterable[str] | None = None,
    timeout: float | None = CASE_TIMEOUT,
) -> ConformanceReport:
    """Run the conformance suite (every case, or the named ones) and return the typed report.

    The harness is reset before every case and closed once at the end, also when a case or the
    harness itself raises; a ``close()`` that raises or outlasts ``timeout`` is reported in
    ``close_failure`` and makes the report not ok. The report records the manifest of the
    harness's first store; every case's store must show the same one, or the case fails. Cases
    whose preconditions the manifest or harness does not provide are reported as not applicable,
    with the reason. ``seed`` fixes the randomised cases.
    """
    check_harness(harness)
    selected = _select(cases)
    try:
        try:
            async with asyncio.timeout(timeout):
                manifest: MemoryAdapterManifest | None = (await _open(harness))[1]
        except asyncio.CancelledError:
            if _cancelled_from_outside():
                raise
            manifest = None
        except _STOPS_THE_RUN:
            raise
        except BaseException:
            manifest = None  # every case then fails with its own account of what went wrong
        results = [
            await run_case(
                harness, case, seed=seed, examples=examples, timeout=timeout, manifest=manifest
            )
            for case in selected
        ]
    finally:
        close_failure = await close_harness(harness, timeout)
    reported = _valid(manifest)
    return ConformanceReport(
        adapter=reported.adapter if reported is not None else None,
        manifest=reported,
        seed=seed,
        examples=examples,
        results=tuple(results),
        close_failure=close_failure,
    )
