"""lionagi 0.36.0's own Branch and Session over LionagiMemoryStore, for every lionmem store."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import lionagi
import pytest

from lionmem import MemoryAdapterUnavailable, PostgresMemoryStore
from lionmem.integrations.lionagi import LionagiMemoryStore
from tests.integrations.stores import NewStore
from tests.postgres_support import started_cluster

ROOT = Path(__file__).resolve().parents[2]


async def test_a_standalone_branch_stores_and_finds_lionagi_items(new_store: NewStore) -> None:
    """Branch(memory=...) keeps the wrapper; what it stores comes back as lionagi items."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        branch = lionagi.Branch(memory=store)
        assert branch.memory is store
        item = lionagi.MemoryItem(content="the user prefers tabs", tags=["preference"])
        assert await branch.memory.store(item) == item.id
        found = await branch.memory.search(lionagi.MemoryQuery(text="TABS"))
        assert [type(i) for i in found] == [lionagi.MemoryItem]
        assert found == [item]
        assert found[0].model_dump() == item.model_dump()
        other = lionagi.Branch()
        assert await other.memory.search(lionagi.MemoryQuery()) == []  # its own InMemoryStore


async def test_a_session_shares_one_store_between_its_branches(new_store: NewStore) -> None:
    """Session(memory=...) gives the wrapper to its default, new and included branches alike."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        session = lionagi.Session(memory=store)
        planner = session.new_branch(name="planner")
        coder = lionagi.Branch(name="coder")
        session.include_branches(coder)
        assert session.memory is store
        assert all(b.memory is store for b in (session.default_branch, planner, coder))
        item = lionagi.MemoryItem(content="plan: parse, then test", metadata={"by": "planner"})
        await planner.memory.store(item)
        for reader in (coder, session.default_branch, session):
            found = await reader.memory.search(lionagi.MemoryQuery(filters={"by": "planner"}))
            assert [i.id for i in found] == [item.id]
            assert (await reader.memory.retrieve(item.id)) == item


async def test_the_first_claim_wins(new_store: NewStore) -> None:
    """A branch that already has a store keeps it when a session includes it; lionagi's rule."""
    async with new_store() as shared_wrapped, new_store() as private_wrapped:
        shared, private = LionagiMemoryStore(shared_wrapped), LionagiMemoryStore(private_wrapped)
        loner = lionagi.Branch(name="loner", memory=private)
        session = lionagi.Session(
            memory=shared, branches=lionagi.Pile([loner], item_type={lionagi.Branch})
        )
        assert loner.memory is private
        assert session.memory is shared
        assert session.default_branch.memory is shared
        await loner.memory.store(lionagi.MemoryItem(content="private"))
        await session.default_branch.memory.store(lionagi.MemoryItem(content="shared"))
        assert [i.content for i in await loner.memory.search(lionagi.MemoryQuery())] == ["private"]
        assert [i.content for i in await session.memory.search(lionagi.MemoryQuery())] == ["shared"]
        other = lionagi.Session()
        with pytest.raises(ValueError, match="already owned by session"):
            other.include_branches(loner)
        assert loner.memory is private


async def test_remove_branch_keeps_the_store(new_store: NewStore) -> None:
    """A removed branch keeps the session's store and its contents; reparenting keeps it too."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        session = lionagi.Session(memory=store)
        branch = session.new_branch(name="worker")
        item = lionagi.MemoryItem(content="kept")
        await branch.memory.store(item)
        session.remove_branch(branch)
        assert branch not in session.branches
        assert branch.memory is store
        assert (await branch.memory.retrieve(item.id)) == item
        adopter = lionagi.Session()
        adopter.include_branches(branch)
        assert branch.memory is store
        assert adopter.memory is not store
        assert [i.id for i in await branch.memory.search(lionagi.MemoryQuery())] == [item.id]


def outage_calls(memory: Any, known: UUID) -> list[Callable[[], Awaitable[object]]]:
    """Every lionagi call on ``memory``, a negative limit included (the wrapper asks twice for it)."""
    return [
        lambda: memory.store(lionagi.MemoryItem(content="during the outage")),
        lambda: memory.retrieve(known),
        lambda: memory.search(lionagi.MemoryQuery(tags=["plan"])),
        lambda: memory.search(lionagi.MemoryQuery(limit=-1)),
    ]


@pytest.mark.slow
async def test_a_stopped_postgresql_is_unavailable_to_every_branch_then_recovers() -> None:
    """With the server stopped, each branch of a session gets MemoryAdapterUnavailable from every
    call (a negative limit too); once it is back they see what was stored before, and only that."""
    cluster = started_cluster()
    store = LionagiMemoryStore(PostgresMemoryStore(cluster.dsn(), connect_timeout=2.0))
    try:
        session = lionagi.Session(memory=store)
        planner, coder = session.new_branch(name="planner"), session.new_branch(name="coder")
        kept = lionagi.MemoryItem(content="kept", tags=["plan"])
        await planner.memory.store(kept)
        cluster.stop()
        for branch in (planner, coder, session.default_branch):
            for call in outage_calls(branch.memory, kept.id):
                with pytest.raises(MemoryAdapterUnavailable, match="is unavailable"):
                    await call()
        cluster.start()
        for branch in (planner, coder):
            found = await branch.memory.search(lionagi.MemoryQuery(limit=100))
            assert [(i.id, i.content) for i in found] == [(kept.id, "kept")]
            assert await branch.memory.search(lionagi.MemoryQuery(limit=-1)) == []
    finally:
        await store.close()
        cluster.destroy()


def run_session(mode: str, path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tests.integrations.lionagi_session_process", mode, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_a_restarted_session_finds_what_the_first_one_stored(tmp_path: Path) -> None:
    """A session in a new process, on the same SQLite file, finds every item the first process stored."""
    path = tmp_path / "memory.db"
    assert run_session("write", path) == "stored\n"
    seen = json.loads(run_session("read", path))
    assert seen["same store"] is True
    assert seen["decision"] == ["00000000-0000-4000-8000-000000000002"]
    assert [(i["id"], i["created_at"], i["content"], i["tags"]) for i in seen["found"]] == [
        ("00000000-0000-4000-8000-000000000001", 1.25, {"plan": ["parse", "test"]}, ["plan"]),
        ("00000000-0000-4000-8000-000000000002", 2.5, "use sqlite", ["decision"]),
    ]
    assert list(seen["found"][0]["metadata"]) == ["branch"]
    assert seen["found"][1]["metadata"] == {}
