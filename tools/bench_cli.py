"""`make bench-cli`: throughput of `lionmem import` and `lionmem export` into SQLite, and export's memory.

Items are the sample generator's (tools/make_sample.py: varied content, tags and metadata).
Each command runs as a subprocess of the installed console script, start-up included, timed by
wall clock; beside it, in the same run, the baselines it is compared with: the library's own
bulk calls in this process (``store_many`` of the parsed items for import; ``items()`` and
``model_dump_json`` for export) and, for export, the floor of reading the stored JSON columns
with sqlite3 and writing them out. Peak memory (maximum RSS) of an export is read from the
child's resource usage at N and at the large size: flat means the two are about equal.

Usage: python -m tools.bench_cli [--items 100000] [--large 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lionmem import MemoryItem, SQLiteMemoryStore
from tools.make_sample import iter_sample_items

LIONMEM = Path(sys.executable).parent / "lionmem"


@dataclass(frozen=True)
class Run:
    """One subprocess: wall time in seconds and peak resident memory in MiB."""

    seconds: float
    max_rss_mib: float


def run_command(*args: str | Path, cwd: Path) -> Run:
    """Run the console script once; fail loudly if it does not exit 0."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(LIONMEM), *map(str, args)], cwd=cwd, stdout=subprocess.DEVNULL, env=_env()
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        msg = f"lionmem {' '.join(map(str, args))} exited {process.returncode}"
        raise SystemExit(msg)
    return Run(elapsed, usage.ru_maxrss / 1024)  # ru_maxrss is in KiB on Linux


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "LIONMEM_DB"}


def write_sample(path: Path, count: int) -> None:
    """Write ``count`` sample items as JSON Lines, one at a time."""
    with path.open("w", encoding="utf-8") as out:
        for item in iter_sample_items(count):
            out.write(item.model_dump_json() + "\n")


def _fresh(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


async def _library_import(source: Path, db: Path) -> float:
    started = time.perf_counter()
    with source.open("rb") as lines:
        items = [MemoryItem.model_validate_json(line) for line in lines]
    async with SQLiteMemoryStore(db) as store:
        await store.store_many(items)
    return time.perf_counter() - started


async def _library_export(db: Path, out: Path) -> float:
    started = time.perf_counter()
    with out.open("w", encoding="utf-8") as sink:
        async with SQLiteMemoryStore(db) as store:
            async for item in store.items(batch_size=1000):
                sink.write(item.model_dump_json() + "\n")
    return time.perf_counter() - started


def _floor_export(db: Path, out: Path) -> float:
    started = time.perf_counter()
    conn = sqlite3.connect(db)
    with out.open("w", encoding="utf-8") as sink:
        rows = conn.execute(
            "SELECT id, created_at, metadata, content, tags FROM items ORDER BY seq"
        )
        for row in rows:
            sink.write(
                f'{{"id":"{row[0]}","created_at":{row[1]},"metadata":{row[2]},'
                f'"content":{row[3]},"tags":{row[4]}}}\n'
            )
    conn.close()
    return time.perf_counter() - started


def _best(values: list[float]) -> float:
    return min(values)


def bench(folder: Path, items: int, large: int, rounds: int) -> str:
    """Run every measurement in ``folder``; return the Markdown report."""
    source = folder / "items.jsonl"
    write_sample(source, items)
    db, out = folder / "bench.db", folder / "out.jsonl"
    cli_import, lib_import, cli_export, lib_export, floor_export = [], [], [], [], []
    export_rss = 0.0
    import_rss = 0.0
    for _ in range(rounds):
        _fresh(db)
        lib_import.append(asyncio.run(_library_import(source, db)))
        _fresh(db)
        ran = run_command("import", source, "--db", db, cwd=folder)
        cli_import.append(ran.seconds)
        import_rss = max(import_rss, ran.max_rss_mib)
        ran = run_command("export", "--db", db, "--out", out, cwd=folder)
        cli_export.append(ran.seconds)
        export_rss = max(export_rss, ran.max_rss_mib)
        if out.read_bytes() != source.read_bytes():
            raise SystemExit("the export differs from the imported file")
        lib_export.append(asyncio.run(_library_export(db, out)))
        floor_export.append(_floor_export(db, out))
    lines = [
        f"## lionmem import / export, {items:,} items into SQLite (best of {rounds})",
        "",
        "| operation | seconds | items/s | vs baseline |",
        "|---|---:|---:|---:|",
    ]

    def row(name: str, seconds: float, baseline: float | None) -> None:
        ratio = "" if baseline is None else f"{seconds / baseline:.2f}x the time"
        lines.append(f"| {name} | {seconds:.2f} | {items / seconds:,.0f} | {ratio} |")

    row("`lionmem import` (CLI, start-up included)", _best(cli_import), _best(lib_import))
    row("baseline: parse + `store_many` in-process", _best(lib_import), None)
    row("`lionmem export --out` (CLI, start-up included)", _best(cli_export), _best(lib_export))
    row("baseline: `items()` + `model_dump_json` in-process", _best(lib_export), None)
    row("floor: sqlite3 rows written as they are", _best(floor_export), None)
    lines += [
        "",
        f"Peak RSS at {items:,}: import {import_rss:.0f} MiB, export {export_rss:.0f} MiB.",
    ]
    if large:
        big = folder / "large.jsonl"
        write_sample(big, large)
        _fresh(db)
        imported = run_command("import", big, "--db", db, cwd=folder)
        big.unlink()
        exported = run_command("export", "--db", db, "--out", out, cwd=folder)
        out.unlink()
        lines += [
            "",
            f"## At {large:,} items",
            "",
            "| operation | seconds | items/s | peak RSS |",
            "|---|---:|---:|---:|",
            f"| `lionmem import` | {imported.seconds:.1f} | {large / imported.seconds:,.0f} "
            f"| {imported.max_rss_mib:.0f} MiB |",
            f"| `lionmem export --out` | {exported.seconds:.1f} | "
            f"{large / exported.seconds:,.0f} | {exported.max_rss_mib:.0f} MiB |",
            "",
            f"Export peak RSS at {large:,} items is {exported.max_rss_mib / export_rss:.2f}x "
            f"that at {items:,}.",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=1_000_000, help="0 to skip")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not LIONMEM.exists():
        print(f"{LIONMEM} is missing: run make install", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lionmem-bench-cli-") as folder:
        print(bench(Path(folder), args.items, args.large, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
