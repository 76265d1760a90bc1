"""Memory per stored item (tracemalloc) and the cost of building a ``MemoryItem``.

Memory: the items are built first, then tracing starts and the store is filled; what the store
allocated, divided by the number of items, is its own memory per item beyond the items
themselves. Construction: ``MemoryItem(...)`` against a plain Pydantic model with the same fields
and defaults (and lionagi's ``MemoryItem``), interleaved round by round, medians of per-call times.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID, uuid4

from pydantic import BaseModel, Field

from lionmem import MemoryItem
from tools.bench.timing import clock
from tools.bench.workload import ItemSpec

__all__ = ["PlainItem", "construction", "traced_bytes"]


class PlainItem(BaseModel):
    """A plain Pydantic model with MemoryItem's fields and defaults, and nothing else."""

    id: UUID = Field(default_factory=uuid4)
    created_at: float = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)
    content: Any = None
    tags: list[str] = Field(default_factory=list)


def traced_bytes(loop: asyncio.AbstractEventLoop, run: Callable[[], Awaitable[Any]]) -> int:
    """Return the bytes still allocated after running ``run()`` under tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loop.run_until_complete(run())
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


def _kwargs(spec: ItemSpec, full: bool) -> dict[str, Any]:
    kwargs = spec.kwargs()
    if not full:
        del kwargs["id"], kwargs["created_at"]
    return kwargs


def construction(
    specs: list[ItemSpec], rounds: int, calls: int, *, full: bool
) -> dict[str, dict[str, Any]]:
    """Median ns per construction for lionmem, the plain model and lionagi, interleaved.

    ``full=False`` passes content, tags and metadata (the usual call: id and created_at come
    from their default factories); ``full=True`` passes every field, so every validator runs.
    """
    import lionagi

    classes: dict[str, Callable[..., Any]] = {
        "lionmem": MemoryItem,
        "plain pydantic": PlainItem,
        "lionagi": lionagi.MemoryItem,
    }
    samples: dict[str, list[float]] = {name: [] for name in classes}
    names = list(classes)
    gc.collect()
    gc.disable()
    try:
        for r in range(rounds + 1):
            turn = names[r % len(names) :] + names[: r % len(names)]
            for name in turn:
                cls = classes[name]
                batch = [_kwargs(specs[(r * calls + i) % len(specs)], full) for i in range(calls)]
                start = clock()
                for kwargs in batch:
                    cls(**kwargs)
                elapsed = clock() - start
                if r:  # round 0 warms up
                    samples[name].append(elapsed / calls)
            gc.collect()
    finally:
        gc.enable()
    return {
        name: {"median_ns": statistics.median(values), "samples": values, "calls": calls}
        for name, values in samples.items()
    }
