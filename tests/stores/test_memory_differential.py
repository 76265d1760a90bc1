"""Differential test: lionmem's InMemoryStore against lionagi 0.36.0's, the oracle, on random data.

The same operations run on both stores: stores with colliding ids (replacements), retrieves by
UUID and by string, and searches with random text, tags, filters and limits. The ids returned,
the ids found in order and every payload (id, created_at, metadata, content, tags) must be
identical. Only inputs both accept are generated: the deliberate differences (SEMANTICS.md §9)
have their own tests.
"""

from __future__ import annotations

import asyncio
from typing import Any

import lionagi
from hypothesis import event, given, settings
from hypothesis import strategies as st

from lionmem import Branch, InMemoryStore, MemoryItem, MemoryQuery, Session
from tests.profiles import examples
from tests.strategies import (
    ID_FORMS,
    MISSING,
    Pools,
    id_form,
    id_pool,
    json_values,
    payload,
    scalar_values,
    text_values,
)

EXAMPLES = examples(600)

SPECIAL = "İßΣσςǅǄǆiIsSk1 '{}:,"  # noqa: RUF001 -- the Greek sigmas are chosen on purpose
VALUE_POOL: list[Any] = [None, 0, 1, 1.0, True, False, "x", "1", "", [1], (1,), {"n": 1}, 2.5]
texts = text_values(SPECIAL, special_size=8, other_size=6, phrases=False)
POOLS = Pools(
    ids=id_pool(6),
    tags=["a", "b", "A", "", "tag", "ǅ"],
    keys=["a", "b", "k", MISSING],
    values=VALUE_POOL,
    filter_values=VALUE_POOL,
    equal_twins={1: [1, 1.0, True], 0: [0, 0.0, False], None: [None]},
    needles=[
        "ß",
        "ss",
        "SS",
        "σ",  # noqa: RUF001 -- the Greek small sigma is chosen on purpose
        "ς",
        "Σ",
        "İ",
        "i",
        "i\u0307",
        "ǅ",
        "Ǆ",
        "ǆ",
        "'",
        "none",
        "true",
        "1",
        " ",
    ],
    texts=texts,
    piece_size=6,
)
scalars = scalar_values(texts, st.floats(allow_nan=True, allow_infinity=True), big_ints=False)
item_specs = POOLS.item_specs(
    created_at=st.floats(min_value=0, max_value=2e9, allow_nan=False),
    contents=json_values(scalars, keys=texts),
)
limits = st.sampled_from([20, 0, 1, 2, 3, 10**6]) | st.integers(min_value=-6, max_value=-1)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("store"), item_specs),
        st.tuples(st.just("search"), st.none()),
        st.tuples(st.just("retrieve"), POOLS.retrieve_ids()),
    ),
    min_size=1,
    max_size=14,
)


async def scenario(data: st.DataObject, steps: list[tuple[str, Any]]) -> int:
    ours, oracle = InMemoryStore(), lionagi.InMemoryStore()
    stored: list[dict[str, Any]] = []
    compared = 0
    for kind, argument in steps:
        if kind == "store":
            spec: dict[str, Any] = argument
            mine = MemoryItem(**spec)
            theirs = lionagi.MemoryItem(**spec)
            assert (await ours.store(mine), await oracle.store(theirs)) == (mine.id, theirs.id)
            stored.append(spec)
        elif kind == "retrieve":
            key = id_form(argument, data.draw(ID_FORMS))
            assert payload(await ours.retrieve(key)) == payload(await oracle.retrieve(key))
        else:
            fields = POOLS.query_fields(data, stored, limits)
            found = await ours.search(MemoryQuery(**fields))
            expected = await oracle.search(lionagi.MemoryQuery(**fields))
            assert [i.id for i in found] == [i.id for i in expected], fields
            assert [payload(i) for i in found] == [payload(i) for i in expected], fields
            event("search found something" if found else "search found nothing")
        compared += 1
    everything = await ours.search(MemoryQuery(limit=10**6))
    assert [payload(i) for i in everything] == [
        payload(i) for i in await oracle.search(lionagi.MemoryQuery(limit=10**6))
    ]
    return compared


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), first=st.lists(item_specs, min_size=1, max_size=8), steps=operations)
def test_same_results_as_lionagi(
    data: st.DataObject, first: list[dict[str, Any]], steps: list[tuple[str, Any]]
) -> None:
    """Every store, retrieve and search gives lionagi 0.36.0's ids and payloads, in its order."""
    script = [("store", spec) for spec in first] + steps
    assert asyncio.run(scenario(data, script)) == len(script)


def test_the_oracle_is_lionagi_0_36_0() -> None:
    """The differential test runs against the pinned oracle version."""
    from importlib.metadata import version

    assert version("lionagi") == "0.36.0"


# ---------------------------------------------------------------- ownership: Branch and Session


class World:
    """Sessions, branches and explicit stores built with one library, lionmem or lionagi."""

    def __init__(self, oracle: bool) -> None:
        self.oracle = oracle
        self.branch_class: Any = lionagi.Branch if oracle else Branch
        self.session_class: Any = lionagi.Session if oracle else Session
        self.store_class: Any = lionagi.InMemoryStore if oracle else InMemoryStore
        self.sessions: list[Any] = []
        self.branches: list[Any] = []
        self.stores: list[Any] = []

    def owner_of(self, branch: Any) -> Any:
        return branch._owning_session_id if self.oracle else branch._owner_id

    def branch_set(self, branches: list[Any]) -> Any:
        if self.oracle:
            return lionagi.Pile(branches, item_type={lionagi.Branch})
        return branches

    def learn(self) -> None:
        """Record branches the libraries created themselves (default branches), in order."""
        for session in self.sessions:
            for branch in session.branches:
                if not any(branch is known for known in self.branches):
                    self.branches.append(branch)

    def pick(self, pool: list[Any], choice: int | None) -> Any:
        return None if choice is None or not pool else pool[choice % len(pool)]

    def apply(self, step: tuple[Any, ...]) -> str:
        """Run one step; return "ok" or "raised" (the kind of error is compared elsewhere)."""
        kind = step[0]
        try:
            if kind == "store":
                self.stores.append(self.store_class())
            elif kind == "branch":
                memory = self.pick(self.stores, step[1])
                self.branches.append(
                    self.branch_class(name=f"b{len(self.branches)}", memory=memory)
                )
            elif kind == "touch_branch" and self.branches:
                _ = self.pick(self.branches, step[1]).memory
            elif kind == "touch_session" and self.sessions:
                _ = self.pick(self.sessions, step[1]).memory
            elif kind == "session":
                _, memory_choice, members, default_choice = step
                chosen = [self.pick(self.branches, i) for i in members if self.branches]
                fields: dict[str, Any] = {"branches": self.branch_set(chosen)}
                default = self.pick(self.branches, default_choice)
                if default is not None:
                    fields["default_branch"] = default
                session = self.session_class(memory=self.pick(self.stores, memory_choice), **fields)
                self.sessions.append(session)
            elif kind == "include" and self.sessions:
                _, target, members, single = step
                chosen = [self.pick(self.branches, i) for i in members if self.branches]
                session = self.pick(self.sessions, target)
                if single and chosen:
                    session.include_branches(chosen[0])
                else:
                    session.include_branches(chosen)
            elif kind == "remove" and self.sessions and self.branches:
                _, target, member, form = step
                branch = self.pick(self.branches, member)
                key = {"object": branch, "uuid": branch.id, "str": str(branch.id)}[form]
                self.pick(self.sessions, target).remove_branch(key)
            elif kind == "new_branch" and self.sessions:
                _, target, memory_choice, as_default = step
                self.pick(self.sessions, target).new_branch(
                    memory=self.pick(self.stores, memory_choice), as_default_branch=as_default
                )
            elif kind == "set_user" and self.branches:
                self.pick(self.branches, step[1]).user = "alice"
        except (ValueError, LookupError, lionagi._errors.NotFoundError):
            return "raised"
        finally:
            self.learn()
        return "ok"

    def observe(self) -> Any:
        """Everything ownership decides, with objects replaced by their position."""
        tokens: dict[int, int] = {}

        def store_token(store: Any) -> int | None:
            return None if store is None else tokens.setdefault(id(store), len(tokens))

        def branch_index(branch: Any) -> int | None:
            if branch is None:
                return None
            return next(i for i, known in enumerate(self.branches) if known is branch)

        def session_label(value: Any) -> Any:
            for i, session in enumerate(self.sessions):
                if value == session.id:
                    return f"session {i}"
            return value

        for store in self.stores:
            store_token(store)
        sessions = [
            (
                [branch_index(b) for b in s.branches],
                branch_index(s.default_branch),
                store_token(s._memory),
            )
            for s in self.sessions
        ]
        branches = [
            (
                b.name,
                session_label(self.owner_of(b)),
                session_label(b.user),
                store_token(b._memory),
            )
            for b in self.branches
        ]
        return sessions, branches


choices = st.none() | st.integers(0, 5)
members = st.lists(st.integers(0, 9), max_size=3)
ownership_steps = st.lists(
    st.one_of(
        st.tuples(st.just("store")),
        st.tuples(st.just("branch"), choices),
        st.tuples(st.just("touch_branch"), st.integers(0, 9)),
        st.tuples(st.just("touch_session"), st.integers(0, 3)),
        st.tuples(st.just("session"), choices, members, choices),
        st.tuples(st.just("include"), st.integers(0, 3), members, st.booleans()),
        st.tuples(
            st.just("remove"),
            st.integers(0, 3),
            st.integers(0, 9),
            st.sampled_from(["object", "uuid", "str"]),
        ),
        st.tuples(st.just("new_branch"), st.integers(0, 3), choices, st.booleans()),
        st.tuples(st.just("set_user"), st.integers(0, 9)),
    ),
    min_size=1,
    max_size=16,
)


setup_steps: st.SearchStrategy[list[tuple[Any, ...]]] = st.lists(
    st.tuples(st.just("branch"), choices) | st.tuples(st.just("store")), max_size=4
).map(lambda steps: [*steps, ("session", None, [0], None), ("session", 0, [], None)])


@settings(max_examples=examples(300), deadline=None)
@given(setup=setup_steps, steps=ownership_steps)
def test_same_ownership_as_lionagi(
    setup: list[tuple[Any, ...]], steps: list[tuple[Any, ...]]
) -> None:
    """Random sessions, branches, stores, inclusions and removals end with lionagi's wiring."""
    ours, theirs = World(oracle=False), World(oracle=True)
    for step in setup + steps:
        outcome = ours.apply(step)
        assert outcome == theirs.apply(step), step
        assert ours.observe() == theirs.observe(), step
        event(f"{step[0]} {outcome}")
