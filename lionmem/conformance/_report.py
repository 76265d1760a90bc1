"""The typed result of a conformance run: one verdict per case, with the reason."""

from __future__ import annotations

import textwrap
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, field_serializer, model_validator

from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest

__all__ = ["CaseResult", "CaseStatus", "ConformanceReport"]

CaseStatus = Literal["passed", "failed", "not_applicable"]
_LABELS: dict[str, str] = {"passed": "passed", "failed": "FAILED", "not_applicable": "n/a"}


class CaseResult(BaseModel):
    """The verdict on one case: passed, failed with the reason, or not applicable with the reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case: str
    """The case's stable name, e.g. ``"search_visibility"``."""
    row: str
    """The ADR-0093 D2 matrix row (or lionmem profile) the case belongs to."""
    status: CaseStatus
    reason: str | None = None
    """Why it failed or does not apply; for a pass, optional detail (e.g. examples run)."""

    @model_validator(mode="after")
    def _reason_when_not_passed(self) -> Self:
        if self.status != "passed" and not self.reason:
            msg = f"a {self.status} case needs a reason"
            raise ValueError(msg)
        return self


class ConformanceReport(BaseModel):
    """Every case's verdict for one adapter; ``ok`` is true when no case failed and the harness closed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    adapter: str | None
    """``manifest.adapter``, or ``None`` when no valid manifest could be read."""
    manifest: MemoryAdapterManifest | None
    seed: int
    """Seed of the randomised cases: ``run(harness, seed=...)`` repeats them exactly."""
    examples: int
    """Random examples of the reference-search profile."""
    results: tuple[CaseResult, ...]
    close_failure: str | None = None
    """Why the harness's ``close()`` at the end of the run failed (it raised or did not finish
    within the case timeout); ``None`` when it closed."""

    @field_serializer("manifest", when_used="json")
    def _sorted_manifest(self, manifest: MemoryAdapterManifest | None) -> dict[str, Any] | None:
        # Set-valued fields as sorted lists, so that the JSON report is the same on every run.
        if manifest is None:
            return None
        dumped = manifest.model_dump(mode="json")
        return {
            key: sorted(value) if isinstance(value, list) else value
            for key, value in dumped.items()
        }

    @property
    def ok(self) -> bool:
        """True when no case failed and the harness closed (not-applicable cases do not count)."""
        return not self.failed and self.close_failure is None

    @property
    def passed(self) -> tuple[CaseResult, ...]:
        """The cases that passed."""
        return tuple(result for result in self.results if result.status == "passed")

    @property
    def failed(self) -> tuple[CaseResult, ...]:
        """The cases that failed, each with its reason."""
        return tuple(result for result in self.results if result.status == "failed")

    @property
    def not_applicable(self) -> tuple[CaseResult, ...]:
        """The cases whose preconditions the manifest or harness does not provide."""
        return tuple(result for result in self.results if result.status == "not_applicable")

    def result(self, case: str) -> CaseResult:
        """Return the verdict on ``case``; ``KeyError`` when the run did not include it."""
        for result in self.results:
            if result.case == case:
                return result
        raise KeyError(case)

    def summary(self) -> str:
        """Return the one-line count, e.g. ``"24 passed, 0 failed, 2 not applicable"``.

        When the harness's ``close()`` failed, ``"; the harness's close() failed"`` follows.
        """
        return (
            f"{len(self.passed)} passed, {len(self.failed)} failed, "
            f"{len(self.not_applicable)} not applicable"
            + ("; the harness's close() failed" if self.close_failure is not None else "")
        )

    def format_table(self, *, width: int = 100) -> str:
        """Return the report as a plain-text table: one line per case, reasons indented below.

        A failed ``close()`` of the harness has a line of its own after the cases.
        """
        name = repr(self.adapter) if self.adapter is not None else "(no valid manifest)"
        lines = [
            f"lionmem conformance: adapter {name}, seed {self.seed}, "
            f"{self.examples} reference-search examples",
            "",
        ]
        case_width = max((len(result.case) for result in self.results), default=0)
        for result in self.results:
            label = _LABELS[result.status]
            lines.append(f"  {label:<7} {result.case:<{case_width}}  {result.row}")
            if result.reason and result.status != "passed":
                lines.extend(_indented(result.reason, width))
        if self.close_failure is not None:
            lines.append(f"  {_LABELS['failed']:<7} harness close()")
            lines.extend(_indented(self.close_failure, width))
        lines.extend(["", self.summary()])
        return "\n".join(lines)


def _indented(reason: str, width: int) -> list[str]:
    return textwrap.wrap(
        reason,
        width=width,
        initial_indent=" " * 10,
        subsequent_indent=" " * 10,
        break_on_hyphens=False,
    )
