"""Branch and Session ownership of a memory store: SEMANTICS.md §6 and the decisions L10, L12 and L13."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic import ValidationError

from lionmem import Branch, Element, InMemoryStore, MemoryItem, MemoryQuery, Pile, Session
from lionmem.session import BranchNotFoundError


class FakeStore:
    """A structural MemoryStore unrelated to InMemoryStore."""

    async def store(self, item: MemoryItem) -> UUID:
        return item.id

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        return None

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return []


def owner(branch: Branch) -> UUID | None:
    return branch._owner_id


def names(session: Session) -> list[str | None]:
    return [b.name for b in session.branches]


def owned_message(branch: Branch, session: Session) -> str:
    return (
        f"Branch {branch.id} is already owned by session {session.id}; call remove_branch() "
        "on the owning session first to reparent it."
    )


# ---------------------------------------------------------------- §6.1 Branch and Session models


def test_branch_needs_nothing() -> None:
    """Branch() builds with no argument, no store and no owner."""
    branch = Branch()
    assert (branch.user, branch.name, branch._memory, owner(branch)) == (None, None, None, None)


def test_construction_warns_nothing() -> None:
    """Branch() and Session() emit no warning, even with warnings turned into errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Branch()
        Session()


def test_branch_fields() -> None:
    """Branch's fields are id, created_at, metadata, user and name, in that order."""
    assert list(Branch.model_fields) == ["id", "created_at", "metadata", "user", "name"]


def test_branch_is_an_element() -> None:
    """Branch is an Element subclass."""
    assert isinstance(Branch(), Element)


def test_branch_forbids_extra_fields() -> None:
    """An unknown keyword is a ValidationError naming it."""
    with pytest.raises(ValidationError, match="extra_forbidden") as caught:
        Branch(colour="red")
    assert caught.value.errors()[0]["loc"] == ("colour",)


def test_branch_rejects_positional_arguments() -> None:
    """Branch takes keywords only."""
    positional: tuple[Any, ...] = (Branch(),)
    with pytest.raises(TypeError, match="positional argument"):
        Branch(*positional)


def test_branch_equality_is_by_id() -> None:
    """Two branches with the same id are equal, whatever their other fields."""
    branch = Branch(name="a")
    assert Branch(id=branch.id, name="b") == branch
    assert Branch() != branch


def test_branch_user_is_a_uuid_or_a_name() -> None:
    """user keeps a name as a string and reads an id string as a UUID."""
    some_id = uuid4()
    assert Branch(user="alice").user == "alice"
    assert Branch(user=str(some_id)).user == some_id


def test_branch_user_keeps_an_empty_name() -> None:
    """user="" stays an empty name, in the model and in its dump (lionagi dumps None)."""
    branch = Branch(user="")
    assert (branch.user, branch.model_dump()["user"]) == ("", "")


def test_session_branches_index_by_position() -> None:
    """session.branches[0] is the first branch included, [-1] the last."""
    first = Branch(name="first")
    session = Session(branches=[first])
    last = session.new_branch(name="last")
    assert (session.branches[0], session.branches[-1]) == (first, last)
    assert session.branches[1] is session.default_branch
    with pytest.raises(IndexError, match=r"^no item at position 3: the pile holds 3$"):
        session.branches[3]


def test_branch_dump_writes_user_as_a_string() -> None:
    """model_dump writes a UUID user as its string and has no memory entry."""
    some_id = uuid4()
    dumped = Branch(user=some_id, name="n").model_dump()
    assert dumped["user"] == str(some_id)
    assert set(dumped) == {"id", "created_at", "metadata", "user", "name"}


@pytest.mark.parametrize(
    "named", ["lionmem.session.Branch", "lionmem.Branch", "lionagi.session.branch.Branch"]
)
def test_branch_accepts_its_own_lion_class(named: str) -> None:
    """metadata lion_class may name Branch (lionmem's names or lionagi's)."""
    assert Branch(metadata={"lion_class": named}).metadata == {"lion_class": named}


def test_branch_rejects_another_lion_class() -> None:
    """A lion_class naming another class is a metadata class mismatch."""
    with pytest.raises(ValidationError, match="Metadata class mismatch"):
        Branch(metadata={"lion_class": "lionmem.Session"})


@pytest.mark.parametrize(
    "named", ["lionmem.session.Session", "lionmem.Session", "lionagi.session.session.Session"]
)
def test_session_accepts_its_own_lion_class(named: str) -> None:
    """metadata lion_class may name Session (lionmem's names or lionagi's)."""
    assert Session(metadata={"lion_class": named}).metadata == {"lion_class": named}


def test_session_fields() -> None:
    """Session's fields are id, created_at, metadata, branches, default_branch, name and user."""
    assert list(Session.model_fields) == [
        "id",
        "created_at",
        "metadata",
        "branches",
        "default_branch",
        "name",
        "user",
    ]


def test_session_defaults() -> None:
    """Session() is named "Session", has no user and holds one default branch."""
    session = Session()
    assert (session.name, session.user, len(session.branches)) == ("Session", None, 1)
    assert isinstance(session.branches, Pile)


def test_session_is_an_element_and_forbids_extra_fields() -> None:
    """Session is an Element and an unknown keyword is a ValidationError."""
    assert isinstance(Session(), Element)
    with pytest.raises(ValidationError, match="extra_forbidden"):
        Session(exchange=1)


def test_session_dump_has_no_memory_and_no_default_branch() -> None:
    """model_dump lists the branches but neither the store nor the default branch."""
    session = Session()
    dumped = session.model_dump()
    assert set(dumped) == {"id", "created_at", "metadata", "branches", "name", "user"}
    assert dumped["branches"] == [session.default_branch.model_dump()]  # type: ignore[union-attr]  # set by construction


@pytest.mark.parametrize(
    "wrap",
    [list, tuple, lambda bs: (b for b in bs), lambda bs: Pile(bs, item_type=Branch)],
    ids=["list", "tuple", "generator", "pile"],
)
def test_session_accepts_any_iterable_of_branches(wrap: Any) -> None:
    """branches= takes any iterable of Branch (L12), not only a Pile."""
    session = Session(branches=wrap([Branch(name="p1"), Branch(name="p2")]))
    assert names(session) == ["p1", "p2", None]


def test_session_copies_a_given_pile() -> None:
    """A Pile given as branches= is copied, as the reference does."""
    pile = Pile([Branch()], item_type=Branch)
    session = Session(branches=pile)
    assert session.branches is not pile
    assert len(pile) == 1


def test_session_rejects_non_branches() -> None:
    """A non-Branch in branches= is a ValidationError located at its index."""
    with pytest.raises(ValidationError) as caught:
        Session.model_validate({"branches": [Branch(), "x"]})
    assert caught.value.errors()[0]["loc"] == ("branches", 1)


def test_session_from_a_dump_includes_the_branches() -> None:
    """model_validate of a dump rebuilds the branches, claims them and adds a new default branch."""
    original = Session(branches=[Branch(name="p")])
    rebuilt = Session.model_validate(original.model_dump())
    assert names(rebuilt) == ["p", None, None]
    assert [b.id for b in rebuilt.branches][:2] == [b.id for b in original.branches]
    assert all(owner(b) == rebuilt.id for b in rebuilt.branches)


# ---------------------------------------------------------------- §6.2 Branch.memory


def test_branch_memory_is_lazy() -> None:
    """A new branch has no store until memory is read."""
    assert Branch()._memory is None


def test_branch_memory_is_created_once_and_cached() -> None:
    """The first read creates one InMemoryStore; later reads return the same object."""
    branch = Branch()
    first = branch.memory
    assert isinstance(first, InMemoryStore)
    assert branch.memory is first
    assert branch._memory is first


def test_standalone_branches_get_different_stores() -> None:
    """Two standalone branches do not share a store."""
    assert Branch().memory is not Branch().memory


@pytest.mark.parametrize("store", [InMemoryStore(), FakeStore()], ids=["in-memory", "fake"])
def test_branch_keeps_the_given_store(store: Any) -> None:
    """Branch(memory=X) keeps X itself, a structural fake included."""
    assert Branch(memory=store).memory is store


def test_branch_memory_none_stays_lazy() -> None:
    """Branch(memory=None) behaves as no argument."""
    assert Branch(memory=None)._memory is None


@pytest.mark.parametrize(
    "junk", ["junk", 0, object(), [], {"store": 1}], ids=["str", "int", "object", "list", "dict"]
)
def test_branch_rejects_a_non_store(junk: Any) -> None:
    """memory= must satisfy MemoryStore (L10): anything else is a TypeError naming its type."""
    with pytest.raises(
        TypeError, match=rf"Branch\(memory=...\) takes a MemoryStore .*got {type(junk).__name__}"
    ):
        Branch(memory=junk)


def test_branch_rejects_a_store_class() -> None:
    """A store class instead of an instance is refused with a hint to call it."""
    with pytest.raises(TypeError, match=r"got the class InMemoryStore; call it first"):
        Branch(memory=InMemoryStore)  # type: ignore[arg-type]  # the class is the error under test


@pytest.mark.parametrize("value", [InMemoryStore(), None], ids=["store", "None"])
def test_branch_memory_is_read_only(value: Any) -> None:
    """Assigning memory raises AttributeError: the property has no setter."""
    branch = Branch()
    with pytest.raises(AttributeError, match="property 'memory' of 'Branch' object has no setter"):
        branch.memory = value  # type: ignore[misc]  # assigning the read-only property is the test
    assert branch._memory is None


def test_branch_memory_cannot_be_deleted() -> None:
    """del branch.memory raises AttributeError and keeps the store."""
    branch = Branch()
    store = branch.memory
    with pytest.raises(AttributeError):
        del branch.memory
    assert branch.memory is store


def test_model_copy_shares_the_store() -> None:
    """model_copy() shares the private store, as pydantic copies private attributes shallowly."""
    branch = Branch()
    store = branch.memory
    assert branch.model_copy().memory is store


# ---------------------------------------------------------------- §6.3 Session.memory and construction


def test_session_memory_is_read_only() -> None:
    """Assigning session.memory raises AttributeError naming Session."""
    with pytest.raises(AttributeError, match="property 'memory' of 'Session' object has no setter"):
        Session().memory = InMemoryStore()  # type: ignore[misc]  # assigning the read-only property is the test


def test_session_shares_its_store_with_the_default_branch() -> None:
    """Session() already holds an InMemoryStore, the same object as its default branch's."""
    session = Session()
    assert isinstance(session._memory, InMemoryStore)
    assert session.default_branch is not None
    assert session.default_branch._memory is session._memory
    assert session.memory is session._memory


def test_session_memory_is_cached() -> None:
    """Reading session.memory twice gives the same store."""
    session = Session()
    assert session.memory is session.memory


def test_given_branches_come_before_the_new_default() -> None:
    """Session(branches=[p1, p2]) appends a new default branch last."""
    session = Session(branches=[Branch(name="p1"), Branch(name="p2")])
    assert names(session) == ["p1", "p2", None]
    assert session.default_branch is session.branches.values()[-1]


def test_given_default_branch_is_used() -> None:
    """Session(default_branch=b) adds no other branch and includes b."""
    branch = Branch(name="main")
    session = Session(default_branch=branch)
    assert session.default_branch is branch
    assert session.branches.values() == [branch]
    assert owner(branch) == session.id


def test_given_default_branch_outside_branches_is_appended() -> None:
    """A default branch not among branches= is appended after them."""
    session = Session(branches=[Branch(name="p")], default_branch=Branch(name="main"))
    assert names(session) == ["p", "main"]


def test_all_branches_share_the_session_store() -> None:
    """Every branch without a store adopts the session's store."""
    session = Session(branches=[Branch(), Branch()])
    assert all(b.memory is session.memory for b in session.branches)


def test_session_store_stays_lazy_when_every_branch_has_one() -> None:
    """If every branch has a store, the session creates none until memory is read."""
    session = Session(default_branch=Branch(memory=InMemoryStore()))
    assert session._memory is None
    assert isinstance(session.memory, InMemoryStore)


def test_explicit_session_store_reaches_the_default_branch() -> None:
    """Session(memory=M) gives M to the branches that had no store."""
    store = InMemoryStore()
    session = Session(memory=store, branches=[Branch()])
    assert session.memory is store
    assert all(b.memory is store for b in session.branches)


def test_a_claimed_branch_never_holds_another_store_than_the_session_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Session(memory=M) gives its branches M as it includes them: no other store is made and
    given to them first (a thread reading ``branch.memory`` then would write into a store the
    branch drops a moment later)."""
    store = InMemoryStore()
    branch = Branch()
    created: list[InMemoryStore] = []
    make = InMemoryStore.__init__

    def noting(self: InMemoryStore) -> None:
        created.append(self)
        make(self)

    monkeypatch.setattr(InMemoryStore, "__init__", noting)
    Session(memory=store, branches=[branch])
    assert created == []
    assert branch.memory is store


def test_explicit_session_store_spares_branches_with_their_own() -> None:
    """Session(memory=M) leaves an explicit store and a store a branch had already created."""
    own, session_store = InMemoryStore(), InMemoryStore()
    explicit = Branch(memory=own)
    earlier = Branch()
    created = earlier.memory
    session = Session(memory=session_store, branches=[explicit, earlier])
    assert explicit.memory is own
    assert earlier.memory is created
    assert session.default_branch is not None
    assert session.default_branch.memory is session_store


def test_session_memory_none_behaves_as_no_argument() -> None:
    """Session(memory=None) creates and shares a store as Session() does."""
    session = Session(memory=None)
    assert session.default_branch is not None
    assert session.default_branch.memory is session.memory


def test_session_keeps_a_structural_store() -> None:
    """Session(memory=fake) keeps the fake and gives it to its default branch."""
    fake = FakeStore()
    session = Session(memory=fake)
    assert session.memory is fake
    assert session.default_branch is not None
    assert session.default_branch.memory is fake


def test_session_rejects_a_non_store_and_claims_nothing() -> None:
    """Session(memory="junk") is a TypeError (L10) raised before any branch is claimed."""
    branch = Branch()
    with pytest.raises(TypeError, match=r"Session\(memory=...\) takes a MemoryStore .*got str"):
        Session(memory="junk", branches=[branch])  # type: ignore[arg-type]  # wrong on purpose
    assert (owner(branch), branch.user, branch._memory) == (None, None, None)


# ---------------------------------------------------------------- §6.4 include_branches


@pytest.mark.parametrize(
    "wrap",
    [
        lambda bs: bs[0],
        list,
        tuple,
        lambda bs: (b for b in bs),
        lambda bs: Pile(bs, item_type=Branch),
    ],
    ids=["single", "list", "tuple", "generator", "pile"],
)
def test_include_accepts_a_branch_or_any_iterable(wrap: Any) -> None:
    """include_branches takes one Branch or any iterable of them and returns None."""
    session = Session()
    branch = Branch(name="new")
    assert session.include_branches(wrap([branch])) is None  # type: ignore[func-returns-value]  # the None return is asserted
    assert names(session) == [None, "new"]


def test_include_claims_the_branch() -> None:
    """An included branch is owned by the session, has its id as user and adopts its store."""
    session = Session()
    branch = Branch(user="alice")
    session.include_branches(branch)
    assert (owner(branch), branch.user, branch.memory) == (session.id, session.id, session.memory)


def test_include_keeps_an_explicit_store() -> None:
    """A branch with a store keeps it when included: first claim wins."""
    own = InMemoryStore()
    session = Session()
    branch = Branch(memory=own)
    session.include_branches(branch)
    assert branch.memory is own
    assert branch.memory is not session.memory


def test_include_sets_the_default_when_there_is_none() -> None:
    """The first branch included into a session without a default becomes the default."""
    session = Session()
    assert session.default_branch is not None
    session.remove_branch(session.default_branch)
    branch = Branch()
    session.include_branches(branch)
    assert session.default_branch is branch


def test_include_keeps_an_existing_default() -> None:
    """Including a branch does not change an existing default branch."""
    session = Session()
    default = session.default_branch
    session.include_branches(Branch())
    assert session.default_branch is default


def test_including_again_changes_nothing() -> None:
    """Including a branch the session already holds keeps the count and the store."""
    session = Session(branches=[Branch()])
    before = session.branches.values()
    stores = [b.memory for b in before]
    session.include_branches(before)
    assert session.branches.values() == before
    assert [b.memory for b in before] == stores


def test_include_of_a_branch_owned_elsewhere_raises() -> None:
    """A branch owned by another session raises ValueError with the reference's message."""
    first = Session()
    taken = first.default_branch
    assert taken is not None
    with pytest.raises(ValueError, match="already owned") as caught:
        Session().include_branches(taken)
    assert str(caught.value) == owned_message(taken, first)


def test_failed_include_claims_no_member_of_the_batch() -> None:
    """When one branch is owned elsewhere, the others stay unclaimed and nothing is added."""
    taken = Session().default_branch
    assert taken is not None
    free = Branch()
    session = Session()
    with pytest.raises(ValueError, match="already owned"):
        session.include_branches([free, taken])
    assert (owner(free), free.user, free._memory) == (None, None, None)
    assert free not in session.branches
    assert len(session.branches) == 1


def test_constructor_wraps_the_ownership_error() -> None:
    """From the constructor, the ownership error is a ValidationError (a ValueError) with the message."""
    first = Session()
    taken = first.default_branch
    assert taken is not None
    free = Branch()
    with pytest.raises(ValidationError) as caught:
        Session(branches=[free, taken])
    assert isinstance(caught.value, ValueError)
    assert owned_message(taken, first) in str(caught.value)
    assert (owner(free), free.user, free._memory) == (None, None, None)


@pytest.mark.parametrize(
    ("value", "type_name"), [("abc", "str"), (5, "int"), (None, "NoneType"), ([Branch(), 1], "int")]
)
def test_include_rejects_non_branches(value: Any, type_name: str) -> None:
    """Anything but a Branch or an iterable of Branch is a TypeError naming the type; nothing is claimed."""
    session = Session()
    with pytest.raises(TypeError, match=f"got {type_name}$"):
        session.include_branches(value)
    assert len(session.branches) == 1


def test_ainclude_branches_includes() -> None:
    """ainclude_branches does what include_branches does, from async code."""
    session = Session()
    branch = Branch()
    asyncio.run(session.ainclude_branches(branch))
    assert owner(branch) == session.id
    assert branch in session.branches


def test_new_branch_adopts_the_session_store() -> None:
    """new_branch() creates, includes and returns a branch sharing the session store."""
    session = Session()
    branch = session.new_branch(name="n")
    assert branch.name == "n"
    assert branch.memory is session.memory
    assert owner(branch) == session.id


def test_new_branch_keeps_a_given_store() -> None:
    """new_branch(memory=X) keeps X."""
    own = InMemoryStore()
    assert Session().new_branch(memory=own).memory is own


def test_new_branch_can_become_the_default() -> None:
    """new_branch(as_default_branch=True) makes the new branch the default."""
    session = Session()
    branch = session.new_branch(as_default_branch=True)
    assert session.default_branch is branch


# ---------------------------------------------------------------- §6.5 remove_branch and reparenting


@pytest.mark.parametrize(
    "form", [lambda b: b, lambda b: b.id, lambda b: str(b.id)], ids=["branch", "uuid", "str"]
)
def test_remove_branch_by_object_or_id(form: Any) -> None:
    """remove_branch takes the branch, its UUID or its id string."""
    session = Session()
    branch = session.new_branch()
    session.remove_branch(form(branch))
    assert branch not in session.branches
    assert len(session.branches) == 1


@pytest.mark.parametrize(
    "remove",
    [
        lambda s, b: s.remove_branch(b, delete=True),
        lambda s, b: s.remove_branch(b, True),
        lambda s, b: s.remove_branch(b, delete=False),
    ],
    ids=["delete=True", "True", "delete=False"],
)
def test_remove_branch_takes_delete_and_changes_nothing_with_it(
    remove: Callable[[Session, Branch], None],
) -> None:
    """``delete``, as lionagi's remove_branch takes it, changes nothing observable."""
    session = Session()
    branch = session.new_branch()
    store = branch.memory
    remove(session, branch)
    assert (owner(branch), branch.user, branch in session.branches) == (None, None, False)
    assert branch.memory is store is session.memory


@pytest.mark.parametrize(
    "duplicate",
    [lambda b: pickle.loads(pickle.dumps(b)), copy.deepcopy],
    ids=["pickled", "deep-copied"],
)
def test_removing_a_copy_of_an_owned_branch_releases_it_with_the_branch(
    duplicate: Callable[[Branch], Branch],
) -> None:
    """A branch pickled or deep-copied alone names its owner still; removing the copy from that
    owner releases the branch of that id and the copy, which another session may then take."""
    first = Session()
    branch = first.new_branch(name="worker")
    clone = duplicate(branch)
    other = Session()
    with pytest.raises(ValueError, match="already owned"):
        other.include_branches(clone)
    first.remove_branch(clone)
    assert (owner(branch), branch.user, owner(clone), clone.user) == (None,) * 4
    assert branch not in first.branches
    other.include_branches(clone)
    assert (owner(clone), clone.user) == (other.id, other.id)


def test_remove_branch_releases_the_branch() -> None:
    """A removed branch has no owner and no user, and keeps its store."""
    session = Session()
    branch = session.new_branch()
    store = branch.memory
    session.remove_branch(branch)
    assert (owner(branch), branch.user) == (None, None)
    assert branch.memory is store is session.memory


def test_remove_branch_keeps_a_foreign_user() -> None:
    """user is reset only if it is still the session's id."""
    session = Session()
    branch = session.new_branch()
    branch.user = "alice"
    session.remove_branch(branch)
    assert branch.user == "alice"


@pytest.mark.parametrize("key", [uuid4(), "garbage", str(uuid4())], ids=["uuid", "garbage", "str"])
def test_remove_unknown_branch_raises_lookup_error_naming_it(key: Any) -> None:
    """An unknown branch raises BranchNotFoundError, a LookupError, naming the id (L12)."""
    with pytest.raises(LookupError, match=f"Branch {key} is not in session") as caught:
        Session().remove_branch(key)
    assert isinstance(caught.value, BranchNotFoundError)
    assert not isinstance(caught.value, ValueError)


def test_remove_a_branch_of_another_session_raises() -> None:
    """A branch that belongs to another session is not found in this one."""
    other = Session().default_branch
    assert other is not None
    with pytest.raises(BranchNotFoundError, match=str(other.id)):
        Session().remove_branch(other)


@pytest.mark.parametrize("key", [5, None, 1.5], ids=repr)
def test_remove_branch_rejects_non_keys(key: Any) -> None:
    """A value that is neither a Branch, a UUID nor a string is a TypeError naming its type."""
    with pytest.raises(TypeError, match=f"got {type(key).__name__}"):
        Session().remove_branch(key)


def test_removing_the_default_promotes_the_first_remaining() -> None:
    """When the default branch is removed, the first remaining branch becomes the default."""
    first, second = Branch(name="first"), Branch(name="second")
    session = Session(branches=[first, second])
    assert session.default_branch is not None
    session.remove_branch(session.default_branch)
    assert session.default_branch is first


def test_removing_the_last_branch_leaves_no_default() -> None:
    """Removing the only branch leaves default_branch None."""
    session = Session()
    assert session.default_branch is not None
    session.remove_branch(session.default_branch)
    assert session.default_branch is None
    assert len(session.branches) == 0


def test_removing_another_branch_keeps_the_default() -> None:
    """Removing a non-default branch leaves the default alone."""
    session = Session()
    default = session.default_branch
    session.remove_branch(session.new_branch())
    assert session.default_branch is default


def test_reparenting_keeps_the_first_store() -> None:
    """A branch moved from session A to session B keeps A's store and becomes B's."""
    first, second = Session(), Session()
    branch = first.new_branch()
    first.remove_branch(branch)
    second.include_branches(branch)
    assert branch.memory is first.memory
    assert branch.memory is not second.memory
    assert (owner(branch), branch.user) == (second.id, second.id)


def test_reparenting_keeps_an_explicit_store() -> None:
    """An explicit store survives removal and inclusion elsewhere."""
    own = InMemoryStore()
    first, second = Session(), Session()
    branch = first.new_branch(memory=own)
    first.remove_branch(branch)
    second.include_branches(branch)
    assert branch.memory is own


def test_remove_then_include_in_the_same_session_goes_last() -> None:
    """A removed branch included again is appended at the end."""
    session = Session(branches=[Branch(name="a"), Branch(name="b")])
    first = session.branches.values()[0]
    session.remove_branch(first)
    session.include_branches(first)
    assert names(session) == ["b", None, "a"]


# ---------------------------------------------------------------- §6.6 scope follows store identity


async def test_branches_sharing_a_store_see_each_others_writes() -> None:
    """What one branch stores, a sibling branch and the session find."""
    session = Session()
    writer, reader = session.new_branch(), session.new_branch()
    item = MemoryItem(content="shared note")
    await writer.memory.store(item)
    assert await reader.memory.retrieve(item.id) is item
    assert await session.memory.search(MemoryQuery(text="shared")) == [item]


async def test_a_private_store_is_isolated() -> None:
    """A branch with its own store neither sees nor is seen by the session store."""
    session = Session()
    private = session.new_branch(memory=InMemoryStore())
    mine, theirs = MemoryItem(content="private"), MemoryItem(content="shared")
    await private.memory.store(mine)
    assert session.default_branch is not None
    await session.default_branch.memory.store(theirs)
    assert await private.memory.search(MemoryQuery()) == [mine]
    assert await session.memory.search(MemoryQuery()) == [theirs]


# ---------------------------------------------------------------- threads (L13)


class _SlowStore(InMemoryStore):
    """An InMemoryStore whose construction takes long enough for another thread to step in."""

    made = 0

    def __init__(self) -> None:
        super().__init__()
        type(self).made += 1
        time.sleep(0.05)


def _together(*calls: Callable[[], object]) -> list[object]:
    """Run ``calls`` in threads started at once; return each one's result or raised error."""
    outcomes: list[object] = [None] * len(calls)

    def run(position: int) -> None:
        try:
            outcomes[position] = calls[position]()
        except Exception as exc:  # the outcome under test may be any error
            outcomes[position] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_threads_reading_a_new_branch_memory_get_one_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Concurrent first reads of ``memory`` create one store, and every reader gets it."""
    monkeypatch.setattr("lionmem.session.InMemoryStore", _SlowStore)
    monkeypatch.setattr(_SlowStore, "made", 0)
    branch = Branch()
    stores = _together(*[lambda: branch.memory] * 4)
    assert _SlowStore.made == 1
    assert all(store is branch.memory for store in stores)


def test_threads_claiming_one_branch_leave_it_with_one_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two sessions claiming a branch at once: one claim wins, the other raises ValueError.

    The first session creates its store while claiming (slowly), which is when the second one
    looks at the branch's owner.
    """
    monkeypatch.setattr("lionmem.session.InMemoryStore", _SlowStore)
    first, second = Session(memory=InMemoryStore()), Session(memory=InMemoryStore())
    first._memory = None  # the first claim below creates the session's store
    contested = Branch()

    def second_claim() -> None:
        time.sleep(0.01)  # while the first claim creates its session's store
        second.include_branches(contested)

    outcomes = _together(lambda: first.include_branches([Branch(), contested]), second_claim)
    assert outcomes[0] is None
    assert isinstance(outcomes[1], ValueError)
    assert contested in first.branches
    assert contested not in second.branches
    assert contested.user == first.id
    assert contested.memory is first.memory
