"""Benchmark PostgresMemoryStore against LangGraph's AsyncPostgresStore on one PostgreSQL server.

Run ``make bench-postgres`` (or ``python tools/bench_postgres.py``; it needs the ``bench``
dependency group: ``langgraph-checkpoint-postgres``, ``psycopg``, ``psycopg-pool``). It starts a
throwaway durable cluster (fsync and synchronous commits on, autovacuum off: the tool vacuums
after each load itself) as the tests do. Both stores get the
same records under the same keys (about 250 characters of text, 0-3 of 50 tags, metadata
``user``/``n``/``kind``; lionmem's random UUIDs are LangGraph's keys), each in a database of its
own, through pools of 8 connections; every argument is built before the clock starts. Timed,
with the two contenders interleaved in bursts (the first call after an idle gap costs more on a
VM, so each burst's first call is left out): put, get, metadata equality with limit 10, list with
limit 10 (each store's first page: lionmem's first ten stored, LangGraph's ten most recently
updated), a paging sweep over every item without and then with a writer inserting (rows
returned, distinct, missed) and 8 concurrent writers. After loading, both databases get ``VACUUM
ANALYZE`` (what autovacuum does within a minute of a bulk load). The WAL each store writes per
item while loading and per put while 8 writers run is read from the server's WAL position, each
window starting right after a ``CHECKPOINT``, so both pay the same full-page images. Then lionmem
alone: text, tag and combined searches with limit 10 (right after the vacuum: empty GIN pending
lists), and bulk ``store_many``. ``--large N`` repeats lionmem's search latencies at N items.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores.postgres import PostgresMemoryStore
from tests.postgres_support import Cluster, started_cluster

WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"),
    *("lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi"),
    *("chi", "psi", "omega", "straße", "İstanbul", "ΟΔΟΣ", "naïve", "café", "memory", "agent"),
    *("river", "stone", "window", "garden", "silver", "yellow", "planet", "engine", "forest"),
]
TAGS = [f"tag{n:02d}" for n in range(50)]
USERS = 1000
NAMESPACE = ("bench",)
POOL = 8
BURST = 10
_A = TypeVar("_A")


def records(count: int, seed: int, start: int = 0) -> list[dict[str, Any]]:
    """``count`` deterministic records: text, tags, metadata, and a rare marker word now and then."""
    rng = random.Random(seed)
    out = []
    for n in range(start, start + count):
        words = [rng.choice(WORDS) for _ in range(34)]
        if n % 1000 == 7:
            words[rng.randrange(34)] = "ZebraFish"  # a selective needle: 1 item in 1,000
        text = " ".join(words)[:250]
        out.append(
            {
                "content": text,
                "tags": rng.sample(TAGS, rng.randrange(4)),
                "metadata": {"user": f"user{rng.randrange(USERS)}", "n": n, "kind": "note"},
            }
        )
    return out


def item_of(record: dict[str, Any]) -> MemoryItem:
    return MemoryItem(content=record["content"], tags=record["tags"], metadata=record["metadata"])


def value_of(record: dict[str, Any]) -> dict[str, Any]:
    return {"content": record["content"], "tags": record["tags"], **record["metadata"]}


def ms(samples: Sequence[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


async def timed(call: Callable[[_A], Awaitable[object]], arguments: Sequence[_A]) -> list[float]:
    """Per-call times, leaving out each burst's first (wake-up) call."""
    times = []
    for index, argument in enumerate(arguments):
        began = time.perf_counter()
        await call(argument)
        if index % BURST:
            times.append(time.perf_counter() - began)
    return times


async def interleaved(
    ours: Callable[[_A], Awaitable[object]],
    theirs: Callable[[_A], Awaitable[object]],
    arguments: Sequence[_A],
) -> tuple[float, float]:
    """Median ms of both over the same arguments, alternating bursts (and who goes first)."""
    mine: list[float] = []
    peer: list[float] = []
    for start in range(0, len(arguments), BURST):
        burst = arguments[start : start + BURST]
        pair = [(ours, mine), (theirs, peer)]
        if (start // BURST) % 2:
            pair.reverse()
        for call, sink in pair:
            sink.extend(await timed(call, burst))
    return ms(mine), ms(peer)


async def fill_lionmem(store: PostgresMemoryStore, items: list[MemoryItem]) -> float:
    """Load ``items`` 1,000 at a time; return items per second."""
    began = time.perf_counter()
    for start in range(0, len(items), 1000):
        await store.store_many(items[start : start + 1000])
    return len(items) / (time.perf_counter() - began)


async def fill_langgraph(store: Any, data: list[dict[str, Any]], keys: list[str]) -> float:
    """Load ``data`` under ``keys``, 1,000 a batch; return items per second."""
    from langgraph.store.base import PutOp

    batches = [
        [
            PutOp(NAMESPACE, keys[n], value_of(data[n]), index=False)
            for n in range(start, min(start + 1000, len(data)))
        ]
        for start in range(0, len(data), 1000)
    ]
    began = time.perf_counter()
    for batch in batches:
        await store.abatch(batch)
    return len(data) / (time.perf_counter() - began)


async def sweep_lionmem(
    store: PostgresMemoryStore, writer: PostgresMemoryStore | None, earlier: set[str]
) -> dict[str, Any]:
    stop = asyncio.Event()

    async def write() -> None:
        n = 0
        while writer is not None and not stop.is_set():
            await writer.store(MemoryItem(content=f"written during the sweep {n}"))
            n += 1

    task = asyncio.ensure_future(write())
    began = time.perf_counter()
    seen = [str(item.id) async for item in store.items(batch_size=1000)]
    elapsed = time.perf_counter() - began
    stop.set()
    await task
    return {"s": round(elapsed, 2), "rows": len(seen), "distinct": len(set(seen)),
            "missed": len(earlier - set(seen))}  # fmt: skip


async def sweep_langgraph(store: Any, writer: Any | None, earlier: set[str]) -> dict[str, Any]:
    stop = asyncio.Event()

    async def write() -> None:
        n = 0
        while writer is not None and not stop.is_set():
            value = {"content": f"written during the sweep {n}"}
            await writer.aput(NAMESPACE, str(uuid4()), value)
            n += 1

    task = asyncio.ensure_future(write())
    began = time.perf_counter()
    seen: list[str] = []
    offset = 0
    while True:
        page = await store.asearch(NAMESPACE, limit=1000, offset=offset)
        seen.extend(item.key for item in page)
        if len(page) < 1000:
            break
        offset += 1000
    elapsed = time.perf_counter() - began
    stop.set()
    await task
    return {"s": round(elapsed, 2), "rows": len(seen), "distinct": len(set(seen)),
            "missed": len(earlier - set(seen))}  # fmt: skip


async def writers(put: Callable[[int], Awaitable[object]], each: int) -> float:
    """Puts per second of 8 tasks writing at once."""
    counter = iter(range(10**9))

    async def one() -> None:
        for _ in range(each):
            await put(next(counter))

    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(POOL)))
    return round(POOL * each / (time.perf_counter() - began))


def search_cases() -> list[tuple[str, MemoryQuery]]:
    return [
        ("text, selective (ZebraFish)", MemoryQuery(text="zebrafish", limit=10)),
        ("text, common (memory)", MemoryQuery(text="memory", limit=10)),
        ("text, 3 characters (phi)", MemoryQuery(text="phi", limit=10)),
        ("text, no match (qqqzzz)", MemoryQuery(text="qqqzzz", limit=10)),
        # Each word is in most items, the phrase in 1 in 2,400: the trigram index narrows the
        # rows to those holding all three words, and each is read to find the phrase.
        ("text, rare phrase of common words (naïve café zeta)",
         MemoryQuery(text="naïve café zeta", limit=10)),
        ("tags any-of (2 tags)", MemoryQuery(tags=["tag07", "tag31"], limit=10)),
        ("metadata equality (user)", MemoryQuery(filters={"user": "user42"}, limit=10)),
        ("text + tag + metadata",
         MemoryQuery(text="river", tags=["tag03", "tag04"], filters={"kind": "note"}, limit=10)),
    ]  # fmt: skip


async def lionmem_searches(store: PostgresMemoryStore, rounds: int) -> dict[str, float]:
    out = {}
    for label, query in search_cases():
        await store.search(query)
        out[label] = ms(await timed(store.search, [query] * rounds))
    return out


async def wal_position(dsn: str) -> int:
    """The server's current WAL position in bytes (one cluster: both stores write to it)."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"))
    finally:
        await conn.close()


async def maintain(dsn: str, command: str = "VACUUM ANALYZE") -> None:
    """Run ``command`` (``VACUUM ANALYZE``, ``CHECKPOINT``) on the database of ``dsn``."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(command)
    finally:
        await conn.close()


async def wal_window(dsn: str, work: Callable[[], Awaitable[_A]]) -> tuple[_A, int]:
    """Run ``work`` right after a ``CHECKPOINT``; return its result and the WAL bytes written."""
    await maintain(dsn, "CHECKPOINT")
    began = await wal_position(dsn)
    result = await work()
    return result, await wal_position(dsn) - began


async def run(dsn_of: Callable[[str], str], size: int, large: int, seed: int) -> dict[str, Any]:
    from langgraph.store.postgres import AsyncPostgresStore

    data = records(size, seed)
    result: dict[str, Any] = {"size": size, "python": platform.python_version()}
    store = PostgresMemoryStore(dsn_of("lionmem"), namespace="bench", max_size=POOL)
    writer = PostgresMemoryStore(dsn_of("lionmem"), namespace="bench", max_size=2)
    async with (
        store,
        writer,
        AsyncPostgresStore.from_conn_string(
            dsn_of("langgraph"), pool_config={"min_size": POOL, "max_size": POOL}
        ) as peer,
        AsyncPostgresStore.from_conn_string(
            dsn_of("langgraph"), pool_config={"min_size": 1, "max_size": 2}
        ) as peer_writer,
    ):
        await peer.setup()
        items = [item_of(record) for record in data]
        keys = [str(item.id) for item in items]
        cluster_dsn = dsn_of("lionmem")  # one cluster: its WAL position covers both databases
        ours_fill, ours_wal = await wal_window(cluster_dsn, lambda: fill_lionmem(store, items))
        peer_fill, peer_wal = await wal_window(
            cluster_dsn, lambda: fill_langgraph(peer, data, keys)
        )
        result["bulk load items/s"] = {"lionmem": round(ours_fill), "langgraph": round(peer_fill)}
        result["WAL bytes per item, bulk load"] = {
            "lionmem": ours_wal // size,
            "langgraph": peer_wal // size,
        }
        # What autovacuum does within a minute of a bulk load: statistics for the planner and
        # GIN pending lists merged. Both databases get it before anything is timed.
        for database in ("lionmem", "langgraph"):
            await maintain(dsn_of(database))
        # Right after the load and its vacuum, before the timed writes below fill the GIN
        # pending lists that every search scans until autovacuum merges them again.
        result["lionmem searches, ms"] = {str(size): await lionmem_searches(store, 200)}
        rng = random.Random(seed + 1)
        rows: list[dict[str, Any]] = []

        def add(operation: str, pair: tuple[float, float]) -> None:
            rows.append({"operation": operation, "lionmem_ms": pair[0], "langgraph_ms": pair[1]})

        fresh = records(400, seed + 2, start=size)
        fresh_items = [item_of(record) for record in fresh]
        fresh_puts = [
            (str(item.id), value_of(r)) for item, r in zip(fresh_items, fresh, strict=True)
        ]
        add("put (autocommit)", await interleaved(
            lambda n: store.store(fresh_items[n]),
            lambda n: peer.aput(NAMESPACE, *fresh_puts[n]),
            list(range(400)),
        ))  # fmt: skip
        picks = [rng.randrange(size) for _ in range(1000)]
        add("get by id", await interleaved(
            lambda n: store.retrieve(items[n].id), lambda n: peer.aget(NAMESPACE, keys[n]), picks
        ))  # fmt: skip
        users = [f"user{rng.randrange(USERS)}" for _ in range(60)]
        by_user = {user: MemoryQuery(filters={"user": user}, limit=10) for user in users}
        first_page = MemoryQuery(limit=10)
        add("metadata equality, limit 10", await interleaved(
            lambda u: store.search(by_user[u]),
            lambda u: peer.asearch(NAMESPACE, filter={"user": u}, limit=10),
            users,
        ))  # fmt: skip
        add("list, limit 10", await interleaved(
            lambda _: store.search(first_page),
            lambda _: peer.asearch(NAMESPACE, limit=10),
            list(range(60)),
        ))  # fmt: skip
        result["comparison"] = rows
        # Without a writer first: what offset paging misses on its own (rows a batch wrote
        # share one updated_at, and offset pages split such ties differently), then with one.
        earlier = set(keys)
        result["sweep, no writer"] = {
            "lionmem": await sweep_lionmem(store, None, earlier),
            "langgraph": await sweep_langgraph(peer, None, earlier),
        }
        result["sweep while writing"] = {
            "lionmem": await sweep_lionmem(store, writer, earlier),
            "langgraph": await sweep_langgraph(peer, peer_writer, earlier),
        }
        extra = records(POOL * 250, seed + 3, start=2 * size)
        extra_items = [item_of(record) for record in extra]
        extra_puts = [
            (str(item.id), value_of(r)) for item, r in zip(extra_items, extra, strict=True)
        ]
        ours_rate, ours_wal = await wal_window(
            cluster_dsn, lambda: writers(lambda n: store.store(extra_items[n]), 250)
        )
        peer_rate, peer_wal = await wal_window(
            cluster_dsn, lambda: writers(lambda n: peer.aput(NAMESPACE, *extra_puts[n]), 250)
        )
        result["8 concurrent writers, puts/s"] = {"lionmem": ours_rate, "langgraph": peer_rate}
        result["WAL bytes per put, 8 writers"] = {
            "lionmem": ours_wal // len(extra),
            "langgraph": peer_wal // len(extra),
        }
    if large:
        async with PostgresMemoryStore(dsn_of("large"), namespace="bench", max_size=POOL) as big:
            rate = await fill_lionmem(big, [item_of(record) for record in records(large, seed)])
            await maintain(dsn_of("large"))
            result["bulk load items/s"]["lionmem at large"] = round(rate)
            result["lionmem searches, ms"][str(large)] = await lionmem_searches(big, 100)
    return result


def markdown(result: dict[str, Any]) -> str:
    size = result["size"]
    lines = [
        f"At {size:,} items (medians, ms; ratio = LangGraph / lionmem, above 1: lionmem faster)",
        "",
        "| operation | lionmem | LangGraph | ratio |",
        "|---|---:|---:|---:|",
    ]
    for row in result["comparison"]:
        ratio = row["langgraph_ms"] / row["lionmem_ms"]
        lines.append(
            f"| {row['operation']} | {row['lionmem_ms']} | {row['langgraph_ms']} | {ratio:.1f}x |"
        )
    writes = result["8 concurrent writers, puts/s"]
    lines.append(
        f"| 8 concurrent writers (puts/s) | {writes['lionmem']:,} | {writes['langgraph']:,} "
        f"| {writes['lionmem'] / writes['langgraph']:.1f}x |"
    )
    bulk = result["bulk load items/s"]
    lines.append(f"| bulk load, 1,000 a batch (items/s) | {bulk['lionmem']:,} | {bulk['langgraph']:,} "
                 f"| {bulk['lionmem'] / bulk['langgraph']:.1f}x |")  # fmt: skip
    for label in ("WAL bytes per item, bulk load", "WAL bytes per put, 8 writers"):
        pair = result[label]
        lines.append(f"| {label} | {pair['lionmem']:,} | {pair['langgraph']:,} | |")
    lines += [
        "",
        "Paging sweep over every item, 1,000 a page, without and then with a writer inserting:",
        "",
        "| store | writer | seconds | rows returned | distinct | earlier items missed |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for key, writing in (("sweep, no writer", "no"), ("sweep while writing", "yes")):
        for name, label in (("lionmem", "lionmem (keyset)"), ("langgraph", "LangGraph (offset)")):
            row = result[key][name]
            lines.append(
                f"| {label} | {writing} | {row['s']} | {row['rows']:,} | {row['distinct']:,} "
                f"| {row['missed']} |"
            )
    lines += [
        "",
        "lionmem searches with limit 10 (medians, ms):",
        "",
    ]
    sizes = list(result["lionmem searches, ms"])
    lines.append("| search | " + " | ".join(f"{int(s):,} items" for s in sizes) + " |")
    lines.append("|---|" + "---:|" * len(sizes))
    for label in result["lionmem searches, ms"][sizes[0]]:
        cells = " | ".join(str(result["lionmem searches, ms"][s][label]) for s in sizes)
        lines.append(f"| {label} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument(
        "--large", type=int, default=0, help="also time lionmem's searches at N items"
    )
    parser.add_argument("--seed", type=int, default=20260601)
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    cluster: Cluster | None = None
    try:
        # Autovacuum off: the tool vacuums after each load itself, and a background vacuum of one
        # database must not land in the other store's timed window.
        cluster = started_cluster(durable=True, settings={"autovacuum": "off"})
        databases = {
            name: cluster.fresh_database(name) for name in ("lionmem", "langgraph", "large")
        }
        assert cluster is not None
        own = cluster
        result = asyncio.run(
            run(lambda name: own.dsn(databases[name]), args.size, args.large, args.seed)
        )
    finally:
        if cluster is not None:
            cluster.destroy()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
