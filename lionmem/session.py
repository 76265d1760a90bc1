"""Branch and Session: who owns which memory store (ADR-0092 D4, SEMANTICS.md §6).

A ``Branch`` holds one store: the one given as ``memory=``, or one ``InMemoryStore`` created on
first read of ``branch.memory``. A ``Session`` shares its own store with every branch it takes in
that has none yet: the first claim wins, and a branch keeps its store when it is removed and
included elsewhere. Query scope therefore follows store identity; ``MemoryQuery`` has no scope.
Claims, releases and the creation of a store on first read hold one lock, so threads racing for
a branch or a first read see one winner and one store.

Only the memory seam of lionagi's classes is reproduced (SEMANTICS.md §9): messages, models,
tools, ``clone``, ``split``, exchange, observers and hooks are not.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from pydantic import Field, PrivateAttr, field_serializer

from lionmem.errors import BranchNotFoundError
from lionmem.pile import Pile, key_of
from lionmem.protocol import MemoryStore
from lionmem.stores.memory import InMemoryStore
from lionmem_models.element import Element

__all__ = ["Branch", "BranchNotFoundError", "Session"]

# Held while a branch changes hands or a store is created on first read; reentrant, since a
# claim may create the session's store.
_CLAIMS = threading.RLock()
# The store given as Session(memory=...), set before the session includes its branches, so that
# no branch holds another store for a moment (another thread may read it then).
_GIVEN: ContextVar[MemoryStore | None] = ContextVar("_GIVEN", default=None)


def _checked_memory(memory: object, owner: str) -> MemoryStore | None:
    # L10: the reference keeps any object ("junk", 0); lionmem accepts only a MemoryStore.
    if memory is None:
        return None
    if isinstance(memory, type):
        msg = (
            f"{owner}(memory=...) takes a MemoryStore instance, got the class "
            f"{memory.__qualname__}; call it first, e.g. memory={memory.__qualname__}()"
        )
        raise TypeError(msg)
    if not isinstance(memory, MemoryStore):
        msg = (
            f"{owner}(memory=...) takes a MemoryStore (an object with async store, retrieve "
            f"and search methods) or None, got {type(memory).__qualname__}"
        )
        raise TypeError(msg)
    return memory


def _store_of(owner: Branch | Session) -> MemoryStore:
    """``owner``'s store, a new ``InMemoryStore`` kept from then on if it has none yet (one only,
    however many threads ask at once)."""
    memory = owner._memory
    if memory is not None:
        return memory
    with _CLAIMS:
        if owner._memory is None:
            owner._memory = InMemoryStore()
        return owner._memory


class Branch(Element):
    """A conversation branch as the memory seam sees it: an Element that owns one memory store.

    ``memory=`` (keyword only) sets the store; without it the store is created on first read of
    ``memory``. A session that includes the branch sets ``user`` to the session's id.
    """

    user: UUID | str | None = Field(
        default=None,
        union_mode="left_to_right",
        description="Who the branch works for: a UUID (its session's id once included) or a name.",
    )
    name: str | None = Field(default=None, description="An optional label for the branch.")

    _memory: MemoryStore | None = PrivateAttr(default=None)
    _owner_id: UUID | None = PrivateAttr(default=None)

    def __init__(self, *, memory: MemoryStore | None = None, **data: Any) -> None:
        store = _checked_memory(memory, "Branch")
        super().__init__(**data)
        self._memory = store

    @property
    def memory(self) -> MemoryStore:
        """This branch's store: the one it was given or claimed, else a new ``InMemoryStore`` kept from then on."""
        return _store_of(self)

    @field_serializer("user")
    def _serialize_user(self, value: UUID | str | None) -> str | None:
        return None if value is None else str(value)


class Session(Element):
    """A set of branches sharing one memory store, the session's own, unless a branch has one.

    ``memory=`` (keyword only) sets the session's store; without it the store is created when a
    branch without a store is included or on first read of ``memory``. Construction includes
    every branch of ``branches`` (any iterable of Branch) plus a new default branch when
    ``default_branch`` is not given; it fails, claiming nothing, if one is owned elsewhere.
    """

    branches: Pile[Branch] = Field(
        default_factory=lambda: Pile(item_type=Branch),
        description="The branches of the session, in the order they were included.",
    )
    default_branch: Branch | None = Field(
        default=None,
        exclude=True,
        description=(
            "The branch used when none is named: the one given, else a new branch included "
            "last; once it is removed, the first remaining branch."
        ),
    )
    name: str = Field(default="Session", description="A label for the session.")
    user: UUID | str | None = Field(
        default=None,
        union_mode="left_to_right",
        description="Who the session works for: a UUID or a name.",
    )

    _memory: MemoryStore | None = PrivateAttr(default=None)

    def __init__(self, *, memory: MemoryStore | None = None, **data: Any) -> None:
        given = _GIVEN.set(_checked_memory(memory, "Session"))
        try:
            super().__init__(**data)
        finally:
            _GIVEN.reset(given)

    def model_post_init(self, context: Any, /) -> None:
        """Take the store given as ``memory=``, add a new default branch unless one was given,
        then include every branch."""
        # Runs on construction and model_validate, not on assignment (unlike an after-validator
        # under validate_assignment); a ValueError here becomes a pydantic ValidationError.
        store = _GIVEN.get()
        if store is not None:
            _GIVEN.set(None)  # this session's: not one validated while it is being built
            self._memory = store
        if self.default_branch is None:
            self.default_branch = Branch()
        if self.default_branch not in self.branches:
            self.branches.include(self.default_branch)
        if self.branches:
            self.include_branches(self.branches)

    @property
    def memory(self) -> MemoryStore:
        """This session's store: the one it was given, else a new ``InMemoryStore`` kept from then on."""
        return _store_of(self)

    def include_branches(self, branches: Branch | Iterable[Branch]) -> None:
        """Take in one branch or an iterable of them; ``ValueError``, and nothing changes, if one
        is owned by another session.

        Each branch joins ``branches`` (if absent), is owned by this session, gets this session's
        id as ``user``, adopts this session's store only if it has none (first claim wins) and
        becomes the default branch if there is none.
        """
        candidates = _branch_list(branches)
        with _CLAIMS:
            for branch in candidates:
                owner = branch._owner_id
                if owner is not None and owner != self.id:
                    msg = (
                        f"Branch {branch.id} is already owned by session {owner}; call "
                        "remove_branch() on the owning session first to reparent it."
                    )
                    raise ValueError(msg)
            for branch in candidates:
                if branch not in self.branches:
                    self.branches.include(branch)
                branch._owner_id = self.id
                branch.user = self.id
                if branch._memory is None:
                    branch._memory = self.memory
                if self.default_branch is None:
                    self.default_branch = branch

    async def ainclude_branches(self, branches: Branch | Iterable[Branch]) -> None:
        """Do what ``include_branches`` does, from async code."""
        self.include_branches(branches)

    def new_branch(
        self,
        *,
        name: str | None = None,
        memory: MemoryStore | None = None,
        as_default_branch: bool = False,
    ) -> Branch:
        """Create a branch, include it (it adopts the session store unless ``memory`` is given) and return it."""
        branch = Branch(name=name, memory=memory)
        self.include_branches(branch)
        if as_default_branch:
            self.default_branch = branch
        return branch

    def remove_branch(self, branch: Branch | UUID | str, delete: bool = False) -> None:
        """Release a branch (given as itself, its id or its id string); it keeps its store.

        Its owner is cleared, its ``user`` is reset only if it is still this session's id, and a
        removed default branch is replaced by the first remaining branch, or None. A copy of the
        branch given in its place (one pickled or deep-copied alone still names this session as
        its owner) is released with it. An unknown
        branch raises ``BranchNotFoundError`` (a ``LookupError``) naming it. ``delete`` is
        taken as lionagi's is, and changes nothing there either.
        """
        del delete  # lionagi's changes nothing observable (a branch keeps its messages and logs)
        if not isinstance(branch, Branch | UUID | str):
            msg = f"remove_branch() takes a Branch, a UUID or an id string, got {type(branch).__qualname__}"
            raise TypeError(msg)
        key = key_of(branch)
        with _CLAIMS:
            found: Branch | None = None if key is None else self.branches.get(key)
            if found is None:
                shown = branch.id if isinstance(branch, Branch) else branch
                msg = f"Branch {shown} is not in session {self.id}"
                raise BranchNotFoundError(msg)
            self.branches.exclude(found.id)
            # A copy of the branch given in its place (pickled or deep-copied alone) names this
            # owner too: it is released with the branch its id names.
            for released in (found, branch):
                if isinstance(released, Branch) and released._owner_id == self.id:
                    released._owner_id = None
                    if released.user == self.id:
                        released.user = None
            if self.default_branch is not None and self.default_branch.id == found.id:
                self.default_branch = next(iter(self.branches), None)

    @field_serializer("user")
    def _serialize_user(self, value: UUID | str | None) -> str | None:
        return None if value is None else str(value)


def _branch_list(branches: object) -> list[Branch]:
    if isinstance(branches, Branch):
        return [branches]
    if isinstance(branches, str | bytes) or not isinstance(branches, Iterable):
        msg = f"include_branches() takes a Branch or an iterable of Branch, got {type(branches).__qualname__}"
        raise TypeError(msg)
    candidates = list(branches)
    for candidate in candidates:
        if not isinstance(candidate, Branch):
            msg = f"include_branches() takes Branch objects, got {type(candidate).__qualname__}"
            raise TypeError(msg)
    return candidates
