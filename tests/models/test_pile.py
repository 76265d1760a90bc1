"""Pile: ordered, UUID-keyed, create-or-replace, with a subclass-accepting type check (SEMANTICS.md §5.5),
and iteration over the items present when it started (L14)."""

from __future__ import annotations

import copy
import pickle
import threading
from typing import Any
from uuid import uuid4

import pytest
from pydantic import BaseModel, ValidationError

from lionmem import Element, MemoryItem, Pile


class Note(MemoryItem):
    """A MemoryItem subclass."""


def items(count: int) -> list[MemoryItem]:
    return [MemoryItem(content=n) for n in range(count)]


def test_values_are_in_first_insertion_order() -> None:
    """values() lists the items in the order they were first included."""
    a, b, c = items(3)
    pile: Pile[MemoryItem] = Pile(item_type=MemoryItem)
    for item in (b, a, c):
        pile.include(item)
    assert pile.values() == [b, a, c]


def test_constructor_includes_in_order() -> None:
    """Pile(items) holds the items in the given order."""
    batch = items(3)
    assert list(Pile(batch, item_type=MemoryItem)) == batch


def test_replacement_keeps_position() -> None:
    """Including another object with an existing id replaces it where it stands."""
    a, b, c = items(3)
    pile = Pile([a, b, c], item_type=MemoryItem)
    replacement = MemoryItem(id=b.id, content="B")
    pile.include(replacement)
    assert [i.content for i in pile] == [0, "B", 2]
    assert pile[b.id] is replacement


def test_replacement_keeps_length() -> None:
    """A replacement does not add an entry."""
    a, b = items(2)
    pile = Pile([a, b], item_type=MemoryItem)
    pile.include(MemoryItem(id=a.id))
    assert len(pile) == 2


def test_duplicates_in_the_constructor_collapse_to_the_last() -> None:
    """Pile([a, a']) with the same id keeps one entry, the last object, at the first position."""
    a, b = items(2)
    again = MemoryItem(id=a.id, content="again")
    pile = Pile([a, b, again], item_type=MemoryItem)
    assert pile.values() == [again, b]
    assert pile.values()[0] is again


def test_subclass_is_accepted() -> None:
    """An instance of a subclass of item_type is accepted."""
    note = Note()
    pile = Pile([note], item_type=MemoryItem)
    assert pile[note.id] is note


def test_wrong_type_raises_naming_both_types() -> None:
    """An item of another type raises TypeError naming the accepted and the received type."""
    pile: Pile[MemoryItem] = Pile(item_type=MemoryItem)
    with pytest.raises(TypeError, match=r"holds MemoryItem \(or a subclass\), not Element"):
        pile.include(Element())  # type: ignore[arg-type]  # the wrong type is the point


def test_wrong_type_in_constructor_includes_nothing() -> None:
    """A bad item anywhere in the constructor's batch raises before anything is held."""
    with pytest.raises(TypeError):
        Pile([MemoryItem(), "x"], item_type=MemoryItem)  # type: ignore[type-var]  # wrong on purpose


def test_failed_include_leaves_the_pile_unchanged() -> None:
    """A rejected include changes nothing."""
    pile = Pile(items(2), item_type=MemoryItem)
    before = pile.values()
    with pytest.raises(TypeError):
        pile.include(5)  # type: ignore[arg-type]  # wrong on purpose
    assert pile.values() == before


def test_default_item_type_is_element() -> None:
    """Without item_type, any Element is accepted."""
    pile: Pile[Element] = Pile()
    pile.include(Element())
    pile.include(MemoryItem())
    assert pile.item_type == (Element,)
    assert len(pile) == 2


def test_tuple_item_type_accepts_each_class() -> None:
    """item_type may be a tuple of classes."""

    class Other(Element):
        pass

    pile: Pile[Element] = Pile([Other(), MemoryItem()], item_type=(MemoryItem, Other))
    assert len(pile) == 2


@pytest.mark.parametrize("bad", [(), "MemoryItem", 5, (MemoryItem, "x")], ids=repr)
def test_bad_item_type_raises(bad: Any) -> None:
    """item_type must be a class or a non-empty tuple of classes."""
    with pytest.raises(TypeError, match="item_type must be a class"):
        Pile(item_type=bad)


@pytest.mark.parametrize("bad", ["abc", b"abc", {"k": 1}], ids=repr)
def test_constructor_rejects_strings_and_mappings(bad: Any) -> None:
    """Pile() of a str, bytes or dict raises TypeError rather than iterating it."""
    with pytest.raises(TypeError, match="takes an iterable of items"):
        Pile(bad)


def test_get_with_default() -> None:
    """get() returns the default for an unknown key."""
    pile = Pile(items(1), item_type=MemoryItem)
    marker = object()
    assert pile.get(uuid4(), marker) is marker
    assert pile.get(uuid4()) is None


@pytest.mark.parametrize(
    "form",
    [lambda i: i.id, lambda i: str(i.id), lambda i: i.id.hex, lambda i: i],
    ids=["uuid", "str", "hex", "element"],
)
def test_get_accepts_uuid_string_and_element_keys(form: Any) -> None:
    """An item is found by its UUID, a UUID string or an Element with its id."""
    a = MemoryItem()
    assert Pile([a], item_type=MemoryItem).get(form(a)) is a


@pytest.mark.parametrize("key", ["garbage", 2, -3, True, None, 1.5, [1]], ids=repr)
def test_get_unusable_key_gives_default(key: Any) -> None:
    """A key that designates no id, or a position out of range, gives the default, never an
    error; a bool is not a position."""
    assert Pile(items(2), item_type=MemoryItem).get(key, "d") == "d"


def test_positions_index_as_in_a_list() -> None:
    """pile[0], pile[-1] and get(position) give the item there, a slice a list; ``in`` looks
    for ids only."""
    a, b, c = items(3)
    pile = Pile([a, b, c], item_type=MemoryItem)
    assert (pile[0], pile[1], pile[-1], pile[-3]) == (a, b, c, a)
    assert (pile.get(0), pile.get(-1)) == (a, c)
    assert (pile[1:], pile[::-1], pile[5:]) == ([b, c], [c, b, a], [])
    assert 0 not in pile
    pile.exclude(b)
    assert (pile[1], pile[-2]) == (c, a)


@pytest.mark.parametrize("key", [3, -4, 10**30], ids=repr)
def test_a_position_out_of_range_raises_index_error(key: int) -> None:
    """pile[k] past either end raises IndexError naming the position and the size."""
    with pytest.raises(IndexError, match=rf"^no item at position {key}: the pile holds 3$"):
        Pile(items(3), item_type=MemoryItem)[key]


def test_a_bool_is_not_a_position() -> None:
    """pile[True] is a key that designates no id (lionagi reads it as position 1)."""
    with pytest.raises(KeyError):
        Pile(items(2), item_type=MemoryItem)[True]


def test_getitem_unknown_raises_key_error() -> None:
    """pile[unknown] raises KeyError carrying the key."""
    key = uuid4()
    with pytest.raises(KeyError) as caught:
        Pile(item_type=MemoryItem)[key]
    assert caught.value.args == (key,)


def test_contains_by_id() -> None:
    """`in` is by id: the item, another object with its id, its UUID and its string all count."""
    a = MemoryItem()
    pile = Pile([a], item_type=MemoryItem)
    assert a in pile
    assert MemoryItem(id=a.id) in pile
    assert a.id in pile
    assert str(a.id) in pile
    assert uuid4() not in pile
    assert "garbage" not in pile


def test_keys_are_ids_in_order() -> None:
    """keys() lists the ids in order."""
    batch = items(3)
    assert Pile(batch, item_type=MemoryItem).keys() == [i.id for i in batch]


def test_values_is_a_new_list() -> None:
    """values() returns a fresh list each time."""
    pile = Pile(items(2), item_type=MemoryItem)
    assert pile.values() is not pile.values()


def test_empty_pile_is_falsy() -> None:
    """An empty pile has length 0 and is false; a filled one is true."""
    assert not Pile(item_type=MemoryItem)
    assert Pile(items(1), item_type=MemoryItem)


def test_exclude_removes_and_returns_the_item() -> None:
    """exclude() returns the removed item and the others keep their order."""
    a, b, c = items(3)
    pile = Pile([a, b, c], item_type=MemoryItem)
    assert pile.exclude(b.id) is b
    assert pile.values() == [a, c]
    assert pile[c.id] is c


def test_exclude_unknown_returns_none() -> None:
    """exclude() of an absent or unusable key changes nothing and returns None."""
    pile = Pile(items(2), item_type=MemoryItem)
    assert pile.exclude(uuid4()) is None
    assert pile.exclude("garbage") is None
    assert len(pile) == 2


def test_include_after_exclude_appends() -> None:
    """A removed id included again goes to the end."""
    a, b = items(2)
    pile = Pile([a, b], item_type=MemoryItem)
    pile.exclude(a)
    pile.include(a)
    assert pile.values() == [b, a]


def test_iteration_sees_the_items_present_when_it_started() -> None:
    """An item included during an iteration is not yielded by it."""
    a, b = items(2)
    pile = Pile([a], item_type=MemoryItem)
    seen = []
    for item in pile:
        seen.append(item)
        pile.include(b)
    assert seen == [a]


def test_iteration_is_unaffected_by_exclude() -> None:
    """An item excluded during an iteration is still yielded by it (the iteration holds the old list)."""
    a, b = items(2)
    pile = Pile([a, b], item_type=MemoryItem)
    seen = []
    for item in pile:
        seen.append(item)
        pile.exclude(b)
    assert seen == [a, b]


def test_pickle_round_trip() -> None:
    """A pickled pile comes back with equal items in order and the same item type, and works."""
    batch = items(3)
    clone = pickle.loads(pickle.dumps(Pile(batch, item_type=MemoryItem)))
    assert clone.values() == batch
    assert clone.item_type == (MemoryItem,)
    clone.include(MemoryItem())
    assert len(clone) == 4


def test_deepcopy_copies_the_items() -> None:
    """copy.deepcopy gives equal items that are new objects."""
    batch = items(2)
    clone = copy.deepcopy(Pile(batch, item_type=MemoryItem))
    assert clone.values() == batch
    assert clone.values()[0] is not batch[0]


def test_repr_shows_items_and_type() -> None:
    """repr() names the class, the items and the item type."""
    a = MemoryItem(id="12345678-1234-5678-1234-567812345678", created_at=1.5)
    text = repr(Pile([a], item_type=MemoryItem))
    assert text.startswith("Pile([MemoryItem(id=UUID('12345678-1234-5678-1234-567812345678')")
    assert text.endswith("item_type=(<class 'lionmem_models.memory_item.MemoryItem'>,))")


def test_threads_including_lose_nothing() -> None:
    """8 threads including 500 items each into one pile keep all 4000."""
    pile: Pile[MemoryItem] = Pile(item_type=MemoryItem)
    batches = [items(500) for _ in range(8)]

    def include_all(batch: list[MemoryItem]) -> None:
        for item in batch:
            pile.include(item)

    threads = [threading.Thread(target=include_all, args=(b,)) for b in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert len(pile) == 4000
    assert all(pile[i.id] is i for batch in batches for i in batch)


def test_iteration_is_unaffected_by_replacement() -> None:
    """An item replaced during an iteration is yielded as it was when the iteration started."""
    a, b = items(2)
    pile = Pile([a, b], item_type=MemoryItem)
    newer = MemoryItem(id=b.id, content="newer")
    seen = []
    for item in pile:
        seen.append(item)
        pile.include(newer)
    assert [item is old for item, old in zip(seen, [a, b], strict=True)] == [True, True]
    assert pile[1] is newer


def test_positions_follow_removals_and_replacements() -> None:
    """After removals and replacements in any order, positions, keys and iteration agree with a
    list kept the same way."""
    batch = items(40)
    pile = Pile(batch, item_type=MemoryItem)
    model = list(batch)
    for step, victim in enumerate(batch[::3]):
        assert pile.exclude(victim) is victim
        model.remove(victim)
        replacement = MemoryItem(id=model[step % len(model)].id, content=f"r{step}")
        pile.include(replacement)
        model[step % len(model)] = replacement
        assert [pile[i] for i in range(len(pile))] == model
        assert pile.keys() == [item.id for item in model]
        assert all(pile[item.id] is item for item in model)
        assert list(pile) == model
        assert len(pile) == len(model)


def test_readers_see_consistent_piles_while_others_write() -> None:
    """Threads reading positions, ids and iterations while others include, replace and exclude:
    the items included first and never removed stay at their positions, each as its old or new
    object, and every iteration yields them in order with no id twice."""
    anchors = items(50)
    pile = Pile(anchors, item_type=MemoryItem)
    ids = [item.id for item in anchors]
    stop = threading.Event()
    problems: list[str] = []

    def write() -> None:
        step = 0
        while not stop.is_set():
            extra = MemoryItem(content=step)
            pile.include(extra)
            pile.include(MemoryItem(id=ids[step % len(ids)], content=step))
            pile.exclude(extra)
            step += 1

    def read() -> None:
        position = 0
        while not stop.is_set():
            walked = [item.id for item in pile]
            if walked[: len(ids)] != ids or len(set(walked)) != len(walked):
                problems.append(f"iteration: {walked[:3]}...")
            position = (position + 1) % len(ids)
            if pile[position].id != ids[position] or pile.get(ids[position]) is None:
                problems.append(f"position {position}")

    threads = [threading.Thread(target=write) for _ in range(2)]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    stop.wait(1.0)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert problems == []
    assert pile.keys() == ids


# ---------------------------------------------------------------- as a pydantic field


class Holder(BaseModel):
    """A model with a Pile field, as Session has."""

    notes: Pile[MemoryItem]


def test_field_accepts_any_iterable() -> None:
    """A Pile field validates a list, a tuple or a generator into a new Pile of that type."""
    batch = items(2)
    for value in (batch, tuple(batch), (i for i in batch)):
        held = Holder(notes=value).notes
        assert isinstance(held, Pile)
        assert held.values() == batch
        assert held.item_type == (MemoryItem,)


def test_field_copies_a_given_pile() -> None:
    """A Pile given to the field is copied, not shared."""
    pile = Pile(items(2), item_type=MemoryItem)
    held = Holder(notes=pile).notes
    assert held is not pile
    assert held.values() == pile.values()


def test_field_rejects_wrong_items() -> None:
    """A wrong element is a ValidationError located at its index."""
    with pytest.raises(ValidationError) as caught:
        Holder.model_validate({"notes": [MemoryItem(), 5]})
    assert caught.value.errors()[0]["loc"] == ("notes", 1)


def test_field_serialises_as_a_list_of_dumps() -> None:
    """model_dump writes the pile as the list of its items' dumps."""
    a = MemoryItem(id="12345678-1234-5678-1234-567812345678", created_at=1.5, content="x")
    assert Holder(notes=[a]).model_dump() == {"notes": [a.model_dump()]}


def test_field_round_trips_through_json() -> None:
    """A model with a Pile field round-trips through JSON with the same ids in order."""
    batch = items(3)
    again = Holder.model_validate_json(Holder(notes=batch).model_dump_json())
    assert again.notes.keys() == [i.id for i in batch]


def test_field_json_schema_is_an_array_of_items() -> None:
    """The JSON schema of a Pile field is an array of the item schema."""
    schema = Holder.model_json_schema()
    assert schema["properties"]["notes"]["type"] == "array"
    assert schema["properties"]["notes"]["items"] == {"$ref": "#/$defs/MemoryItem"}
