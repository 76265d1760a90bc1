"""tools/bench_lionagi.py: every operation is timed for the three contenders and tabulated."""

from __future__ import annotations

import re

from tools.bench_lionagi import SEARCHES, run, table


def test_a_short_run_tabulates_every_operation() -> None:
    """A tiny run gives one row per operation with positive medians and the overhead they imply."""
    results = run(size=40, rounds=2, target_ns=50_000)
    assert list(results) == ["store", "retrieve", *SEARCHES]
    for stats in results.values():
        assert sorted(stats) == ["lionagi", "lionmem", "wrapper"]
        assert all(s.median > 0 and len(s.samples) == 2 for s in stats.values())
    rows = table(results).splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| {name}" for name in results]
    base, wrapped, overhead = (float(x) for x in re.findall(r"([-+]?[\d.]+) µs", rows[0])[:3])
    assert abs(wrapped - base - overhead) < 0.011
