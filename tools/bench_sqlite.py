"""Benchmark SQLiteMemoryStore against LangGraph's SqliteStore and AsyncSqliteStore.

Run ``make bench-sqlite`` (the ``bench`` dependency group: ``langgraph-checkpoint-sqlite`` and
``aiosqlite``). For each size it fills the stores with the same records (content text, two tags,
metadata ``user``/``n``/``kind``, the same ids), then times, one call at a time, the operations
all offer: put (``store`` / ``put`` / ``aput``) at each store's default durability (lionmem: WAL +
``synchronous=FULL``; LangGraph: SQLite's defaults, rollback journal + ``FULL``), with all on WAL +
``FULL`` and with all on WAL + ``synchronous=NORMAL``; get by id; a metadata-equality search and a
list, limit 10 (each store's first page: lionmem's first ten stored, LangGraph's ten most
recently updated). The three stores are open at once and take turns in bursts of ``BURST``
calls (who goes first rotates), so the machine's drift falls on all alike; every argument is
built before the clock starts. Figures are medians of per-call times in one run, with the means
of the puts beside them (a mean includes work a store defers to a later call); a ratio is
LangGraph's time over lionmem's (above 1: lionmem is faster). Then it measures the throughput of
1 and of 8 concurrent writers of a fresh store (each write committed before it returns; one
writer and eight take turns in four rounds on one store), the longest event-loop stall seen
meanwhile, and the latency of lionmem's text and tag searches.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
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
PUTS = 384
"""Timed puts per store and durability: three of lionmem's indexing batches (128 items) and a
checkpoint at NORMAL (every 300 inserts), so the means include them."""
GETS = 2000
WRITES = 1600
"""Writes of the writers comparison (``--writes``): half by one writer, half by eight."""
ROUNDS = 4
"""Alternating rounds of the writers comparison, so both see the same drift of the disk."""
SEARCHES = 300
"""Timed searches per kind; a fifth of that above 20,000 items, where LangGraph scans the table."""
BURST = 20
"""Calls a store makes in a row before the next store's turn."""
STORES = ("lionmem", "SqliteStore", "AsyncSqliteStore")
JOURNALS = ("default", "WAL + FULL", "WAL + NORMAL")
"""The durability settings puts are timed at: each store's default, then all three alike."""
SYNCHRONOUS = {"WAL + FULL": "FULL", "WAL + NORMAL": "NORMAL"}


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


Timed = Callable[[Any], Awaitable[float]]
"""One timed call: awaits the operation on one argument and returns its seconds."""


def timed_async(call: Callable[[Any], Awaitable[object]]) -> Timed:
    async def timed(argument: Any) -> float:
        start = time.perf_counter()
        await call(argument)
        return time.perf_counter() - start

    return timed


def timed_sync(call: Callable[[Any], object]) -> Timed:
    async def timed(argument: Any) -> float:
        start = time.perf_counter()
        call(argument)
        return time.perf_counter() - start

    return timed


async def time_async(
    call: Callable[[_A], Awaitable[object]], arguments: Sequence[_A]
) -> list[float]:
    """Await ``call(argument)`` for each argument, one at a time; return each call's seconds."""
    timed = timed_async(call)
    return [await timed(argument) for argument in arguments]


@dataclass
class Turns:
    """One store's timed calls of an operation, and the seconds it then spent finishing the work
    they left for later (lionmem's worker indexing the newest items, say), waited for after each
    of its bursts so that no other store's burst pays for it."""

    samples: list[float] = field(default_factory=list)
    deferred: float = 0.0

    def mean_us(self) -> float:
        return (sum(self.samples) + self.deferred) / len(self.samples) * 1e6


Settle = Callable[[], Awaitable[object]]
"""Waits until a store has finished the work its calls left for later."""


async def take_turns(
    contenders: dict[str, tuple[Timed, Sequence[Any], Settle | None]],
) -> dict[str, Turns]:
    """Time each contender's calls on its own arguments (the same number for all), in bursts of
    ``BURST`` taking turns in every order in rotation (so none always follows the same one);
    after a contender's burst, time its ``Settle`` (if any) as its deferred work."""
    names = list(contenders)
    counts = {len(arguments) for _, arguments, _ in contenders.values()}
    if len(counts) != 1:
        msg = f"every contender needs as many arguments, got {sorted(counts)}"
        raise ValueError(msg)
    (count,) = counts
    turns = {name: Turns() for name in names}
    orders = list(itertools.permutations(names))
    for turn, first in enumerate(range(0, count, BURST)):
        for name in orders[turn % len(orders)]:
            timed, arguments, settle = contenders[name]
            for argument in arguments[first : first + BURST]:
                turns[name].samples.append(await timed(argument))
            if settle is not None:
                start = time.perf_counter()
                await settle()
                turns[name].deferred += time.perf_counter() - start
    return turns


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


async def lionmem_round_trip(path: Path) -> list[float]:
    """Round trips of an empty job to the store's worker thread: the floor under every put that
    goes to the worker (every put at FULL; at NORMAL a new item is inserted in the caller's thread)."""
    async with SQLiteMemoryStore(path) as store:

        async def empty(_: object) -> None:
            await store._call(lambda conn: None)

        return await time_async(empty, [None] * PUTS)


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
def langgraph_store(path: Path, *, journal: str = "default") -> Iterator[Any]:
    """LangGraph's SqliteStore on ``path``, at one of ``JOURNALS``."""
    from langgraph.store.sqlite import SqliteStore

    with SqliteStore.from_conn_string(str(path)) as store:
        if journal != "default":
            store.conn.execute("PRAGMA journal_mode = WAL")
            store.conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS[journal]}")
        store.setup()
        yield store


def langgraph_fill(path: Path, data: list[dict[str, Any]]) -> float:
    from langgraph.store.base import PutOp

    start = time.perf_counter()
    with langgraph_store(path) as store:
        for first in range(0, len(data), 1000):
            chunk = data[first : first + 1000]
            store.batch([PutOp(NAMESPACE, str(r["id"]), value_of(r), index=False) for r in chunk])
    return time.perf_counter() - start


@asynccontextmanager
async def langgraph_async_store(path: Path, *, journal: str = "default") -> AsyncIterator[Any]:
    """LangGraph's AsyncSqliteStore on ``path``, at one of ``JOURNALS``."""
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async with AsyncSqliteStore.from_conn_string(str(path)) as store:
        if journal != "default":
            await store.conn.execute("PRAGMA journal_mode = WAL")
            await store.conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS[journal]}")
        await store.setup()
        yield store


# -------------------------------------------------------------------------------- comparison


def lionmem_store(path: Path, journal: str) -> SQLiteMemoryStore:
    """lionmem's store at one of ``JOURNALS`` (its default is WAL + FULL)."""
    return SQLiteMemoryStore(path, synchronous="NORMAL" if journal == "WAL + NORMAL" else "FULL")


def contenders(
    mine: SQLiteMemoryStore, sync: Any, asynchronous: Any
) -> dict[str, dict[str, Callable[[Any], Any]]]:
    """Each store's side of each timed operation, as one-argument calls (sync or async)."""

    async def async_put(argument: tuple[str, dict[str, Any]]) -> None:
        await asynchronous.aput(NAMESPACE, *argument, index=False)

    return {
        "lionmem": {
            "get": mine.retrieve,
            "filter": mine.search,
            "list": mine.search,
            "put": mine.store,
        },
        "SqliteStore": {
            "get": lambda key: sync.get(NAMESPACE, key),
            "filter": lambda user: sync.search(NAMESPACE, filter={"user": user}, limit=10),
            "list": lambda _: sync.search(NAMESPACE, limit=10),
            "put": lambda argument: sync.put(NAMESPACE, *argument, index=False),
        },
        "AsyncSqliteStore": {
            "get": lambda key: asynchronous.aget(NAMESPACE, key),
            "filter": lambda user: asynchronous.asearch(NAMESPACE, filter={"user": user}, limit=10),
            "list": lambda _: asynchronous.asearch(NAMESPACE, limit=10),
            "put": async_put,
        },
    }


def arguments(
    operation: str, records_: list[dict[str, Any]], users: list[str]
) -> dict[str, list[Any]]:
    """Each store's arguments for ``operation``, built before any clock starts: ``records_``
    are the items to get or put, ``users`` the metadata values to filter on."""
    if operation == "get":
        ids = [record["id"] for record in records_]
        keys = [str(key) for key in ids]
        return {"lionmem": ids, "SqliteStore": keys, "AsyncSqliteStore": keys}
    if operation == "put":
        pairs = [(str(record["id"]), value_of(record)) for record in records_]
        items = [item_of(record) for record in records_]
        return {"lionmem": items, "SqliteStore": pairs, "AsyncSqliteStore": pairs}
    if operation == "filter":
        return {
            "lionmem": [by_user(user) for user in users],
            "SqliteStore": users,
            "AsyncSqliteStore": users,
        }
    pages = [MemoryQuery(limit=10)] * len(users)
    return {
        "lionmem": pages,
        "SqliteStore": [None] * len(users),
        "AsyncSqliteStore": [None] * len(users),
    }


async def compare(
    paths: dict[str, Path],
    operations: dict[str, tuple[list[dict[str, Any]], list[str]]],
    journal: str,
) -> dict[str, dict[str, Turns]]:
    """Open the three stores at ``journal`` at once and time each of ``operations`` (name:
    records, users; a put's first record warms each store untimed) taking turns; return
    operation -> store -> its turns."""
    async with (
        lionmem_store(paths["lionmem"], journal) as mine,
        langgraph_async_store(paths["AsyncSqliteStore"], journal=journal) as asynchronous,
    ):
        with langgraph_store(paths["SqliteStore"], journal=journal) as sync:
            # Warm each connection and page cache.
            await mine.search(MemoryQuery(limit=1))
            sync.search(NAMESPACE, limit=1)
            await asynchronous.asearch(NAMESPACE, limit=1)
            calls = contenders(mine, sync, asynchronous)

            async def settle() -> None:  # lionmem's worker done with what the puts queued
                await mine._call(lambda conn: None)

            out = {}
            for operation, (given_records, users) in operations.items():
                records_ = given_records
                if operation == "put":  # one untimed put each: the first put of a store costs more
                    for name, (warm,) in arguments("put", records_[:1], []).items():
                        result = calls[name]["put"](warm)
                        if inspect.isawaitable(result):
                            await result
                    await settle()
                    records_ = records_[1:]
                given = arguments(operation, records_, users)
                out[operation] = await take_turns(
                    {
                        name: (
                            (timed_async if name != "SqliteStore" else timed_sync)(
                                calls[name][operation]
                            ),
                            given[name],
                            settle if name == "lionmem" and operation == "put" else None,
                        )
                        for name in calls
                    }
                )
            return out


# -------------------------------------------------------------------------------- writers


class StallWatch:
    """Measures the event loop's longest lateness: a task sleeping 1 ms notes how late it woke.

    It sleeps rather than spinning, so it does not hold the GIL against the store's worker.
    """

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            self.longest = max(self.longest, time.perf_counter() - start - 0.001)

    def __enter__(self) -> StallWatch:
        self._task = asyncio.get_running_loop().create_task(self._watch())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def timed_writers(
    store: Any,
    put: Callable[[Any, dict[str, Any]], Awaitable[object]],
    records_: list[dict[str, Any]],
    writers: int,
) -> float:
    """Seconds ``writers`` tasks take to write ``records_``, shared out, one write at a time each."""

    async def writer(share: list[dict[str, Any]]) -> None:
        for record in share:
            await put(store, record)

    start = time.perf_counter()
    await asyncio.gather(*(writer(records_[k::writers]) for k in range(writers)))
    return time.perf_counter() - start


async def alternating_writers(
    store_of: Callable[[], AbstractAsyncContextManager[Any]],
    put: Callable[[Any, dict[str, Any]], Awaitable[object]],
    records_: list[dict[str, Any]],
    rounds: int = ROUNDS,
) -> tuple[float, float, float]:
    """Writes per second of 1 and of 8 writers of one store, taking turns for ``rounds`` rounds
    (each writes half of ``records_`` in all), and the longest loop stall meanwhile."""
    half = len(records_) // 2
    ones, eights = records_[:half], records_[half:]
    seconds = {1: 0.0, 8: 0.0}
    async with store_of() as store:
        with StallWatch() as watch:
            for n in range(rounds):
                seconds[1] += await timed_writers(store, put, ones[n::rounds], 1)
                seconds[8] += await timed_writers(store, put, eights[n::rounds], 8)
        return len(ones) / seconds[1], len(eights) / seconds[8], watch.longest


async def idle_lateness(seconds: float) -> float:
    """The longest lateness of an event loop doing nothing else: the machine's own noise."""
    with StallWatch() as watch:
        await asyncio.sleep(seconds)
    return watch.longest


async def lionmem_put(store: SQLiteMemoryStore, record: dict[str, Any]) -> None:
    await store.store(item_of(record))


async def langgraph_aput(store: Any, record: dict[str, Any]) -> None:
    await store.aput(NAMESPACE, str(record["id"]), value_of(record), index=False)


def run_writers(directory: Path, size: int, seed: int, writes: int) -> list[dict[str, Any]]:
    """1 and 8 concurrent writers of one store at default durability (lionmem also NORMAL)."""
    rows = []
    cases: list[
        tuple[str, Callable[[Path], Callable[[], AbstractAsyncContextManager[Any]]], Any]
    ] = [
        ("lionmem, WAL + FULL", lambda path: lambda: SQLiteMemoryStore(path), lionmem_put),
        (
            "lionmem, WAL + NORMAL",
            lambda path: lambda: SQLiteMemoryStore(path, synchronous="NORMAL"),
            lionmem_put,
        ),
        (
            "LangGraph AsyncSqliteStore, rollback journal + FULL",
            lambda path: lambda: langgraph_async_store(path),
            langgraph_aput,
        ),
    ]
    for n, (label, store_of, put) in enumerate(cases):
        data = records(writes, seed + 10 + n)
        path = directory / f"writers-{size}-{n}.db"
        one, many, stall = asyncio.run(alternating_writers(store_of(path), put, data))
        rows.append(
            {
                "store": label,
                "one_per_s": one,
                "eight_per_s": many,
                "ratio": many / one,
                "stall_ms": stall * 1e3,
            }
        )
    return rows


# -------------------------------------------------------------------------------- report


def file_mib(path: Path) -> float:
    """The database's size on disk, its WAL included, in MiB."""
    files = [path, path.with_name(path.name + "-wal")]
    return sum(file.stat().st_size for file in files if file.exists()) / 2**20


LABELS = {
    "put": "put, each store's default durability",
    "put (WAL + FULL)": "put, both WAL + synchronous=FULL",
    "put (WAL + NORMAL)": "put, both WAL + synchronous=NORMAL",
    "get": "get by id",
    "filter": "metadata-equality search, limit 10",
    "list": "list, limit 10",
}


def run_size(size: int, directory: Path, seed: int, writes: int = WRITES) -> dict[str, Any]:
    chunk = PUTS + 1  # one record more per journal, to warm each store untimed
    data = records(size + len(JOURNALS) * chunk, seed)
    base = data[:size]
    fresh = {
        journal: data[size + n * chunk : size + (n + 1) * chunk]
        for n, journal in enumerate(JOURNALS)
    }
    paths = {name: directory / f"{name}-{size}.db" for name in STORES}
    fill_ours = asyncio.run(lionmem_fill(paths["lionmem"], base))
    fill_theirs = langgraph_fill(paths["SqliteStore"], base)
    shutil.copyfile(paths["SqliteStore"], paths["AsyncSqliteStore"])
    rng = random.Random(seed + 1)
    gets = rng.sample(base, min(GETS, size))
    users = [f"u{rng.randrange(USERS)}" for _ in range(searches_for(size))]
    operations = {
        "get": (gets, []),
        "filter": ([], users),
        "list": ([], users),
        "put": (fresh["default"], []),
    }
    timings = asyncio.run(compare(paths, operations, "default"))
    for journal in JOURNALS[1:]:
        puts: dict[str, tuple[list[dict[str, Any]], list[str]]] = {"put": (fresh[journal], [])}
        timings[f"put ({journal})"] = asyncio.run(compare(paths, puts, journal))["put"]
    round_trip = median_us(asyncio.run(lionmem_round_trip(paths["lionmem"])))
    comparison = []
    for key, label in LABELS.items():
        ours, sync, asynchronous = (timings[key][name] for name in STORES)
        comparison.append(
            {
                "operation": label,
                "lionmem_us": median_us(ours.samples),
                "langgraph_us": median_us(sync.samples),
                "langgraph_async_us": median_us(asynchronous.samples),
                "ratio": median_us(sync.samples) / median_us(ours.samples),
                "ratio_async": median_us(asynchronous.samples) / median_us(ours.samples),
                "lionmem_mean_us": ours.mean_us(),
                "langgraph_mean_us": sync.mean_us(),
                "langgraph_async_mean_us": asynchronous.mean_us(),
            }
        )
    ours_path = paths["lionmem"]
    searches = asyncio.run(lionmem_searches(ours_path, size, repeat=200 if size <= 20_000 else 50))
    writers = run_writers(directory, size, seed, writes)
    idle_ms = asyncio.run(idle_lateness(1.0)) * 1e3
    return {
        "size": size,
        "fill_seconds": {"lionmem": fill_ours, "langgraph": fill_theirs},
        "file_mib": {"lionmem": file_mib(ours_path), "langgraph": file_mib(paths["SqliteStore"])},
        "comparison": comparison,
        "round_trip_us": round_trip,
        "writes": writes,
        "writers": writers,
        "idle_lateness_ms": idle_ms,
        "searches": [
            {"search": label, "median_us": med, "p95_us": p95, "hits": hits}
            for label, med, p95, hits in searches
        ],
    }


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        f"Machine: {platform.machine()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}; medians of per-call times in one run, the stores taking turns "
        f"in bursts of {BURST} calls.",
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
            "| operation | lionmem | LangGraph SqliteStore | LangGraph AsyncSqliteStore "
            "| SqliteStore / lionmem | AsyncSqliteStore / lionmem |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in result["comparison"]:
            lines.append(
                f"| {row['operation']} | {row['lionmem_us']:,.0f} µs | "
                f"{row['langgraph_us']:,.0f} µs | {row['langgraph_async_us']:,.0f} µs | "
                f"{row['ratio']:.2f} | {row['ratio_async']:.2f} |"
            )
        lines += [
            "",
            "| put, mean per call (work deferred to later calls included) | lionmem "
            "| LangGraph SqliteStore | LangGraph AsyncSqliteStore |",
            "|---|---:|---:|---:|",
        ]
        for row in result["comparison"]:
            if row["operation"].startswith("put"):
                lines.append(
                    f"| {row['operation'].removeprefix('put, ')} | {row['lionmem_mean_us']:,.0f} µs "
                    f"| {row['langgraph_mean_us']:,.0f} µs | {row['langgraph_async_mean_us']:,.0f} µs |"
                )
        lines += [
            "",
            f"A round trip to lionmem's worker thread (an empty job, the floor under every put at "
            "the default durability; at NORMAL a new item is inserted without it) "
            f"took {result['round_trip_us']:,.0f} µs in this run.",
            "",
            f"| writers of a fresh store ({result['writes'] // 2} writes each way, {ROUNDS} rounds) "
            "| 1 writer | 8 writers "
            "| 8 / 1 | event loop's longest lateness |",
            "|---|---:|---:|---:|---:|",
        ]
        for row in result["writers"]:
            lines.append(
                f"| {row['store']} | {row['one_per_s']:,.0f} /s | {row['eight_per_s']:,.0f} /s | "
                f"{row['ratio']:.2f} | {row['stall_ms']:.1f} ms |"
            )
        lines += [
            "",
            f"An idle event loop's longest lateness over one second in this run: "
            f"{result['idle_lateness_ms']:.1f} ms (the machine's own noise).",
        ]
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
    parser.add_argument("--writes", type=int, default=WRITES, help="writes of the writers runs")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    try:
        import aiosqlite  # noqa: F401 - only checks that the bench group is installed
        import langgraph.store.sqlite  # noqa: F401 - the same
    except ImportError:
        print("needs the bench dependency group: pip install --group bench", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lionmem-bench-") as directory:
        results = [run_size(size, Path(directory), args.seed, args.writes) for size in args.sizes]
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
