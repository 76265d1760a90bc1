"""One writer of the concurrency test: its own ``lionmem mcp`` server over stdio, COUNT stores at once.

Run as ``python -m tests.mcp.concurrent_writer DB WORKER COUNT`` from the repository root. It
prints one JSON line: the ids every acknowledged store returned, and the errors, if any.
``expected_item(worker, index)`` is the item each store sends, so the test can check every field.
"""

from __future__ import annotations

import json
import sys
from typing import Any
from uuid import NAMESPACE_URL, uuid5

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def expected_item(worker: int, index: int) -> dict[str, Any]:
    """The item writer ``worker`` stores at position ``index``: every field set, none trivial."""
    return {
        "id": str(uuid5(NAMESPACE_URL, f"lionmem-mcp-concurrency/{worker}/{index}")),
        "created_at": 1_700_000_000 + worker * 10_000 + index + 0.125,
        "metadata": {
            "worker": worker,
            "index": index,
            "note": f"w{worker}-ü-{index}",
            "odd": index % 2 == 1,
        },
        "content": {"text": f"writer {worker} item {index}", "values": [index, index / 8, None]},
        "tags": [f"worker-{worker}", f"mod-{index % 7}"],
    }


async def write(db: str, worker: int, count: int) -> dict[str, Any]:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "lionmem", "mcp", "--db", db]
    )
    acknowledged: list[str] = []
    errors: list[str] = []
    async with Client(parameters, read_timeout_seconds=120) as client:

        async def store(index: int) -> None:
            result = await client.call_tool("memory_store", expected_item(worker, index))
            if result.is_error:
                errors.append(str(result.content))
            else:
                acknowledged.append(result.structured_content["id"])

        async with anyio.create_task_group() as group:
            for index in range(count):
                group.start_soon(store, index)
    return {"worker": worker, "acknowledged": acknowledged, "errors": errors}


def main() -> None:
    db, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(anyio.run(write, db, worker, count)))


if __name__ == "__main__":
    main()
