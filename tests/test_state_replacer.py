"""``state_replacer``: the rules engines' fast ``dataclasses.replace`` gives the same states."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from tom_envs.core.game import state_replacer


@dataclass(frozen=True)
class S:
    a: int
    b: tuple[int, ...] = ()
    c: str = "x"


def test_equals_dataclasses_replace_in_fields_equality_and_hash() -> None:
    fast = state_replacer(S)
    s = S(1, (2, 3))
    for changes in ({}, {"a": 5}, {"b": (9,), "c": "y"}):
        got, want = fast(s, **changes), replace(s, **changes)
        assert got == want and hash(got) == hash(want) and type(got) is S
        assert got is not s
    assert s == S(1, (2, 3))  # the original is untouched


def test_values_cached_on_a_state_are_not_carried_over() -> None:
    fast = state_replacer(S)
    s = S(1)
    s.__dict__["cached"] = "derived from a"  # e.g. a functools.cached_property
    got = fast(s, a=2)
    assert got == S(2) and "cached" not in got.__dict__ and set(got.__dict__) == {"a", "b", "c"}
    assert set(fast(S(3), c="z").__dict__) == {"a", "b", "c"}


def test_refuses_states_with_post_init_or_slots() -> None:
    @dataclass(frozen=True)
    class Derived:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    for cls in (Derived, Slotted):
        with pytest.raises(TypeError, match="state_replacer"):
            state_replacer(cls)
