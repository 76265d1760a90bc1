"""The generated tool documents: self-contained draft 2020-12 schemas that mean what schema/ means."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from lionmem._formats import format_checker
from lionmem.mcp._documents import tool_documents
from tests.mcp.support import REPO, documents

VECTORS = REPO / "tests" / "vectors"
SCHEMAS = {
    path.stem: json.loads(path.read_text(encoding="utf-8"))
    for path in sorted((REPO / "schema").glob("*.json"))
}


def _source_validator(name: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in SCHEMAS.values()
    )
    return Draft202012Validator(SCHEMAS[name], registry=registry, format_checker=format_checker())


def _alone(schema: dict[str, Any]) -> Draft202012Validator:
    # An empty registry: a reference that leaves the document cannot resolve.
    return Draft202012Validator(schema, registry=Registry(), format_checker=format_checker())


def _vectors(name: str) -> list[tuple[str, Any]]:
    return [
        (path.name, json.loads(path.read_text(encoding="utf-8"))["document"])
        for path in sorted((VECTORS / name).glob("*.json"))
    ]


def _pointer(schema: dict[str, Any], ref: str) -> Any:
    node: Any = schema
    for part in ref.removeprefix("#").split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _walk(node: Any) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((key, value))
            found.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_walk(value))
    return found


def test_the_index_lists_the_five_tools_in_order() -> None:
    """The server lists the tools in the order of the index, one generated file each."""
    names = [document.name for document in tool_documents()]
    assert names == [
        "memory_store",
        "memory_retrieve",
        "memory_search",
        "memory_delete",
        "memory_count",
    ]
    files = sorted(path.stem for path in (REPO / "generated" / "mcp").glob("*.json"))
    assert files == sorted([*names, "index"])


def test_only_delete_and_count_need_a_store_method() -> None:
    """memory_delete and memory_count are listed only for stores with delete() and count()."""
    assert {name: document.requires for name, document in documents().items()} == {
        "memory_store": None,
        "memory_retrieve": None,
        "memory_search": None,
        "memory_delete": "delete",
        "memory_count": "count",
    }


@pytest.mark.parametrize("name", [document.name for document in tool_documents()])
def test_schemas_are_self_contained_draft_2020_12(name: str) -> None:
    """Each schema is valid 2020-12 with an object root, no $id, and only #-pointers as $ref."""
    document = documents()[name]
    for schema in (document.input_schema, document.output_schema):
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object"
        pairs = _walk(schema)
        assert [key for key, _ in pairs if key == "$id"] == []
        refs = [value for key, value in pairs if key == "$ref"]
        assert all(ref.startswith("#") for ref in refs), refs
        for ref in refs:
            assert isinstance(_pointer(schema, ref), dict), ref


def test_store_input_is_the_memory_item_schema() -> None:
    """memory_store's input accepts exactly the MemoryItem documents schema/ accepts."""
    bundled = _alone(documents()["memory_store"].input_schema)
    source = _source_validator("memory_item")
    vectors = _vectors("memory_item")
    assert len(vectors) > 20
    for file, document in vectors:
        assert bundled.is_valid(document) == source.is_valid(document), file


def test_search_input_is_the_memory_query_schema() -> None:
    """memory_search's input accepts exactly the MemoryQuery documents schema/ accepts."""
    bundled = _alone(documents()["memory_search"].input_schema)
    source = _source_validator("memory_query")
    vectors = _vectors("memory_query")
    assert len(vectors) > 15
    for file, document in vectors:
        assert bundled.is_valid(document) == source.is_valid(document), file


@pytest.mark.parametrize(
    ("tool", "wrap"),
    [
        ("memory_retrieve", lambda item: {"item": item}),
        ("memory_search", lambda item: {"items": [item], "limit": 1, "omitted": []}),
    ],
)
def test_output_items_are_memory_items(tool: str, wrap: Any) -> None:
    """The items in retrieve and search results are held to the MemoryItem schema."""
    bundled = _alone(documents()[tool].output_schema)
    source = _source_validator("memory_item")
    for file, document in _vectors("memory_item"):
        if document is None and tool == "memory_retrieve":
            continue  # null is what retrieve answers for an id with no item
        assert bundled.is_valid(wrap(document)) == source.is_valid(document), file


def test_output_schemas_reject_what_the_server_never_sends() -> None:
    """Unknown keys, a missing field and a negative count fail the output schemas."""
    schemas = {name: _alone(document.output_schema) for name, document in documents().items()}
    assert not schemas["memory_store"].is_valid({"id": "not-a-uuid"})
    assert not schemas["memory_retrieve"].is_valid({})
    assert not schemas["memory_search"].is_valid({"items": [], "limit": 1})
    assert not schemas["memory_search"].is_valid(
        {"items": [], "limit": 1, "omitted": [{"id": "0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d"}]}
    )
    assert not schemas["memory_count"].is_valid({"count": -1})
    assert not schemas["memory_delete"].is_valid({"deleted": True, "extra": 1})
    assert schemas["memory_retrieve"].is_valid({"item": None})


def test_the_documents_are_the_generated_files() -> None:
    """What the server loads is the committed files under generated/mcp/, byte for byte parsed."""
    for name, document in documents().items():
        raw = json.loads((REPO / "generated" / "mcp" / f"{name}.json").read_text(encoding="utf-8"))
        assert raw["tool"] == document.tool
        assert raw["$comment"].startswith("Generated from schema/")


def test_tool_spec_refers_to_schema_documents_only_by_id() -> None:
    """The spec names schema/ documents by $id, so bundling never depends on file names."""
    spec = json.loads(Path(REPO / "tools" / "codegen" / "mcp_tools.json").read_text("utf-8"))
    ids = {schema["$id"] for schema in SCHEMAS.values()}
    refs = [value for key, value in _walk(spec) if key == "$ref"]
    assert refs
    assert set(refs) <= ids
