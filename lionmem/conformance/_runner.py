"""Running the cases against a harness and collecting the typed report."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from lionmem.conformance._cases import CASES, case_named
from lionmem.conformance._context import Case, CaseContext, CaseFailed, CaseNotApplicable
from lionmem.conformance._harness import MemoryAdapterHarness
from lionmem.conformance._report import CaseResult, CaseStatus, ConformanceReport
from lionmem.protocol import ExternalMemoryStore
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest

__all__ = ["CASE_TIMEOUT", "DEFAULT_SEED", "REFERENCE_EXAMPLES", "run", "run_case"]

DEFAULT_SEED = 20260709
"""Seed of the randomised cases when none is given: every run checks the same examples."""
REFERENCE_EXAMPLES = 200
"""Random examples of the reference-search profile (each: one store, five queries)."""
CASE_TIMEOUT = 300.0
"""Seconds one case may take before it fails as hung. The reference-search profile is the longest
case (about 200 resets, up to 2,000 writes and 1,000 searches): a networked adapter may need more,
or ``None`` for no limit."""


def _check_harness(harness: object) -> None:
    if not isinstance(harness, MemoryAdapterHarness):
        missing = [
            name
            for name in (
                "make_store",
                "reset",
                "make_search_index_visible",
                "make_transport_unavailable",
                "close",
            )
            if not hasattr(harness, name)
        ]
        msg = f"{type(harness).__name__} is not a MemoryAdapterHarness (missing: {', '.join(missing)})"
        raise TypeError(msg)


async def _open(harness: MemoryAdapterHarness) -> tuple[ExternalMemoryStore, MemoryAdapterManifest]:
    """Reset the harness and return a fresh store with its manifest (which must be a real one)."""
    await harness.reset()
    store = await harness.make_store()
    manifest = getattr(store, "manifest", None)
    if not isinstance(manifest, MemoryAdapterManifest):
        msg = (
            f"{type(store).__name__}.manifest is {type(manifest).__name__}, not a "
            "MemoryAdapterManifest (ADR-0093 D1)"
        )
        raise CaseFailed(msg)
    return store, manifest


async def _execute(
    case: Case, harness: MemoryAdapterHarness, *, seed: int, examples: int
) -> str | None:
    store, manifest = await _open(harness)
    context = CaseContext(case, harness, store, manifest, seed=seed, examples=examples)
    return await case.check(context)


async def run_case(
    harness: MemoryAdapterHarness,
    case: Case | str,
    *,
    seed: int = DEFAULT_SEED,
    examples: int = REFERENCE_EXAMPLES,
    timeout: float | None = CASE_TIMEOUT,
) -> CaseResult:
    """Reset the harness and run one case; never raises for the adapter's behaviour."""
    chosen = case_named(case) if isinstance(case, str) else case

    def result(status: CaseStatus, reason: str | None) -> CaseResult:
        return CaseResult(case=chosen.name, row=chosen.row, status=status, reason=reason)

    try:
        async with asyncio.timeout(timeout) as deadline:
            detail = await _execute(chosen, harness, seed=seed, examples=examples)
    except CaseNotApplicable as exc:
        return result("not_applicable", str(exc))
    except CaseFailed as exc:
        return result("failed", str(exc))
    except TimeoutError as exc:
        if deadline.expired():
            return result("failed", f"the case did not finish within {timeout} s")
        return result("failed", f"unexpected TimeoutError: {exc}")
    except Exception as exc:
        return result("failed", f"unexpected {type(exc).__name__}: {exc}")
    return result("passed", detail)


def _select(cases: Iterable[str] | None) -> tuple[Case, ...]:
    if cases is None:
        return CASES
    return tuple(case_named(name) for name in cases)


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
    harness itself raises. Cases whose preconditions the manifest or harness does not provide are
    reported as not applicable, with the reason. ``seed`` fixes the randomised cases.
    """
    _check_harness(harness)
    selected = _select(cases)
    try:
        try:
            async with asyncio.timeout(timeout):
                manifest: MemoryAdapterManifest | None = (await _open(harness))[1]
        except Exception:
            manifest = None  # every case then fails with its own account of what went wrong
        results = [
            await run_case(harness, case, seed=seed, examples=examples, timeout=timeout)
            for case in selected
        ]
    finally:
        await harness.close()
    return ConformanceReport(
        adapter=manifest.adapter if manifest is not None else None,
        manifest=manifest,
        seed=seed,
        examples=examples,
        results=tuple(results),
    )
