"""The main job, ``make demo``: a short tour of what lionmem does, printed as it happens."""

from __future__ import annotations

import json

from pydantic import ValidationError

from lionmem import MemoryItem, MemoryQuery, schemas


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


if __name__ == "__main__":
    main()
