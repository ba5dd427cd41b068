"""A restored collection's ordinals and locations (workbook/key_positions.py) read as the maps mongoeco builds."""

from __future__ import annotations

import random
from typing import Any

import pytest
from mongoeco.engines.memory import _StoredDocument

import workbook.offline_engine  # noqa: F401  (installs the batched appends, as the offline default runs)
from workbook import engine_compat, offline_appends, snapshot
from workbook.key_positions import KeyPositions, KeyValues, Positions

from .test_offline_appends import _state


def _pair(count: int, rng: random.Random) -> tuple[Any, Any]:
    """The same ``count`` documents laid out by a restore, and appended one at a time by mongoeco's own code."""
    items = [(key, _StoredDocument({"_id": key})) for key in rng.sample(range(10**9), count)]
    restored = snapshot._rebuild_collection(items)
    reference = engine_compat.memory_collection_class()()
    original = offline_appends._INSTALLED[0]
    for key, value in items:
        original(reference, key, value)
    return restored, reference


@pytest.mark.parametrize("seed", range(6))
def test_random_writes_into_a_restored_collection_leave_the_maps_mongoeco_would(seed: int) -> None:
    rng = random.Random(seed)
    restored, reference = _pair(rng.choice([0, 1, 127, 128, 129, 700]), rng)
    assert type(restored._ordinals) is type(restored._locations) is KeyPositions
    assert type(restored._values) is KeyValues
    assert _state(restored) == _state(reference)
    original = offline_appends._INSTALLED[0]
    for step in range(200):
        action = rng.random()
        keys = list(reference._values.keys())
        if action < 0.35 or not keys:
            for _ in range(rng.randint(1, 150)):
                key = rng.randint(0, 10**9)
                if key not in reference:
                    restored[key] = value = _StoredDocument({"_id": key, "step": step})
                    original(reference, key, value)
        elif action < 0.5:
            key = rng.choice(keys)
            restored[key] = reference[key] = _StoredDocument({"_id": key, "replaced": step})
        elif action < 0.7:
            for key in rng.sample(keys, min(len(keys), rng.randint(1, 60))):
                del restored[key]
                del reference[key]
        elif action < 0.8:
            key, new = rng.choice(keys), -rng.randint(1, 10**9)  # a key whose type changed (1 -> 1.0 on MongoDB)
            restored.replace_key(key, new)
            reference.replace_key(key, new)
        elif action < 0.9:
            wanted = rng.sample(keys, min(len(keys), 20)) + [10**10]  # one absent
            assert restored.ordered_keys(wanted) == reference.ordered_keys(wanted)
            assert restored.ordered_keys(wanted, limit=3) == reference.ordered_keys(wanted, limit=3)
        else:
            for key in rng.sample(keys, min(len(keys), 5)) + [10**10]:
                assert restored.get(key, "none") is reference.get(key, "none")
                assert (key in restored) == (key in reference)
                assert (key in restored._ordinals) == (key in reference._ordinals)
                assert restored._locations.get(key, "none") == reference._locations.get(key, "none")
                assert len(restored._ordinals) == len(reference._ordinals) == len(reference)
        if rng.random() < 0.2:
            assert _state(restored) == _state(reference), step
    assert _state(restored) == _state(reference)


def test_reads_of_a_restored_collection_make_no_positions() -> None:
    """The keys' positions are made when a lookup first asks for one, not by a restore or by a scan."""
    restored, _ = _pair(300, random.Random(1))
    positions = restored._ordinals.positions
    assert positions is restored._values.positions is restored._locations.positions  # one for the three maps
    key, value = next(iter(restored.items()))
    assert [k for k, _ in restored.items()][:1] == [key] and len(restored) == 300
    assert dict(restored._values.items())[key] is value and dict(restored._ordinals.items())[key] == 0  # in order
    assert positions._order is None
    assert restored[key] is value and restored.get(key) is value and key in restored
    del restored[key]  # a delete finds the key's location
    assert positions._order is not None and len(restored._locations) == 299 and key not in restored._ordinals


class _Colliding:
    """A key whose hash is its group's: equal hashes, unequal keys, as a dict meets them."""

    def __init__(self, group: int, name: str) -> None:
        self.group, self.name = group, name

    def __hash__(self) -> int:
        return self.group

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Colliding) and (other.group, other.name) == (self.group, self.name)


def test_keys_with_equal_hashes_find_their_own_positions() -> None:
    keys: list[Any] = [_Colliding(n % 3, f"k{n}") for n in range(30)] + [-1, -2, ("t", 1), "x", 2**70]
    random.Random(3).shuffle(keys)
    positions = Positions([(key, None) for key in keys])
    assert hash(-1) == hash(-2)  # CPython's own collision, among the others
    assert [positions.position(key) for key in keys] == list(range(len(keys)))
    assert [positions.position(_Colliding(n % 3, f"k{n}")) for n in range(3)] == [
        keys.index(_Colliding(n, f"k{n}")) for n in range(3)
    ]
    assert positions.position(_Colliding(1, "absent")) is None and positions.position(-3) is None
    assert positions.position(("t", 1)) == keys.index(("t", 1)) and positions.position(1.0) is None


def test_the_positions_of_a_hundred_thousand_keys_take_sixteen_bytes_a_key() -> None:
    import tracemalloc

    positions = Positions([(("i", n), None) for n in range(100_000)])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert positions.position(("i", 99_999)) == 99_999
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= 16 * 100_000, f"{held / 100_000:.1f} bytes a key"


def test_a_missing_key_is_a_key_error_as_in_the_persistent_map() -> None:
    restored, reference = _pair(10, random.Random(2))
    for maps in (restored, reference):
        with pytest.raises(KeyError):
            maps._locations[10**10]
        with pytest.raises(KeyError):
            maps._ordinals.remove(10**10)
