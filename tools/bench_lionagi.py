"""Benchmark what LionagiMemoryStore adds over the lionmem store it wraps, and lionagi's own store.

Run ``make bench-lionagi`` (or ``python tools/bench_lionagi.py``). Three contenders hold the same
``--size`` records: lionmem's ``InMemoryStore`` called with lionmem items and queries (the
baseline), ``LionagiMemoryStore`` over another ``InMemoryStore`` called with lionagi items and
queries, and lionagi 0.36.0's ``InMemoryStore``. Each operation (``store`` of a new item,
``retrieve`` of a stored id, searches with limit 20) is timed with ``tools.bench.timing``: the
contenders interleaved round by round, medians of per-call CPU time. The table gives each median,
the wrapper's overhead over the baseline (its median minus the baseline's, in microseconds) and
the ratio of the two. Building the items passed to ``store`` is not timed.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
from collections.abc import Callable, Sequence
from itertools import count
from typing import Any
from uuid import UUID, uuid4

import lionagi

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.integrations.lionagi import LionagiMemoryStore
from tools.bench.timing import Job, Plan, Stats, measure

WORDS = ["alpha", "beta", "gamma", "delta", "straße", "ΟΔΟΣ", "note", "plan", "test", "user"]
SEARCHES: dict[str, dict[str, Any]] = {
    "search, no predicate": {},
    "search, tags": {"tags": ["t3"]},
    "search, text": {"text": "gamma"},
}


def record(n: int) -> dict[str, Any]:
    """The fields of the n-th record: about 60 characters of content, two tags, three metadata keys."""
    words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(8))
    return {
        "id": UUID(int=n + 1),
        "created_at": 1_700_000_000.0 + n,
        "content": f"{n} {words}",
        "tags": [f"t{n % 50}", f"t{(n * 3) % 50}"],
        "metadata": {"user": f"u{n % 100}", "n": n, "kind": "note"},
    }


def repeat(value: Any) -> Callable[[int], Sequence[Any]]:
    """The arguments of ``k`` calls that all pass ``value``."""
    return lambda k: [value] * k


class Contender:
    """A store, the item and query classes it is called with, and a counter of new ids."""

    def __init__(self, store: Any, item: Callable[..., Any], query: Callable[..., Any]) -> None:
        self.store = store
        self.item = item
        self.query = query
        self.fresh = count(10**9)

    def new_items(self, k: int) -> Sequence[Any]:
        return [self.item(**record(next(self.fresh)) | {"id": uuid4()}) for _ in range(k)]


def contenders() -> dict[str, Contender]:
    return {
        "lionmem": Contender(InMemoryStore(), MemoryItem, MemoryQuery),
        "wrapper": Contender(
            LionagiMemoryStore(InMemoryStore()), lionagi.MemoryItem, lionagi.MemoryQuery
        ),
        "lionagi": Contender(lionagi.InMemoryStore(), lionagi.MemoryItem, lionagi.MemoryQuery),
    }


def run(size: int, rounds: int, target_ns: int = 3_000_000) -> dict[str, dict[str, Stats]]:
    """Fill the three stores with ``size`` records and time every operation on each."""
    loop = asyncio.new_event_loop()
    stores = contenders()
    for contender in stores.values():
        for n in range(size):
            loop.run_until_complete(contender.store.store(contender.item(**record(n))))
    ids = [UUID(int=n + 1) for n in range(size)]
    plan = Plan(rounds=rounds, target_ns=target_ns, min_rounds=min(rounds, 5))
    results: dict[str, dict[str, Stats]] = {}

    def cycle(k: int) -> Sequence[UUID]:
        return [ids[(i * 7919) % size] for i in range(k)]

    results["store"] = measure(
        loop,
        {name: Job(c.store.store, c.new_items, warm=False) for name, c in stores.items()},
        plan,
    )
    results["retrieve"] = measure(
        loop, {name: Job(c.store.retrieve, cycle) for name, c in stores.items()}, plan
    )
    for label, fields in SEARCHES.items():
        jobs = {name: Job(c.store.search, repeat(c.query(**fields))) for name, c in stores.items()}
        results[label] = measure(loop, jobs, plan)
    loop.close()
    return results


def table(results: dict[str, dict[str, Stats]]) -> str:
    """The Markdown table of the medians, the wrapper's overhead and its ratio to the baseline."""
    lines = [
        "| operation | lionmem InMemoryStore | LionagiMemoryStore over it | overhead | ratio | lionagi InMemoryStore |",
        "|---|---|---|---|---|---|",
    ]
    for operation, stats in results.items():
        base, wrapped, theirs = (stats[n].median / 1000 for n in ("lionmem", "wrapper", "lionagi"))
        lines.append(
            f"| {operation} | {base:.2f} µs | {wrapped:.2f} µs | {wrapped - base:+.2f} µs "
            f"| {wrapped / base:.2f}x | {theirs:.2f} µs |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="records in each store")
    parser.add_argument(
        "--rounds", type=int, default=15, help="samples per contender and operation"
    )
    args = parser.parse_args(argv)
    results = run(args.size, args.rounds)
    print(f"{args.size} items; Python {platform.python_version()} on {sys.platform}; medians")
    print(table(results))


if __name__ == "__main__":
    main()
