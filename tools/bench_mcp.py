"""Latency of a memory_search round trip through ``lionmem mcp`` over stdio, at N items.

Fills a SQLite file with N items (default 100,000), then times the same searches two ways in
one run: through the MCP server (the SDK's Python client starts ``python -m lionmem mcp`` and
calls ``memory_search``; the time covers the client, the JSON-RPC round trip over the pipes, the
server's checks and its answer) and directly on a ``SQLiteMemoryStore`` of the same file in
this process, the baseline. It prints a Markdown table of the medians and their ratio.

Usage: python tools/bench_mcp.py [--items 100000] [--rounds 200] [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from lionmem import MemoryItem, MemoryQuery, SQLiteMemoryStore

TOPICS = [f"topic{n:02d}" for n in range(50)]
QUERIES: dict[str, dict[str, Any]] = {
    "no predicate (limit 20)": {},
    "text, common (2% of items)": {"text": "TOPIC07"},
    "text, one item": {"text": "needle-77777"},
    "tags, any of two": {"tags": ["p3", "p5"]},
    "metadata filter": {"filters": {"n": 42}},
}


def item(index: int) -> MemoryItem:
    topic = TOPICS[index % len(TOPICS)]
    return MemoryItem(
        content=f"note {index} about {topic}: needle-{index}",
        tags=[topic, f"p{index % 10}"],
        metadata={"n": index % 100, "topic": topic},
        created_at=1_700_000_000 + index,
    )


async def fill(db: Path, count: int) -> None:
    async with SQLiteMemoryStore(db) as store:
        have = await store.count()
        if have == count:
            return
        if have:
            sys.exit(f"{db} holds {have} items, not {count}: give another --db")
        for start in range(0, count, 5000):
            await store.store_many(item(index) for index in range(start, min(start + 5000, count)))


def median_ms(samples: list[int]) -> float:
    return statistics.median(samples) / 1e6


async def through_mcp(db: Path, rounds: int) -> dict[str, float]:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "lionmem", "mcp", "--db", str(db)]
    )
    medians = {}
    async with Client(parameters) as client:
        await client.list_tools()
        for name, arguments in QUERIES.items():
            for _ in range(5):  # warm the page cache and the server
                await client.call_tool("memory_search", arguments)
            samples = []
            for _ in range(rounds):
                start = time.perf_counter_ns()
                result = await client.call_tool("memory_search", arguments)
                samples.append(time.perf_counter_ns() - start)
                assert not result.is_error, result.content
            medians[name] = median_ms(samples)
    return medians


async def direct(db: Path, rounds: int) -> dict[str, float]:
    medians = {}
    async with SQLiteMemoryStore(db) as store:
        for name, arguments in QUERIES.items():
            query = MemoryQuery.model_validate(arguments)
            for _ in range(5):
                await store.search(query)
            samples = []
            for _ in range(rounds):
                start = time.perf_counter_ns()
                await store.search(query)
                samples.append(time.perf_counter_ns() - start)
            medians[name] = median_ms(samples)
    return medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--db", type=Path, help="reuse or create this file (default: temporary)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lionmem-bench-mcp-") as tmp:
        db = args.db or Path(tmp) / "memory.db"
        started = time.perf_counter()
        asyncio.run(fill(db, args.items))
        print(f"{args.items:,} items in {db} ({time.perf_counter() - started:.1f} s to fill)\n")
        mcp = asyncio.run(through_mcp(db, args.rounds))
        baseline = asyncio.run(direct(db, args.rounds))
    print(f"memory_search, median of {args.rounds} calls each, {args.items:,} items (SQLite)\n")
    print("| query | MCP over stdio (ms) | store.search in process (ms) | ratio | MCP cost (ms) |")
    print("|---|---:|---:|---:|---:|")
    for name in QUERIES:
        ratio = mcp[name] / baseline[name]
        extra = mcp[name] - baseline[name]
        print(f"| {name} | {mcp[name]:.2f} | {baseline[name]:.2f} | {ratio:.1f}x | {extra:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
