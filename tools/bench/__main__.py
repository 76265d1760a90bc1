"""Command line of the benchmark: ``python -m tools.bench [--sizes ...] [--out DIR] [--quick]``.

For each size it builds the seeded workload, fills every contender (tracing the memory each one
allocates), checks that all contenders return the same ids for every operation, then times the
operations: retrieve hit and miss, the searches, and ``store`` last (it grows the stores). The
construction benchmark follows. Results go to ``DIR/results.json``, ``DIR/results.md`` and
``DIR/chart.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import subprocess
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import version
from itertools import count
from pathlib import Path
from typing import Any
from uuid import UUID

from lionmem import MemoryItem
from tools.bench.contenders import CONTENDERS, Contender
from tools.bench.footprint import construction, traced_bytes
from tools.bench.report import evaluate_targets, write
from tools.bench.timing import Job, Plan, Stats, measure, set_clock
from tools.bench.workload import QUERIES, ItemSpec, make_specs

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SIZES = (1_000, 10_000, 100_000)
ROUNDS = {1_000: 31, 10_000: 25, 100_000: 21}
STORE_MAX_CALLS = 2_000  # per sample: keeps the stores close to their nominal size
RETRIEVE_KEYS = 1_000


def _machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head


def _ids(contender: Contender, found: Any) -> list[str]:
    if found is None:
        return []
    if isinstance(found, list):
        return contender.ids(found)
    return contender.ids([found])


def _check_same(op: str, answers: dict[str, list[str]]) -> None:
    """Every contender must return lionmem's ids, in lionmem's order."""
    expected = answers["lionmem"]
    for name, ids in answers.items():
        if ids != expected:
            msg = f"{op}: {name} returned {len(ids)} ids, lionmem {len(expected)}; they differ"
            raise SystemExit(msg)


def _cycle(keys: list[Any]) -> Any:
    position = count()

    def args(k: int) -> list[Any]:
        start = next(position) * k
        return [keys[(start + i) % len(keys)] for i in range(k)]

    return args


def _summary(stats: dict[str, Stats]) -> dict[str, Any]:
    contenders = {
        name: {"median_ns": s.median, "calls_per_sample": s.calls, "samples_ns": s.samples}
        for name, s in stats.items()
    }
    mine = stats["lionmem"].median
    ratios = {f"lionmem/{name}": mine / s.median for name, s in stats.items() if name != "lionmem"}
    return {"contenders": contenders, "ratios": ratios}


def _repeat(arg: Any) -> Any:
    def args(k: int) -> list[Any]:
        return [arg] * k

    return args


def _time_retrieves(
    loop: asyncio.AbstractEventLoop,
    contenders: dict[str, Contender],
    hits: list[UUID],
    misses: list[UUID],
    plan: Plan,
) -> dict[str, dict[str, Any]]:
    ops: dict[str, dict[str, Any]] = {}
    for op, ids in (("retrieve hit", hits), ("retrieve miss", misses)):
        jobs: dict[str, Job] = {}
        answers: dict[str, list[str]] = {}
        for name, contender in contenders.items():
            keys = [contender.key(i) for i in ids]
            # Every sample looks up each key once, for every contender: the memory a sample
            # touches does not depend on how fast the contender is.
            jobs[name] = Job(contender.retrieve, _cycle(keys), calls=len(keys))
            answers[name] = _ids(contender, loop.run_until_complete(contender.retrieve(keys[0])))
        _check_same(op, answers)
        ops[op] = _summary(measure(loop, jobs, plan))
        print(f"  {op}: {_brief(ops[op])}", flush=True)
    return ops


def _time_searches(
    loop: asyncio.AbstractEventLoop, contenders: dict[str, Contender], n: int, plan: Plan
) -> dict[str, dict[str, Any]]:
    ops: dict[str, dict[str, Any]] = {}
    for query in QUERIES:
        jobs: dict[str, Job] = {}
        answers: dict[str, list[str]] = {}
        for name, contender in contenders.items():
            call = contender.search(query, n)
            if call is None:
                continue
            fn, arg = call
            jobs[name] = Job(fn, _repeat(arg))
            answers[name] = _ids(contender, loop.run_until_complete(fn(arg)))
        _check_same(query.name, answers)
        ops[query.name] = _summary(measure(loop, jobs, plan))
        ops[query.name]["matches"] = len(answers["lionmem"])
        print(f"  {query.name}: {_brief(ops[query.name])}", flush=True)
    return ops


def _time_store(
    loop: asyncio.AbstractEventLoop, contenders: dict[str, Contender], seed: int, plan: Plan
) -> dict[str, Any]:
    streams = count(1)
    jobs: dict[str, Job] = {}
    for name, contender in contenders.items():

        def fresh(k: int, contender: Contender = contender) -> list[Any]:
            return contender.new_items(make_specs(k, seed, stream=next(streams)))

        jobs[name] = Job(contender.store, fresh, warm=False)
    store_plan = Plan(
        rounds=plan.rounds,
        target_ns=plan.target_ns,
        budget_ns=plan.budget_ns,
        min_rounds=plan.min_rounds,
        max_calls=STORE_MAX_CALLS,
    )
    entry = _summary(measure(loop, jobs, store_plan))
    print(f"  store: {_brief(entry)}", flush=True)
    return entry


def run_size(
    loop: asyncio.AbstractEventLoop, n: int, seed: int, plan: Plan, names: list[str]
) -> dict[str, Any]:
    """Fill every contender with the same ``n`` items, then time every operation."""
    print(f"N = {n:,}: building the workload", flush=True)
    specs = make_specs(n, seed)
    shared = [MemoryItem(**spec.kwargs()) for spec in specs]
    contenders: dict[str, Contender] = {name: CONTENDERS[name]() for name in names}
    memory: dict[str, float] = {}
    for name, contender in contenders.items():
        started = time.perf_counter()
        memory[name] = traced_bytes(loop, contender.fill(specs, shared)) / n
        print(f"  filled {name} in {time.perf_counter() - started:.1f} s", flush=True)
    rng = random.Random(f"{seed}:keys:{n}")
    hits = rng.sample([spec.id for spec in specs], min(n, RETRIEVE_KEYS))
    misses = [spec.id for spec in make_specs(RETRIEVE_KEYS, seed, stream=999_999)]
    ops = _time_retrieves(loop, contenders, hits, misses, plan)
    ops.update(_time_searches(loop, contenders, n, plan))
    stored = _time_store(loop, contenders, seed, plan)  # last: it grows the stores
    return {"ops": {"store": stored, **ops}, "memory_bytes_per_item": memory}


def _brief(entry: dict[str, Any]) -> str:
    parts = [
        f"{name} {value['median_ns'] / 1000:.2f} µs" for name, value in entry["contenders"].items()
    ]
    return ", ".join(parts) + f"; lionmem/floor {entry['ratios']['lionmem/floor']:.2f}x"


def run_construction(seed: int, rounds: int, calls: int) -> dict[str, Any]:
    """Median construction times of both call forms, with ratios."""
    specs: list[ItemSpec] = make_specs(calls, seed, stream=424_242)
    results = {}
    for form, full in (("content, tags, metadata", False), ("every field", True)):
        contenders = construction(specs, rounds, calls, full=full)
        mine = contenders["lionmem"]["median_ns"]
        results[form] = {
            "contenders": contenders,
            "ratios": {
                f"lionmem/{name}": mine / value["median_ns"]
                for name, value in contenders.items()
                if name != "lionmem"
            },
        }
        print(f"construction ({form}): {results[form]['ratios']}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write its results."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__)
    parser.add_argument(
        "--sizes",
        default=",".join(str(n) for n in DEFAULT_SIZES),
        help="comma-separated store sizes (default: %(default)s)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results", help="output folder")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="few rounds, for a smoke test")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time samples with the thread's CPU time (default) or the wall clock",
    )
    parser.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="comma-separated subset of %(default)s (lionmem and floor are always included)",
    )
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    names = [n for n in CONTENDERS if n in {"lionmem", "floor", *args.contenders.split(",")}]
    set_clock(args.clock)
    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    results: dict[str, Any] = {"sizes": {}}
    try:
        for n in sizes:
            rounds = 5 if args.quick else ROUNDS.get(n, 15)
            plan = Plan(rounds=rounds, budget_ns=300_000_000 if args.quick else 2_000_000_000)
            results["sizes"][str(n)] = run_size(loop, n, args.seed, plan, names)
    finally:
        loop.close()
    results["construction"] = run_construction(
        args.seed, rounds=5 if args.quick else 15, calls=500 if args.quick else 2_000
    )
    given = sys.argv[1:] if argv is None else argv
    command = " ".join(["python -m tools.bench", *given])
    results["meta"] = {
        "machine": _machine(),
        "python": platform.python_version(),
        "pydantic": version("pydantic"),
        "lionagi": version("lionagi") if "lionagi" in names else "not run",
        "langgraph": version("langgraph-checkpoint") if "langgraph" in names else "not run",
        "seed": args.seed,
        "commit": _commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": time.perf_counter() - started,
        "clock": "thread CPU time" if args.clock == "cpu" else "wall time",
        "command": command,
    }
    results["targets"] = evaluate_targets(results)
    for path in write(results, args.out):
        print(f"wrote {path}")
    met = sum(row["met"] for row in results["targets"])
    print(f"targets met: {met} of {len(results['targets'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
