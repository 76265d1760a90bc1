"""MemoryTools in process: what each tool answers, the limits, the size cap and every error path."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_types import JSONRPCResponse, jsonrpc_message_adapter
from pydantic_core import to_json

from lionmem import InMemoryStore, MemoryItem, MemoryQuery, SQLiteMemoryStore
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable, UnknownToolError
from lionmem.mcp import MemoryTools, ToolResult
from lionmem.mcp._bounds import (
    ENVELOPE,
    OMITTED_ENTRY,
    SEARCH_FRAME,
    check_limits,
    cost,
    result_size,
)

ITEM: dict[str, Any] = {
    "id": "0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d",
    "created_at": 1700000000.25,
    "metadata": {"project": "atlas", "stars": 4},
    "content": {"text": "The Atlas launch moved to Friday", "parts": [1, 2.5, None]},
    "tags": ["launch", "atlas"],
}


def ok(result: ToolResult) -> Any:
    assert result.is_error is False, result.text
    assert json.loads(result.text) == result.structured
    return result.structured


def error(result: ToolResult) -> str:
    assert result.is_error is True
    assert result.structured is None
    return result.text


@pytest.fixture
async def sqlite_tools() -> Any:
    store = SQLiteMemoryStore(":memory:")
    yield MemoryTools(store), store
    await store.close()


async def test_store_retrieve_search_round_trip(sqlite_tools: Any) -> None:
    """An item stored through the tools comes back from retrieve and search, every field exact."""
    tools, store = sqlite_tools
    assert ok(await tools.call("memory_store", ITEM)) == {"id": ITEM["id"]}
    assert ok(await tools.call("memory_retrieve", {"id": ITEM["id"]})) == {"item": ITEM}
    assert ok(await tools.call("memory_search", {"text": "atlas LAUNCH"})) == {
        "items": [ITEM],
        "limit": 20,
        "omitted": [],
    }
    stored = await store.retrieve(UUID(ITEM["id"]))
    assert stored == MemoryItem.model_validate(ITEM)
    assert stored.model_dump(mode="json") == ITEM


async def test_store_without_id_generates_one(sqlite_tools: Any) -> None:
    """An item without an id gets a fresh version-4 UUID, which the result returns."""
    tools, store = sqlite_tools
    result = ok(await tools.call("memory_store", {"content": "no id"}))
    assert UUID(result["id"]).version == 4
    stored = await store.retrieve(UUID(result["id"]))
    assert stored is not None
    assert stored.content == "no id"


async def test_store_replaces_an_item_with_the_same_id(sqlite_tools: Any) -> None:
    """Storing an id again replaces the item whole, in place."""
    tools, _ = sqlite_tools
    ok(await tools.call("memory_store", ITEM))
    replacement = {**ITEM, "content": "new", "tags": [], "metadata": {}}
    ok(await tools.call("memory_store", replacement))
    assert ok(await tools.call("memory_retrieve", {"id": ITEM["id"]})) == {"item": replacement}
    assert ok(await tools.call("memory_count", {})) == {"count": 1}


async def test_retrieve_of_an_unknown_id_is_null(sqlite_tools: Any) -> None:
    """retrieve answers item null, not an error, for an id with no item."""
    tools, _ = sqlite_tools
    assert ok(await tools.call("memory_retrieve", {"id": ITEM["id"]})) == {"item": None}


async def test_delete_and_count(sqlite_tools: Any) -> None:
    """delete says whether there was an item; count follows."""
    tools, _ = sqlite_tools
    ok(await tools.call("memory_store", ITEM))
    assert ok(await tools.call("memory_count", {})) == {"count": 1}
    assert ok(await tools.call("memory_delete", {"id": ITEM["id"]})) == {"deleted": True}
    assert ok(await tools.call("memory_delete", {"id": ITEM["id"]})) == {"deleted": False}
    assert ok(await tools.call("memory_count", {})) == {"count": 0}


async def test_a_store_without_delete_and_count_has_three_tools() -> None:
    """InMemoryStore has no delete() or count(): those tools are neither listed nor callable."""
    tools = MemoryTools(InMemoryStore())
    assert [document.name for document in tools.documents] == [
        "memory_store",
        "memory_retrieve",
        "memory_search",
    ]
    with pytest.raises(
        UnknownToolError,
        match="unknown tool 'memory_count'; this server has memory_store, memory_retrieve, memory_search",
    ):
        await tools.call("memory_count", {})


async def test_search_limit_is_capped_by_max_limit() -> None:
    """A limit above the maximum is lowered to it and the applied limit is returned."""
    store = InMemoryStore()
    tools = MemoryTools(store, max_limit=3)
    for index in range(5):
        ok(await tools.call("memory_store", {"content": f"note {index}"}))
    result = ok(await tools.call("memory_search", {"limit": 10}))
    assert result["limit"] == 3
    assert [hit["content"] for hit in result["items"]] == ["note 0", "note 1", "note 2"]
    assert ok(await tools.call("memory_search", {"limit": 2}))["limit"] == 2
    assert ok(await tools.call("memory_search", {}))["limit"] == 3  # the default 20, lowered


async def test_search_without_a_limit_uses_the_schema_default() -> None:
    """A query without limit gets MemoryQuery's default of 20."""
    store = InMemoryStore()
    tools = MemoryTools(store)
    for index in range(25):
        await store.store(MemoryItem(content=index))
    result = ok(await tools.call("memory_search", {}))
    assert (len(result["items"]), result["limit"]) == (20, MemoryQuery().limit)


async def test_negative_limit_is_refused_even_where_the_store_would_slice() -> None:
    """InMemoryStore slices a negative limit from the end; the server refuses it (unbounded)."""
    store = InMemoryStore()
    await store.store(MemoryItem(content="a"))
    tools = MemoryTools(store)
    assert error(await tools.call("memory_search", {"limit": -1})) == (
        "limit must be 0 or more, got -1 (this server does not count from the end)"
    )


@pytest.mark.parametrize(
    ("limit", "applied"),
    [(1e30, 100), (10**30, 100), (2.0**64, 100), (2**64, 100), (1e3, 100), (5.0, 5), (0.0, 0)],
)
async def test_a_limit_is_an_integer_however_it_is_written(limit: float, applied: int) -> None:
    """A limit is a JSON Schema integer: a number without a fraction, written as a float (1e30)
    or not; above the maximum it is lowered to it, whatever its size."""
    store = InMemoryStore()
    for index in range(6):
        await store.store(MemoryItem(content=index))
    result = ok(await MemoryTools(store).call("memory_search", {"limit": limit}))
    assert (result["limit"], len(result["items"])) == (applied, min(applied, 6))


@pytest.mark.parametrize(
    ("limit", "shown"),
    [
        (-1e30, "-1000000000000000019884624838656"),
        (-(10**30), "-1000000000000000000000000000000"),
        (-3.0, "-3"),
    ],
)
async def test_a_negative_limit_is_refused_however_it_is_written(limit: float, shown: str) -> None:
    """A negative limit, float or int, is refused with the integer it equals."""
    tools = MemoryTools(InMemoryStore())
    assert error(await tools.call("memory_search", {"limit": limit})) == (
        f"limit must be 0 or more, got {shown} (this server does not count from the end)"
    )


@pytest.mark.parametrize("limit", [1.5, float("inf"), float("nan"), True, "5"])
async def test_a_limit_that_is_no_integer_is_refused(limit: Any) -> None:
    """A fraction, an infinity, NaN, a boolean or a string is not an integer."""
    tools = MemoryTools(InMemoryStore())
    assert error(await tools.call("memory_search", {"limit": limit})) == (
        f"invalid arguments for memory_search: limit: {limit!r} is not of type 'integer'"
    )


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        (
            "memory_store",
            {"tags": [1]},
            "invalid arguments for memory_store: tags[0]: 1 is not of type 'string'",
        ),
        (
            "memory_store",
            {"created_at": "2020-01-01"},
            "invalid arguments for memory_store: created_at: '2020-01-01' is not of type 'number'",
        ),
        (
            "memory_store",
            {"metadata": {"lion_class": "MemoryItem"}},
            "invalid arguments for memory_store: metadata: Value error, Metadata class mismatch.",
        ),
        (
            "memory_retrieve",
            {"id": "12345"},
            "invalid arguments for memory_retrieve: id: '12345' is not a 'uuid'",
        ),
        (
            "memory_retrieve",
            {"id": ITEM["id"], "deep": True},
            "invalid arguments for memory_retrieve: arguments: Additional properties are not "
            "allowed ('deep' was unexpected)",
        ),
        (
            "memory_search",
            {"filters": []},
            "invalid arguments for memory_search: filters: [] is not of type 'object', 'null'",
        ),
        (
            "memory_count",
            {"all": True},
            "invalid arguments for memory_count: arguments: Additional properties are not "
            "allowed ('all' was unexpected)",
        ),
    ],
)
async def test_bad_arguments_are_errors_naming_the_problem(
    sqlite_tools: Any, name: str, arguments: dict[str, Any], message: str
) -> None:
    """Arguments the input schema or the model refuses give an error result, and write nothing."""
    tools, store = sqlite_tools
    assert error(await tools.call(name, arguments)) == message
    assert await store.count() == 0


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"content": float("nan")}, "content: nan"),
        ({"content": [1, {"a b": [float("-inf")]}]}, "content[1]['a b'][0]: -inf"),
        ({"content": "x", "metadata": {"k": {"x": float("inf")}}}, "metadata.k.x: inf"),
        ({"content": [float("nan"), float("inf")]}, "content[0]: nan"),
    ],
)
@pytest.mark.parametrize("store_kind", ["sqlite", "memory"])
async def test_nan_and_infinity_are_refused_before_the_store(
    arguments: dict[str, Any], problem: str, store_kind: str
) -> None:
    """The SDK's parsers read NaN and Infinity; no store keeps them exactly (SQLite refuses them,
    InMemoryStore would send null back), so memory_store refuses them naming where they are."""
    store = SQLiteMemoryStore(":memory:") if store_kind == "sqlite" else InMemoryStore()
    try:
        assert error(await MemoryTools(store).call("memory_store", arguments)) == (
            f"invalid arguments for memory_store: {problem} is not a JSON number (JSON has no "
            "NaN or Infinity)"
        )
        assert await store.search(MemoryQuery()) == []
    finally:
        if isinstance(store, SQLiteMemoryStore):
            await store.close()


async def test_problems_quoting_huge_values_are_cut() -> None:
    """jsonschema quotes the value at fault: each problem is shown up to 300 characters, with
    its length, and every problem is still listed."""
    tools = MemoryTools(InMemoryStore())
    text = error(await tools.call("memory_retrieve", {"id": "y" * 10**6, "other": 1}))
    problems = [
        f"id: {'y' * 10**6!r} is not a 'uuid'",
        "arguments: Additional properties are not allowed ('other' was unexpected)",
    ]
    assert text == (
        f"invalid arguments for memory_retrieve: {problems[0][:300]}… ({len(problems[0])} "
        f"characters in all); {problems[1]}"
    )


async def test_an_unknown_tool_of_a_huge_name_is_named_cut() -> None:
    """The name of an unknown tool is quoted up to 300 characters."""
    name = "n" * 10**6
    with pytest.raises(UnknownToolError) as raised:
        await MemoryTools(InMemoryStore()).call(name, {})
    assert str(raised.value) == (
        f"unknown tool {repr(name)[:300]}… ({len(name) + 2} characters in all); this server "
        "has memory_store, memory_retrieve, memory_search"
    )


@pytest.mark.parametrize("max_bytes", [ENVELOPE + SEARCH_FRAME, 5000, 300_000, 1_300_000])
async def test_any_error_fits_the_response_cap(max_bytes: int) -> None:
    """A store error of any length (here 100,000 emoji, twelve bytes each in JSON that escapes
    every character outside ASCII) is cut to fit the cap, saying how long it was; one that fits
    is whole."""
    message = "\U0001f981" * 100_000
    tools = MemoryTools(
        _FailingStore(MemoryAdapterError(message)), max_limit=0, max_bytes=max_bytes
    )
    text = error(await tools.call("memory_search", {}))
    whole = f"the store failed: {message}"
    assert ENVELOPE + len(json.dumps(text)) <= max_bytes
    if max_bytes == 1_300_000:  # room for 1,200,000 bytes of escapes
        assert text == whole
    else:
        kept = (max_bytes - ENVELOPE - 64) // 12
        assert text == f"{whole[:kept]}… ({len(whole)} characters in all)"


async def test_more_than_five_problems_are_summarised(sqlite_tools: Any) -> None:
    """An error message lists five problems and counts the rest."""
    tools, _ = sqlite_tools
    message = error(await tools.call("memory_store", {"tags": list(range(12))}))
    assert message.endswith("tags[4]: 4 is not of type 'string'; and 7 more")
    assert message.count("is not of type 'string'") == 5


async def test_absent_arguments_count_as_an_empty_object(sqlite_tools: Any) -> None:
    """A call without arguments is the call with {}."""
    tools, _ = sqlite_tools
    assert ok(await tools.call("memory_count", None)) == {"count": 0}
    assert ok(await tools.call("memory_search", None)) == {"items": [], "limit": 20, "omitted": []}


async def test_a_closed_store_is_reported_unavailable() -> None:
    """After the store is closed every tool answers an error saying nothing was done."""
    store = SQLiteMemoryStore(":memory:")
    tools = MemoryTools(store)
    await store.close()
    text = error(await tools.call("memory_store", {"content": "late"}))
    assert text.startswith("the store is unavailable, nothing was done: ")
    assert error(await tools.call("memory_search", {})).startswith("the store is unavailable")


class _FailingStore:
    """A store whose every call raises the given exception."""

    def __init__(self, exception: Exception) -> None:
        self.exception = exception

    async def store(self, item: MemoryItem) -> UUID:
        raise self.exception

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        raise self.exception

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        raise self.exception


@pytest.mark.parametrize(
    ("exception", "message"),
    [
        (
            MemoryAdapterUnavailable("disk gone"),
            "the store is unavailable, nothing was done: disk gone",
        ),
        (MemoryAdapterError("row damaged"), "the store failed: row damaged"),
        (RuntimeError("boom"), "memory_store failed: RuntimeError: boom"),
    ],
)
async def test_a_failed_write_is_never_reported_as_stored(
    exception: Exception, message: str
) -> None:
    """Whatever a store raises, the result is an error with its message, not an id."""
    tools = MemoryTools(_FailingStore(exception))
    assert error(await tools.call("memory_store", {"content": "x"})) == message


async def test_an_unsupported_query_is_an_error() -> None:
    """UnsupportedMemoryQuery from the store becomes an error naming the rejected keys."""
    from lionmem.errors import UnsupportedMemoryQuery

    tools = MemoryTools(_FailingStore(UnsupportedMemoryQuery(["colour"])))
    assert error(await tools.call("memory_search", {"filters": {"colour": "red"}})) == (
        "the store cannot answer this query: unsupported memory query keys: colour"
    )


async def test_a_query_past_the_store_s_tag_cap_says_why() -> None:
    """The store's note on an unsupported query (its cap on distinct tags) is in the error."""
    async with SQLiteMemoryStore(":memory:") as store:
        tools = MemoryTools(store)
        tags = [f"t{n}" for n in range(10_001)]
        assert error(await tools.call("memory_search", {"tags": tags})) == (
            "the store cannot answer this query: unsupported memory query keys: tags; a query "
            "may hold at most 10,000 distinct tags; this one holds 10,001"
        )


def _sized(index: int, size: int) -> MemoryItem:
    return MemoryItem(
        id=UUID(int=index + 1), created_at=float(index), content="x" * size, tags=[f"t{index}"]
    )


async def test_hits_over_the_cap_are_listed_in_omitted_not_cut() -> None:
    """A hit that would overflow the response is left out whole and reported with its size."""
    store = InMemoryStore()
    max_bytes = 10_000
    tools = MemoryTools(store, max_limit=5, max_bytes=max_bytes)
    sizes = [1000, 6000, 500, 3000, 200]
    for index, size in enumerate(sizes):
        await store.store(_sized(index, size))
    result = ok(await tools.call("memory_search", {}))
    kept = [hit["content"] for hit in result["items"]]
    assert all(set(text) == {"x"} for text in kept)  # whole, never shortened
    assert [len(text) for text in kept] == [1000, 500, 200]
    assert result["omitted"] == [
        {"id": str(UUID(int=2)), "bytes": len(to_json(_sized(1, 6000).model_dump(mode="json")))},
        {"id": str(UUID(int=4)), "bytes": len(to_json(_sized(3, 3000).model_dump(mode="json")))},
    ]
    assert result_size(result) <= max_bytes


async def test_an_item_too_large_for_a_response_is_not_stored() -> None:
    """memory_store refuses an item it could never send back, and writes nothing."""
    store = InMemoryStore()
    tools = MemoryTools(store, max_limit=1, max_bytes=5000)
    text = error(await tools.call("memory_store", {"content": "y" * 3000}))
    assert text.startswith("the item is ")
    assert text.endswith(
        "bytes as a response, over this server's cap of 5000 bytes; it is not sent cut short"
    )
    assert await store.search(MemoryQuery()) == []


async def test_retrieve_of_an_item_over_the_cap_is_an_error() -> None:
    """An item stored some other way that is too large to send is an error naming its size."""
    store = InMemoryStore()
    await store.store(_sized(0, 9000))
    tools = MemoryTools(store, max_limit=1, max_bytes=5000)
    size = result_size({"item": _sized(0, 9000).model_dump(mode="json")})
    assert error(await tools.call("memory_retrieve", {"id": str(UUID(int=1))})) == (
        f"item {UUID(int=1)} is {size} bytes as a response, over this server's cap of 5000 "
        "bytes; it is not sent cut short"
    )


@given(
    sizes=st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
    max_limit=st.integers(min_value=0, max_value=12),
    text=st.sampled_from(["x", '"', "\\", "\u00e9", "\x01"]),
)
async def test_a_search_result_always_fits_and_accounts_for_every_hit(
    sizes: list[int], max_limit: int, text: str
) -> None:
    """Every hit up to the limit is either in items or in omitted, in order, and the result fits."""
    store = InMemoryStore()
    for index, size in enumerate(sizes):
        await store.store(MemoryItem(id=UUID(int=index + 1), content=text * size))
    max_bytes = ENVELOPE + SEARCH_FRAME + OMITTED_ENTRY * max_limit + 3000
    tools = MemoryTools(store, max_limit=max_limit, max_bytes=max_bytes)
    result = ok(await tools.call("memory_search", {"limit": 12}))
    hits = [str(UUID(int=index + 1)) for index in range(min(len(sizes), max_limit))]
    kept = [hit["id"] for hit in result["items"]]
    omitted = [entry["id"] for entry in result["omitted"]]
    assert sorted(kept + omitted) == sorted(hits)
    assert kept == [hit for hit in hits if hit in kept]
    assert omitted == [hit for hit in hits if hit in omitted]
    assert result_size(result) <= max_bytes
    for hit in result["items"]:
        assert hit["content"] == text * sizes[UUID(hit["id"]).int - 1]


def test_a_cap_too_small_for_the_limit_is_refused() -> None:
    """The cap must leave room to report every hit of a full search as omitted."""
    check_limits(10, ENVELOPE + SEARCH_FRAME + OMITTED_ENTRY * 10)
    with pytest.raises(
        ValueError,
        match=(
            r"^a response cap of 2000 bytes is too small for a maximum search limit of 10: "
            r"at least 2824 bytes are needed to list every hit left out$"
        ),
    ):
        check_limits(10, 2000)
    with pytest.raises(ValueError, match="must be 0 or more, got -1"):
        MemoryTools(InMemoryStore(), max_limit=-1)


async def test_an_unknown_tool_raises() -> None:
    """An unknown tool name is not a tool error but UnknownToolError (a protocol error upstream)."""
    with pytest.raises(UnknownToolError, match="unknown tool 'memory_forget'"):
        await MemoryTools(InMemoryStore()).call("memory_forget", {})


def test_the_reserves_bound_what_they_reserve_for() -> None:
    """SEARCH_FRAME covers an empty search result and OMITTED_ENTRY the largest omitted entry."""
    empty = {"items": [], "limit": 2**63, "omitted": []}
    assert result_size(empty) - ENVELOPE <= SEARCH_FRAME
    entry = {"id": str(UUID(int=2**128 - 1)), "bytes": 2**64}
    assert cost(entry) <= OMITTED_ENTRY


def _nested(levels: int, innermost: Any = 1) -> Any:
    """A JSON value: ``levels`` lists around ``innermost``."""
    value = innermost
    for _ in range(levels):
        value = [value]
    return value


def _search_message(structured: dict[str, Any]) -> bytes:
    """The JSON-RPC response the server sends for a tool result, as a client reads it."""
    result = {
        "content": [{"type": "text", "text": to_json(structured).decode()}],
        "structuredContent": structured,
        "isError": False,
    }
    return to_json({"jsonrpc": "2.0", "id": 1, "result": result})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", _nested(196)),
        ("content", _nested(195, [])),
        ("metadata", {"deep": _nested(195)}),
    ],
)
async def test_an_item_too_deep_for_a_search_result_is_not_stored(field: str, value: Any) -> None:
    """memory_store refuses an item whose search result the SDK client could not parse.

    The SDK reads JSON 200 levels of arrays and objects deep around a value; a search result
    puts an item 4 levels down. An empty innermost list counts as a level.
    """
    store = InMemoryStore()
    tools = MemoryTools(store)
    text = error(await tools.call("memory_store", {field: value}))
    assert text == (
        "the item nests 197 levels deep (arrays and objects, the item itself included); at most "
        "196 can be sent back in a search result, which MCP clients read at most 200 levels deep"
    )
    assert await store.search(MemoryQuery()) == []


def test_an_item_one_level_too_deep_makes_a_search_result_unreadable() -> None:
    """The bound is the parser's: one level more around a value and the client cannot read it."""
    item = MemoryItem(content=_nested(196)).model_dump(mode="json")
    message = _search_message({"items": [item], "limit": 20, "omitted": []})
    with pytest.raises(ValueError, match="recursion limit exceeded"):
        jsonrpc_message_adapter.validate_json(message)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", _nested(195)),
        ("content", _nested(194, [])),
        ("metadata", {"deep": _nested(194)}),
    ],
)
async def test_the_deepest_item_stored_comes_back_in_a_search_the_client_can_read(
    field: str, value: Any
) -> None:
    store = InMemoryStore()
    tools = MemoryTools(store)
    stored = ok(await tools.call("memory_store", {field: value}))
    found = ok(await tools.call("memory_search", {}))
    assert [item["id"] for item in found["items"]] == [stored["id"]]
    parsed = jsonrpc_message_adapter.validate_json(_search_message(found))
    assert isinstance(parsed, JSONRPCResponse)
    assert parsed.result["structuredContent"]["items"][0][field] == value


async def test_items_stored_directly_too_deep_are_omitted_and_refused_by_retrieve() -> None:
    """An item a program stored past memory_store's check cannot make every search unreadable:
    a search lists it in ``omitted`` and retrieve says why it cannot send it."""
    store = InMemoryStore()
    tools = MemoryTools(store)
    fits = MemoryItem(content=_nested(195))
    search_only = MemoryItem(content=_nested(196))  # 197 with the item: too deep for a search
    neither = MemoryItem(content=_nested(197))
    for item in (fits, search_only, neither):
        await store.store(item)
    found = ok(await tools.call("memory_search", {}))
    assert [item["id"] for item in found["items"]] == [str(fits.id)]
    assert [entry["id"] for entry in found["omitted"]] == [str(search_only.id), str(neither.id)]
    assert jsonrpc_message_adapter.validate_json(_search_message(found))
    retrieved = ok(await tools.call("memory_retrieve", {"id": str(search_only.id)}))
    assert retrieved["item"]["content"] == _nested(196)
    assert jsonrpc_message_adapter.validate_json(_search_message(retrieved))  # one level less
    assert error(await tools.call("memory_retrieve", {"id": str(neither.id)})) == (
        f"item {neither.id} nests 198 levels deep (arrays and objects, the item itself "
        "included); at most 197 can be sent back in a response, which MCP clients read at "
        "most 200 levels deep"
    )
