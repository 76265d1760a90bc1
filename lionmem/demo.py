"""The main job, ``make demo``: a short tour of what lionmem does, printed as it happens."""

from __future__ import annotations

import asyncio
import json

from pydantic import ValidationError

from lionmem import Branch, InMemoryStore, MemoryItem, MemoryQuery, Session, schemas


def _show(title: str) -> None:
    print(f"\n== {title}")


def main() -> None:
    """Build items and queries, validate JSON documents against the models, and print each step."""
    _show("Items, built from the generated models")
    items = [
        MemoryItem(content="Paris is the capital of France", tags=["geo", "fact"]),
        MemoryItem(
            content={"city": "İstanbul", "population": 15_460_000},
            tags=["geo"],
            metadata={"source": "census"},
            created_at="2020-01-01T00:00:00",
        ),
    ]
    for item in items:
        print(f"  {item.model_dump_json()}")

    _show("Queries")
    for query in (MemoryQuery(), MemoryQuery(text="paris", tags=["fact"], limit=5)):
        print(f"  {query.model_dump_json()}")

    _show("A JSON document from another client, validated by the model")
    document = json.dumps(
        {
            "id": "12345678-1234-5678-1234-567812345678",
            "created_at": 1577836800.0,
            "content": ["a", 1, None],
            "tags": ["imported"],
        }
    )
    loaded = MemoryItem.model_validate_json(document)
    print(f"  in:  {document}")
    print(f"  out: {loaded.model_dump_json()}")

    _show("A bad document is refused with the reason")
    bad = '{"content": "x", "tags": [1, 2], "colour": "red"}'
    try:
        MemoryItem.model_validate_json(bad)
    except ValidationError as error:
        print(f"  in:  {bad}")
        for problem in error.errors():
            print(f"  {'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}")

    _show("The schemas shipped with the package")
    for name, schema in schemas().items():
        print(f"  {name}: {schema['$id']}")

    asyncio.run(_seam())


def _describe(item: MemoryItem) -> str:
    return f"{item.content!r} tags={item.tags} metadata={item.metadata}"


async def _search(title: str, branch: Branch, query: MemoryQuery) -> None:
    found = await branch.memory.search(query)
    print(f"  {title}: {len(found)} found")
    for item in found:
        print(f"    - {_describe(item)}")


async def _seam() -> None:
    """Show who owns which store: a session's shared store and a branch's private one."""
    _show("A session: its branches share one store unless they bring their own")
    session = Session(name="travel planning")
    planner = session.default_branch
    assert planner is not None  # a Session always starts with a default branch
    researcher = session.new_branch(name="researcher")
    diary = session.new_branch(name="diary", memory=InMemoryStore())
    for branch in (planner, researcher, diary):
        shared = "shared session store" if branch.memory is session.memory else "private store"
        print(f"  branch {branch.name or 'default'!r}: {shared}")

    _show("Storing through branches")
    notes = [
        (planner, MemoryItem(content="Book the İstanbul flight", tags=["todo", "travel"])),
        (researcher, MemoryItem(content="Straße means street", tags=["language"])),
        (
            researcher,
            MemoryItem(
                content={"city": "Lyon", "dish": "quenelles"},
                tags=["food", "travel"],
                metadata={"source": "guidebook", "stars": 4},
            ),
        ),
        (diary, MemoryItem(content="Felt tired after the flight", tags=["mood"])),
    ]
    for branch, item in notes:
        await branch.memory.store(item)
        print(f"  {branch.name or 'default'} stored {_describe(item)}")

    _show("Searching (any branch on the shared store sees the others' writes)")
    await _search("text 'flight' from the planner", planner, MemoryQuery(text="flight"))
    await _search("text 'STRASSE' (lower(), not casefold())", planner, MemoryQuery(text="STRASSE"))
    await _search("text 'STRAßE'", planner, MemoryQuery(text="STRAßE"))
    await _search("tags any of ['travel']", researcher, MemoryQuery(tags=["travel"]))
    await _search("filters {'stars': 4.0}", researcher, MemoryQuery(filters={"stars": 4.0}))
    await _search("text 'flight' from the diary", diary, MemoryQuery(text="flight"))
    first = notes[0][1]
    found = await researcher.memory.retrieve(first.id)
    print(f"  retrieve the planner's note by id from the researcher: {found is first}")

    _show("Moving a branch to another session keeps its store")
    other = Session(name="next trip")
    session.remove_branch(researcher)
    other.include_branches(researcher)
    keeps = researcher.memory is session.memory
    print(f"  researcher now in {other.name!r}, still on the first session's store: {keeps}")


if __name__ == "__main__":
    main()
