"""How tools/bench_sqlite.py shares the machine between the stores it compares."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_sqlite", ROOT / "tools" / "bench_sqlite.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_sqlite", module)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_stores_take_turns_in_every_order_and_settle_after_their_bursts() -> None:
    """Bursts of BURST calls; the rounds go through every order of the stores; a store's settle
    runs after each of its bursts and counts as its deferred time, in its mean only."""
    log: list[str] = []

    def timed(name: str) -> Any:
        async def call(argument: int) -> float:
            log.append(f"{name}{argument}")
            return 1.0

        return call

    async def settle() -> None:
        log.append("settle")
        await asyncio.sleep(0.01)

    count = bench.BURST * 6
    turns = asyncio.run(
        bench.take_turns(
            {
                "a": (timed("a"), list(range(count)), settle),
                "b": (timed("b"), list(range(count)), None),
                "c": (timed("c"), list(range(count)), None),
            }
        )
    )
    rounds = [log[n : n + 3 * bench.BURST + 1] for n in range(0, len(log), 3 * bench.BURST + 1)]
    orders = ["".join(dict.fromkeys(e[0] for e in r if e != "settle")) for r in rounds]
    assert orders == ["abc", "acb", "bac", "bca", "cab", "cba"]
    assert all(
        r[r.index(f"a{n * bench.BURST}") + bench.BURST] == "settle" for n, r in enumerate(rounds)
    )
    assert [len(turns[name].samples) for name in "abc"] == [count] * 3
    assert turns["b"].deferred == 0.0
    assert turns["a"].deferred >= 0.06
    assert turns["a"].mean_us() == pytest.approx((count + turns["a"].deferred) / count * 1e6)


def test_contenders_with_different_numbers_of_arguments_are_refused() -> None:
    """Every store must get as many calls: a shorter list is an error, not a silent cut."""

    async def call(argument: int) -> float:
        return 0.0

    with pytest.raises(
        ValueError, match=r"^every contender needs as many arguments, got \[1, 2\]$"
    ):
        asyncio.run(bench.take_turns({"a": (call, [1], None), "b": (call, [1, 2], None)}))
