"""`make bench-cli`: throughput of `lionmem import` and `lionmem export` into SQLite, and their memory.

Items are the sample generator's (tools/make_sample.py: varied content, tags and metadata).
Each command runs as a subprocess of the installed console script, start-up included, timed by
wall clock. Beside it, in the same run and each in a process of its own, the baselines it is
compared with: the library's own bulk calls (``store_many`` of the parsed items for import;
``items()`` and ``model_dump_json`` for export) and, for export, the floor of reading the stored
JSON columns with sqlite3 and writing them out. Peak memory (maximum RSS) is each child's own,
read from its resource usage; a small launcher process starts every child, because a child
forked from a large process would start with that process's RSS as its peak.

Usage: python -m tools.bench_cli [--items 100000] [--large 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lionmem import MemoryItem, SQLiteMemoryStore
from tools.make_sample import iter_sample_items

LIONMEM = Path(sys.executable).parent / "lionmem"
ROOT = Path(__file__).resolve().parent.parent

# Runs one command per line of stdin ([argv, cwd, env] as JSON) and answers [seconds, exit
# status, max RSS in KiB]. It imports nothing big, so the children it forks start small.
_LAUNCHER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    argv, cwd, env = json.loads(line)
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    print(json.dumps([seconds, os.waitstatus_to_exitcode(status), usage.ru_maxrss]), flush=True)
"""


@dataclass(frozen=True)
class Run:
    """One subprocess: seconds and peak resident memory in MiB."""

    seconds: float
    max_rss_mib: float


class Launcher:
    """The small process that starts every measured command."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-c", _LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, argv: list[str], cwd: Path) -> Run:
        """Run ``argv`` in ``cwd`` and wait for it; fail loudly if it does not exit 0."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None  # both pipes were asked for
        assert stdout is not None
        stdin.write(json.dumps([argv, str(cwd), _env()]) + "\n")
        stdin.flush()
        seconds, status, max_rss_kib = json.loads(stdout.readline())
        if status != 0:
            msg = f"{' '.join(argv)} exited {status}"
            raise SystemExit(msg)
        return Run(seconds, max_rss_kib / 1024)  # ru_maxrss is in KiB on Linux

    def close(self) -> None:
        """End the launcher."""
        assert self._process.stdin is not None  # asked for at construction
        self._process.stdin.close()
        self._process.wait()


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "LIONMEM_DB"}
    env["PYTHONPATH"] = str(ROOT)  # the baselines run this module with -m
    return env


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


BASELINES: dict[str, Callable[[Path, Path], float]] = {
    "import": lambda source, db: asyncio.run(_library_import(source, db)),
    "export": lambda db, out: asyncio.run(_library_export(db, out)),
    "floor": _floor_export,
}


class Bench:
    """The measurements of one run, in one folder."""

    def __init__(self, launcher: Launcher, folder: Path) -> None:
        self.launcher = launcher
        self.folder = folder

    def cli(self, *args: str | Path) -> Run:
        """Run the console script."""
        return self.launcher.run([str(LIONMEM), *map(str, args)], self.folder)

    def baseline(self, name: str, first: Path, second: Path) -> Run:
        """Run one baseline in a process of its own: its own timing and its peak RSS."""
        timing = self.folder / "baseline.seconds"
        argv = [sys.executable, "-m", "tools.bench_cli", "--baseline", name]
        ran = self.launcher.run([*argv, str(first), str(second), str(timing)], self.folder)
        return Run(float(timing.read_text()), ran.max_rss_mib)


def _report(items: int, rounds: int, runs: dict[str, list[Run]]) -> list[str]:
    best = {name: min(r.seconds for r in found) for name, found in runs.items()}
    peak = {name: max(r.max_rss_mib for r in found) for name, found in runs.items()}
    lines = [
        f"## lionmem import / export, {items:,} items into SQLite (best of {rounds})",
        "",
        "| operation | seconds | items/s | time vs baseline | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = [
        ("`lionmem import` (start-up included)", "cli_import", "lib_import"),
        ("baseline: parse + `store_many`, one process", "lib_import", None),
        ("`lionmem export --out` (start-up included)", "cli_export", "lib_export"),
        ("baseline: `items()` + `model_dump_json`, one process", "lib_export", None),
        ("floor: sqlite3 rows written as they are", "floor", None),
    ]
    for label, name, against in rows:
        ratio = "" if against is None else f"{best[name] / best[against]:.2f}x"
        lines.append(
            f"| {label} | {best[name]:.2f} | {items / best[name]:,.0f} | {ratio} "
            f"| {peak[name]:.0f} MiB |"
        )
    return lines


def bench(folder: Path, items: int, large: int, rounds: int) -> str:
    """Run every measurement in ``folder``; return the Markdown report."""
    launcher = Launcher()
    try:
        run = Bench(launcher, folder)
        source = folder / "items.jsonl"
        write_sample(source, items)
        db, out = folder / "bench.db", folder / "out.jsonl"
        names = ("cli_import", "lib_import", "cli_export", "lib_export", "floor")
        runs: dict[str, list[Run]] = {name: [] for name in names}
        for _ in range(rounds):
            _fresh(db)
            runs["lib_import"].append(run.baseline("import", source, db))
            _fresh(db)
            runs["cli_import"].append(run.cli("import", source, "--db", db))
            runs["cli_export"].append(run.cli("export", "--db", db, "--out", out))
            if out.read_bytes() != source.read_bytes():
                raise SystemExit("the export differs from the imported file")
            runs["lib_export"].append(run.baseline("export", db, out))
            runs["floor"].append(run.baseline("floor", db, out))
        lines = _report(items, rounds, runs)
        if large:
            big = folder / "large.jsonl"
            write_sample(big, large)
            _fresh(db)
            imported = run.cli("import", big, "--db", db)
            big.unlink()
            exported = run.cli("export", "--db", db, "--out", out)
            out.unlink()
            small_export = max(r.max_rss_mib for r in runs["cli_export"])
            small_import = max(r.max_rss_mib for r in runs["cli_import"])
            lines += [
                "",
                f"## At {large:,} items (one run)",
                "",
                f"| operation | seconds | items/s | peak RSS | peak RSS vs at {items:,} |",
                "|---|---:|---:|---:|---:|",
                f"| `lionmem import` | {imported.seconds:.1f} | {large / imported.seconds:,.0f} "
                f"| {imported.max_rss_mib:.0f} MiB | {imported.max_rss_mib / small_import:.2f}x |",
                f"| `lionmem export --out` | {exported.seconds:.1f} | "
                f"{large / exported.seconds:,.0f} | {exported.max_rss_mib:.0f} MiB "
                f"| {exported.max_rss_mib / small_export:.2f}x |",
            ]
        return "\n".join(lines)
    finally:
        launcher.close()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=1_000_000, help="0 to skip")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline:
        name, first, second, timing = args.baseline
        Path(timing).write_text(repr(BASELINES[name](Path(first), Path(second))))
        return 0
    if not LIONMEM.exists():
        print(f"{LIONMEM} is missing: run make install", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lionmem-bench-cli-") as folder:
        print(bench(Path(folder), args.items, args.large, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
