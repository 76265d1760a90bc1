"""The reusable conformance suite of ADR-0093 D2 for external memory adapters.

Three ways to run it against a ``MemoryAdapterHarness``:

* from Python: ``report = await lionmem.conformance.run(harness)`` returns a typed
  ``ConformanceReport`` (each case passed, failed with the reason, or not applicable with the reason);
* under pytest: define a fixture named ``memory_adapter_harness`` in a test module; the plugin
  ``lionmem.conformance.pytest_plugin`` (registered automatically when lionmem is installed) adds
  one test per case there;
* from the shell: ``python -m lionmem conformance MODULE:FACTORY [--json FILE]``.

``lionmem.conformance.fake`` holds a deterministic fake adapter to learn from (and to lie with).
"""

from __future__ import annotations

from lionmem.conformance._cases import CASES, case_named
from lionmem.conformance._context import Case
from lionmem.conformance._harness import (
    CorruptsResponses,
    MemoryAdapterHarness,
    PlantsForeignRecords,
    RejectsWrites,
)
from lionmem.conformance._report import CaseResult, CaseStatus, ConformanceReport
from lionmem.conformance._runner import (
    CASE_TIMEOUT,
    DEFAULT_SEED,
    REFERENCE_EXAMPLES,
    run,
    run_case,
)

__all__ = [
    "CASES",
    "CASE_TIMEOUT",
    "DEFAULT_SEED",
    "REFERENCE_EXAMPLES",
    "Case",
    "CaseResult",
    "CaseStatus",
    "ConformanceReport",
    "CorruptsResponses",
    "MemoryAdapterHarness",
    "PlantsForeignRecords",
    "RejectsWrites",
    "case_named",
    "run",
    "run_case",
]
