"""Benchmark SQLiteMemoryStore against LangGraph's SqliteStore, and time its searches.

Run ``make bench-sqlite`` (or ``python tools/bench_sqlite.py``; it needs the ``bench`` dependency
group: ``langgraph`` and ``langgraph-checkpoint-sqlite``). For each size it fills both stores with
the same records (content text, two tags, metadata ``user``/``n``/``kind``), then times, one call
at a time, the operations both offer:

* put: ``store(item)`` against ``put(namespace, key, value)``, each committed before returning,
  first with each store's default durability (lionmem: WAL + ``synchronous=FULL``; LangGraph: the
  connection ``from_conn_string`` opens, SQLite's defaults: rollback journal + ``FULL``), then
  with both on WAL + ``synchronous=NORMAL`` (no fsync per commit: the software cost alone);
* get: ``retrieve(id)`` against ``get(namespace, key)``;
* metadata-equality search: ``filters={"user": ...}`` against ``filter={"user": ...}``, limit 10;
* list with limit: an empty query against ``search(namespace)``, limit 10.

lionmem is called through its async API from one event loop (each call hops to the store's worker
thread); LangGraph's SqliteStore is synchronous and is called directly. The figures are medians of
per-call times, measured in one run on the same machine; the ratio is LangGraph's time divided by
lionmem's (above 1: lionmem is faster). It then times text and tag searches on lionmem alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores.sqlite import SQLiteMemoryStore

WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"),
    *("lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi"),
    *("chi", "psi", "omega", "straße", "İstanbul", "ΟΔΟΣ", "naïve", "café", "memory", "agent"),
]
_A = TypeVar("_A")
NAMESPACE = ("bench",)
USERS = 100
PUTS = 200
GETS = 2000
SEARCHES = 300
"""Timed searches per kind; a fifth of that above 20,000 items, where LangGraph scans the table."""


def records(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` deterministic records shared by both stores."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        out.append(
            {
                "id": UUID(int=rng.getrandbits(128), version=4),
                "content": " ".join(rng.choices(WORDS, k=12)) + f" #{n}",
                "tags": [f"t{n % 50}", f"g{n % 7}"],
                "metadata": {"user": f"u{n % USERS}", "n": n % 10, "kind": "note"},
            }
        )
    return out


def item_of(record: dict[str, Any]) -> MemoryItem:
    return MemoryItem(
        id=record["id"],
        content=record["content"],
        tags=record["tags"],
        metadata=record["metadata"],
        created_at=1_700_000_000.0,
    )


def value_of(record: dict[str, Any]) -> dict[str, Any]:
    """The LangGraph value: the same fields, metadata at the top level (where filters look)."""
    return {"content": record["content"], "tags": record["tags"], **record["metadata"]}


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def quantile_us(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6


async def time_async(
    call: Callable[[_A], Awaitable[object]], arguments: Sequence[_A]
) -> list[float]:
    """Await ``call(argument)`` for each argument, one at a time; return each call's seconds."""
    samples = []
    for argument in arguments:
        start = time.perf_counter()
        await call(argument)
        samples.append(time.perf_counter() - start)
    return samples


def time_sync(call: Callable[[_A], object], arguments: Sequence[_A]) -> list[float]:
    """Call ``call(argument)`` for each argument; return each call's seconds."""
    samples = []
    for argument in arguments:
        start = time.perf_counter()
        call(argument)
        samples.append(time.perf_counter() - start)
    return samples


# -------------------------------------------------------------------------------- lionmem


async def lionmem_fill(path: Path, data: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    async with SQLiteMemoryStore(path) as store:
        for first in range(0, len(data), 1000):
            await store.store_many([item_of(record) for record in data[first : first + 1000]])
    return time.perf_counter() - start


def searches_for(size: int) -> int:
    return SEARCHES if size <= 20_000 else SEARCHES // 5


def by_user(user: str) -> MemoryQuery:
    return MemoryQuery(filters={"user": user}, limit=10)


async def lionmem_ops(
    path: Path, data: list[dict[str, Any]], fresh: list[dict[str, Any]], rng: random.Random
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    searches = searches_for(len(data))
    async with SQLiteMemoryStore(path) as store:
        await store.search(MemoryQuery(limit=1))  # warm the connection and the page cache
        ids = [record["id"] for record in rng.sample(data, min(GETS, len(data)))]
        out["get"] = await time_async(store.retrieve, ids)
        users = [by_user(f"u{rng.randrange(USERS)}") for _ in range(searches)]
        out["filter"] = await time_async(store.search, users)
        out["list"] = await time_async(store.search, [MemoryQuery(limit=10)] * searches)
        out["put"] = await time_async(store.store, [item_of(record) for record in fresh])
    return out


async def lionmem_put_normal(path: Path, fresh: list[dict[str, Any]]) -> list[float]:
    async with SQLiteMemoryStore(path, synchronous="NORMAL") as store:
        return await time_async(store.store, [item_of(record) for record in fresh])


def search_cases(size: int) -> list[tuple[str, MemoryQuery]]:
    """The timed searches; ``#<n>`` ends exactly one item's content."""
    return [
        ("text, common word (trigram index)", MemoryQuery(text="gamma", limit=10)),
        ("text, two words (trigram index)", MemoryQuery(text="delta epsilon", limit=10)),
        ("text, one match (trigram index)", MemoryQuery(text=f"#{size // 2}", limit=10)),
        ("text, no match (trigram index)", MemoryQuery(text="zzzz", limit=10)),
        ("text, Unicode (İ lowers to i̇)", MemoryQuery(text="İSTANBUL", limit=10)),
        ("text, 2 chars (scan)", MemoryQuery(text="ps", limit=10)),
        ("text, 2 chars, no match (full scan)", MemoryQuery(text="qq", limit=10)),
        ("tag, one", MemoryQuery(tags=["t7"], limit=10)),
        ("tags, two", MemoryQuery(tags=["t7", "g3"], limit=10)),
        ("tag, absent", MemoryQuery(tags=["nope"], limit=10)),
        ("text + tag + filter", MemoryQuery(text="omega", tags=["t7"], filters={"n": 7}, limit=10)),
        ("filter, two keys", MemoryQuery(filters={"user": "u42", "n": 2}, limit=10)),
    ]


async def lionmem_searches(
    path: Path, size: int, repeat: int
) -> list[tuple[str, float, float, int]]:
    rows = []
    async with SQLiteMemoryStore(path) as store:
        for label, query in search_cases(size):
            hits = len(await store.search(query))  # warm
            samples = await time_async(store.search, [query] * repeat)
            rows.append((label, median_us(samples), quantile_us(samples, 0.95), hits))
    return rows


# -------------------------------------------------------------------------------- LangGraph


@contextmanager
def langgraph_store(path: Path, *, wal_normal: bool) -> Iterator[Any]:
    from langgraph.store.sqlite import SqliteStore

    with SqliteStore.from_conn_string(str(path)) as store:
        if wal_normal:
            store.conn.execute("PRAGMA journal_mode = WAL")
            store.conn.execute("PRAGMA synchronous = NORMAL")
        store.setup()
        yield store


def langgraph_fill(path: Path, data: list[dict[str, Any]]) -> float:
    from langgraph.store.base import PutOp

    start = time.perf_counter()
    with langgraph_store(path, wal_normal=False) as store:
        for first in range(0, len(data), 1000):
            chunk = data[first : first + 1000]
            store.batch([PutOp(NAMESPACE, str(r["id"]), value_of(r), index=False) for r in chunk])
    return time.perf_counter() - start


def langgraph_calls(store: Any) -> dict[str, Callable[[Any], object]]:
    """LangGraph's side of each timed operation, as one-argument calls."""
    return {
        "get": lambda key: store.get(NAMESPACE, key),
        "filter": lambda user: store.search(NAMESPACE, filter={"user": user}, limit=10),
        "list": lambda _: store.search(NAMESPACE, limit=10),
        "put": lambda r: store.put(NAMESPACE, str(r["id"]), value_of(r), index=False),
    }


def langgraph_ops(
    path: Path, data: list[dict[str, Any]], fresh: list[dict[str, Any]], rng: random.Random
) -> dict[str, list[float]]:
    searches = searches_for(len(data))
    with langgraph_store(path, wal_normal=False) as store:
        store.search(NAMESPACE, limit=1)
        calls = langgraph_calls(store)
        keys = [str(record["id"]) for record in rng.sample(data, min(GETS, len(data)))]
        users = [f"u{rng.randrange(USERS)}" for _ in range(searches)]
        return {
            "get": time_sync(calls["get"], keys),
            "filter": time_sync(calls["filter"], users),
            "list": time_sync(calls["list"], [None] * searches),
            "put": time_sync(calls["put"], fresh),
        }


def langgraph_put_normal(path: Path, fresh: list[dict[str, Any]]) -> list[float]:
    with langgraph_store(path, wal_normal=True) as store:
        return time_sync(langgraph_calls(store)["put"], fresh)


# -------------------------------------------------------------------------------- report


def file_mib(path: Path) -> float:
    """The database's size on disk, its WAL included, in MiB."""
    files = [path, path.with_name(path.name + "-wal")]
    return sum(file.stat().st_size for file in files if file.exists()) / 2**20


def run_size(size: int, directory: Path, seed: int) -> dict[str, Any]:
    data = records(size + 2 * PUTS, seed)
    base, fresh, fresh_normal = data[:size], data[size : size + PUTS], data[size + PUTS :]
    ours, theirs = directory / f"lionmem-{size}.db", directory / f"langgraph-{size}.db"
    fill_ours = asyncio.run(lionmem_fill(ours, base))
    fill_theirs = langgraph_fill(theirs, base)
    mine = asyncio.run(lionmem_ops(ours, base, fresh, random.Random(seed + 1)))
    other = langgraph_ops(theirs, base, fresh, random.Random(seed + 1))
    mine["put (both WAL + NORMAL)"] = asyncio.run(lionmem_put_normal(ours, fresh_normal))
    other["put (both WAL + NORMAL)"] = langgraph_put_normal(theirs, fresh_normal)
    labels = {
        "put": "put, each store's default durability",
        "put (both WAL + NORMAL)": "put, both WAL + synchronous=NORMAL",
        "get": "get by id",
        "filter": "metadata-equality search, limit 10",
        "list": "list, limit 10",
    }
    comparison = [
        {
            "operation": labels[key],
            "lionmem_us": median_us(mine[key]),
            "langgraph_us": median_us(other[key]),
            "ratio": median_us(other[key]) / median_us(mine[key]),
        }
        for key in ("put", "put (both WAL + NORMAL)", "get", "filter", "list")
    ]
    searches = asyncio.run(lionmem_searches(ours, size, repeat=200 if size <= 20_000 else 50))
    return {
        "size": size,
        "fill_seconds": {"lionmem": fill_ours, "langgraph": fill_theirs},
        "file_mib": {"lionmem": file_mib(ours), "langgraph": file_mib(theirs)},
        "comparison": comparison,
        "searches": [
            {"search": label, "median_us": med, "p95_us": p95, "hits": hits}
            for label, med, p95, hits in searches
        ],
    }


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        f"Machine: {platform.machine()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}; medians of per-call times in one run.",
        "",
    ]
    for result in results:
        size = result["size"]
        fill = result["fill_seconds"]
        lines += [
            f"**{size:,} items** (filled in {fill['lionmem']:.1f} s by lionmem `store_many`, "
            f"{fill['langgraph']:.1f} s by LangGraph `batch`; files of "
            f"{result['file_mib']['lionmem']:.1f} MiB and {result['file_mib']['langgraph']:.1f} MiB)",
            "",
            "| operation | lionmem | LangGraph SqliteStore | LangGraph / lionmem |",
            "|---|---:|---:|---:|",
        ]
        for row in result["comparison"]:
            lines.append(
                f"| {row['operation']} | {row['lionmem_us']:,.0f} µs | "
                f"{row['langgraph_us']:,.0f} µs | {row['ratio']:.2f} |"
            )
        lines += ["", "| lionmem search (limit 10) | median | p95 | hits |", "|---|---:|---:|---:|"]
        for row in result["searches"]:
            lines.append(
                f"| {row['search']} | {row['median_us']:,.0f} µs | {row['p95_us']:,.0f} µs | "
                f"{row['hits']} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    try:
        import langgraph.store.sqlite  # noqa: F401 - only checks that the bench group is installed
    except ImportError:
        print("needs the bench dependency group: pip install --group bench", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lionmem-bench-") as directory:
        results = [run_size(size, Path(directory), args.seed) for size in args.sizes]
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
