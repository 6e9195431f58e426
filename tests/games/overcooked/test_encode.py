"""The vector: overcooked-ai's lossless planes (known values here; value-for-value parity with
overcooked-ai in test_parity.py) and the compact egocentric features."""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.games.overcooked.encode import NUM_CHANNELS, OvercookedEncoder
from tom_envs.games.overcooked.rules import Chef, Item, OvercookedConfig, OvercookedState

from .helpers import game, state

N, S, E, W = range(4)


def planes(config: OvercookedConfig, s: OvercookedState, player: int) -> np.ndarray:
    enc = OvercookedEncoder(config)
    g = game(config.layout, cooking=config.cooking)
    return enc.split(enc.encode(g.observe(s, player)))["planes"]


def test_start_state_planes_of_cramped_room() -> None:
    g = game()
    s = g.initial_state(np.random.default_rng(0))
    p = planes(g.config, s, 0)
    assert p.shape == (5, 4, NUM_CHANNELS)
    ones = {c: sorted(zip(*np.nonzero(p[:, :, c]), strict=True)) for c in range(NUM_CHANNELS)}
    assert ones[0] == [(1, 2)] and ones[1] == [(3, 1)]  # me, partner
    assert ones[2] == [(1, 2)] and ones[6] == [(3, 1)]  # both face north
    assert ones[10] == [(2, 0)]  # pot
    assert len(ones[11]) == 9  # counters
    assert ones[12] == [(0, 1), (4, 1)] and ones[14] == [(1, 3)] and ones[15] == [(3, 3)]
    assert all(not ones[c] for c in (3, 4, 5, 7, 8, 9, 13, *range(16, 26)))
    other = planes(g.config, s, 1)  # player_1: itself first
    assert other[3, 1, 0] == 1 and other[1, 2, 1] == 1


def test_object_planes() -> None:
    g = game()
    k = g.layout.counters.index((2, 3))
    s = state(g, (((1, 2), E, Item.SOUP_3), ((3, 1), W, Item.DISH)), ((3, 5),), {k: Item.ONION})
    p = planes(g.config, s, 0)
    assert p[2, 0, 18] == 3 and p[2, 0, 20] == 15 and p[2, 0, 21] == 0  # cooking pot
    assert p[1, 2, 18] == 3 and p[1, 2, 21] == 1  # the soup I hold
    assert p[3, 1, 22] == 1  # partner's plate
    assert p[2, 3, 23] == 1  # onion on a counter
    assert p[1, 2, 4] == 1 and p[3, 1, 9] == 1  # I face east, partner west
    idle = planes(g.config, state(g, (((1, 2), E, 0), ((3, 1), W, 0)), ((2, -1),)), 0)
    assert idle[2, 0, 16] == 2 and idle[2, 0, 18] == 0
    ready = planes(g.config, state(g, (((1, 2), E, 0), ((3, 1), W, 0)), ((3, 20),)), 0)
    assert ready[2, 0, 21] == 1 and ready[2, 0, 20] == 0


def test_urgency_in_the_last_40_steps() -> None:
    g = game()
    chefs = (((1, 2), N, 0), ((3, 1), N, 0))
    assert planes(g.config, state(g, chefs, timestep=360), 0)[:, :, 25].sum() == 0
    assert planes(g.config, state(g, chefs, timestep=361), 0)[:, :, 25].min() == 1


@pytest.mark.parametrize("layout", ["cramped_room", "forced_coordination", "counter_circuit"])
def test_observation_options_and_bounds(layout: str) -> None:
    sizes = {}
    for obs in ("lossless", "features", "both"):
        cfg = OvercookedConfig(layout=layout, observation=obs)
        enc = OvercookedEncoder(cfg)
        sizes[obs] = enc.observation_shape[0]
        assert enc.state_shape == enc.observation_shape
        assert [name for name, _ in enc.pieces] == {
            "lossless": ["planes"], "features": ["features"], "both": ["planes", "features"]
        }[obs]  # fmt: skip
    lay = OvercookedConfig(layout=layout).kitchen
    assert sizes["lossless"] == lay.width * lay.height * 26
    assert sizes["features"] == 39 + 6 * len(lay.pots)
    assert sizes["both"] == sizes["lossless"] + sizes["features"]


def test_features_known_values_and_range() -> None:
    g = game()
    enc = OvercookedEncoder(g.config)
    k = g.layout.counters.index((2, 3))
    s = state(g, (((2, 1), N, Item.ONION), ((3, 2), S, 0)), ((2, -1),), {k: Item.DISH})
    f = enc.split(enc.encode(g.observe(s, 0)))["features"]
    assert f.min() >= 0 and f.max() <= 1
    me = f[:17]  # 12 + 1 pot + 4
    assert me[0] == 2 / 4 and me[1] == 1 / 3  # x / (W-1), y / (H-1)
    assert list(me[2:6]) == [1, 0, 0, 0] and list(me[6:9]) == [1, 0, 0]  # north, onion
    assert me[12] == 0.0  # the pot is right here
    pots = f[34:38]
    assert pots[0] == pytest.approx(2 / 3) and list(pots[1:]) == [0, 0, 0]
    assert f[38] == pytest.approx((1 / 4 + 1) / 2) and f[39] == pytest.approx((1 / 3 + 1) / 2)
    assert f[41] == pytest.approx(1 / 9)  # one plate on 9 counters


def test_egocentric_symmetry() -> None:
    """player_1's vector is player_0's vector of the state with the chefs swapped."""
    g = game("coordination_ring")
    enc = OvercookedEncoder(g.config)
    rng = np.random.default_rng(3)
    s = g.initial_state(rng)
    for a in rng.integers(6, size=(150, 2)):
        s, _, _ = g.transition(s, int(a[0]), int(a[1]))
        swapped = OvercookedState(s.timestep, s.chefs[::-1], s.pots, s.counters, s.score)
        assert np.array_equal(enc.encode(g.observe(s, 1)), enc.encode(g.observe(swapped, 0)))
        assert np.array_equal(enc.encode_state(s), enc.encode(g.observe(s, 0)))


def test_cached_shared_part_does_not_leak_between_states() -> None:
    g = game()
    enc = OvercookedEncoder(g.config)
    a = state(g, (((1, 2), N, Item.ONION), ((3, 1), N, 0)))
    b = state(g, (((1, 2), N, 0), ((3, 1), N, 0)))
    va, vb = enc.encode(g.observe(a, 0)), enc.encode(g.observe(b, 0))
    assert not np.array_equal(va, vb)
    assert np.array_equal(enc.encode(g.observe(a, 0)), va)
    assert np.array_equal(OvercookedEncoder(g.config).encode(g.observe(b, 0)), vb)
    assert isinstance(Chef((1, 1), 0, 0), tuple)
