"""Four client processes, each with its own ``lionmem mcp`` server, write one SQLite file at once.

Every acknowledged write must be there afterwards with every field exactly as sent: 4 x 500
stores, all in flight together within each client, 2,000 items in the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lionmem import SQLiteMemoryStore
from tests.mcp.concurrent_writer import expected_item
from tests.mcp.support import REPO

WRITERS = 4
EACH = 500


@pytest.mark.slow
async def test_four_servers_keep_every_acknowledged_write(tmp_path: Path) -> None:
    """All 2,000 stores are acknowledged, and all 2,000 items are in the file, field for field."""
    db = tmp_path / "memory.db"
    async with SQLiteMemoryStore(db):
        pass  # create the file first, so that no two servers race to create its tables
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.mcp.concurrent_writer", str(db), str(worker), str(EACH)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(WRITERS)
    ]
    reports = []
    for writer in writers:
        stdout, stderr = writer.communicate(timeout=600)
        assert writer.returncode == 0, stderr
        reports.append(json.loads(stdout))
    for worker, report in enumerate(reports):
        assert report["errors"] == []
        assert sorted(report["acknowledged"]) == sorted(
            expected_item(worker, index)["id"] for index in range(EACH)
        )
    async with SQLiteMemoryStore(db) as store:
        assert await store.count() == WRITERS * EACH
        stored = {str(item.id): item.model_dump(mode="json") async for item in store.items()}
    expected = {
        item["id"]: item
        for item in (expected_item(w, i) for w in range(WRITERS) for i in range(EACH))
    }
    assert stored.keys() == expected.keys()
    wrong = [key for key in expected if stored[key] != expected[key]]
    assert wrong == []
