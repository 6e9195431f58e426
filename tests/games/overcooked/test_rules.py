"""Rules, table-driven: movement, collisions, every interaction, cooking, rewards, the end.

Directions: 0 north, 1 south, 2 east, 3 west; actions add 4 stay, 5 interact. Items: 1 onion,
2 plate (dish), 3-5 soups of 1-3 onions. Cramped room::

    XXPXX      pot c0 (2, 0), reached from (2, 1) facing north
    O  2O      onion dispensers (0, 1) and (4, 1), from (1, 1) west / (3, 1) east
    X1  X
    XDXSX      plates (1, 3) from (1, 2) south; window (3, 3) from (3, 2) south
"""

from __future__ import annotations

import numpy as np
import pytest

from tom_envs.core.game import IllegalActionError
from tom_envs.games.overcooked.rules import (
    ALL_ACTIONS,
    Action,
    Chef,
    Item,
    OvercookedConfig,
    OvercookedGame,
    item_name,
)

from .helpers import face_to_face_game, game, state

N, S, E, W, STAY, INTERACT = range(6)
ONION, DISH, SOUP1, SOUP3 = Item.ONION, Item.DISH, Item.SOUP_1, Item.SOUP_3
FAR = ((3, 2), N, 0)  # a chef parked out of the way

# (name, chef0, chef1, pots, joint action, expected chef0, expected chef1, expected pots, reward)
CASES = [
    ("move onto floor", ((1, 2), N, 0), FAR, None, (N, STAY), ((1, 1), N, 0), FAR, None, 0),
    ("move into a counter only turns", ((1, 2), N, 0), FAR, None, (W, STAY),
     ((1, 2), W, 0), FAR, None, 0),
    ("stay keeps facing", ((1, 2), E, 0), FAR, None, (STAY, STAY), ((1, 2), E, 0), FAR, None, 0),
    ("same target cell: both stay, both turn", ((1, 2), E, 0), ((2, 1), E, 0), None, (N, W),
     ((1, 2), N, 0), ((2, 1), W, 0), None, 0),
    ("swap: both stay", ((1, 1), N, 0), ((2, 1), N, 0), None, (E, W),
     ((1, 1), E, 0), ((2, 1), W, 0), None, 0),
    ("follow the leader is allowed", ((1, 1), N, 0), ((2, 1), N, 0), None, (E, E),
     ((2, 1), E, 0), ((3, 1), E, 0), None, 0),
    ("onion from a dispenser", ((1, 1), W, 0), FAR, None, (INTERACT, STAY),
     ((1, 1), W, ONION), FAR, None, 0),
    ("no onion with full hands", ((1, 1), W, DISH), FAR, None, (INTERACT, STAY),
     ((1, 1), W, DISH), FAR, None, 0),
    ("plate from the dispenser", ((1, 2), S, 0), FAR, None, (INTERACT, STAY),
     ((1, 2), S, DISH), FAR, None, 0),
    ("onion into an empty pot", ((2, 1), N, ONION), FAR, ((0, -1),), (INTERACT, STAY),
     ((2, 1), N, 0), FAR, ((1, -1),), 0),
    ("third onion starts cooking at once", ((2, 1), N, ONION), FAR, ((2, -1),), (INTERACT, STAY),
     ((2, 1), N, 0), FAR, ((3, 1),), 0),
    ("no onion into a cooking pot", ((2, 1), N, ONION), FAR, ((3, 4),), (INTERACT, STAY),
     ((2, 1), N, ONION), FAR, ((3, 5),), 0),
    ("empty hands do nothing to a pot", ((2, 1), N, 0), FAR, ((2, -1),), (INTERACT, STAY),
     ((2, 1), N, 0), FAR, ((2, -1),), 0),
    ("cooking counts up", ((1, 2), N, 0), FAR, ((3, 19),), (STAY, STAY),
     ((1, 2), N, 0), FAR, ((3, 20),), 0),
    ("a cooked soup waits", ((1, 2), N, 0), FAR, ((3, 20),), (STAY, STAY),
     ((1, 2), N, 0), FAR, ((3, 20),), 0),
    ("a plate does not take a cooking soup", ((2, 1), N, DISH), FAR, ((3, 19),),
     (INTERACT, STAY), ((2, 1), N, DISH), FAR, ((3, 20),), 0),
    ("a plate takes a cooked soup", ((2, 1), N, DISH), FAR, ((3, 20),), (INTERACT, STAY),
     ((2, 1), N, SOUP3), FAR, ((0, -1),), 0),
    ("deliver a soup", ((3, 2), S, SOUP3), ((1, 1), N, 0), None, (INTERACT, STAY),
     ((3, 2), S, 0), ((1, 1), N, 0), None, 20.0),
    ("an onion is not delivered", ((3, 2), S, ONION), ((1, 1), N, 0), None, (INTERACT, STAY),
     ((3, 2), S, ONION), ((1, 1), N, 0), None, 0),
    ("interact then move: the interaction happens where the chef stood", ((1, 1), W, 0),
     ((3, 1), E, 0), None, (INTERACT, INTERACT), ((1, 1), W, ONION), ((3, 1), E, ONION), None, 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("c0", "c1", "pots", "joint", "e0", "e1", "epots", "reward"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_transition_table(c0, c1, pots, joint, e0, e1, epots, reward) -> None:
    g = game()
    s = state(g, (c0, c1), pots)
    result = g.step(s, {0: joint[0], 1: joint[1]}, np.random.default_rng(0))
    nxt = result.state
    assert nxt.chefs == (Chef(*e0), Chef(*e1))
    assert nxt.pots == (epots if epots is not None else s.pots)
    assert result.rewards == (reward, reward)
    assert nxt.timestep == 1 and nxt.score == reward


INTERACT_MODE = [
    ("empty hands start a partial pot", ((2, 1), N, 0), ((2, -1),), ((2, 1), N, 0), ((2, 1),)),
    ("a full pot waits to be started", ((2, 1), N, ONION), ((2, -1),), ((2, 1), N, 0), ((3, -1),)),
    ("an empty pot cannot be started", ((2, 1), N, 0), ((0, -1),), ((2, 1), N, 0), ((0, -1),)),
    ("a started partial soup is cooked like any", ((2, 1), N, DISH), ((1, 20),),
     ((2, 1), N, SOUP1), ((0, -1),)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("c0", "pots", "e0", "epots"), [c[1:] for c in INTERACT_MODE], ids=[c[0] for c in INTERACT_MODE]
)
def test_interact_cooking_rule(c0, pots, e0, epots) -> None:
    g = game(cooking="interact")
    nxt, _, _ = g.transition(state(g, (c0, FAR), pots), INTERACT, STAY)
    assert nxt.chefs[0] == Chef(*e0) and nxt.pots == epots


def test_interact_mode_partial_soup_is_worth_nothing() -> None:
    g = game(cooking="interact")
    s = state(g, (((3, 2), S, SOUP1), ((1, 1), N, 0)))
    nxt, reward, events = g.transition(s, INTERACT, STAY)
    assert reward == 0 and nxt.chefs[0].held == 0 and events == ("player_0:delivery",)


def test_counters_hold_items(tmp_path) -> None:
    g = game()
    s = state(g, (((2, 2), S, ONION), FAR))  # counter (2, 3) is counter index 7
    k = g.layout.counters.index((2, 3))
    s1, _, _ = g.transition(s, INTERACT, STAY)
    assert s1.chefs[0].held == 0 and s1.counters[k] == ONION
    s2, _, _ = g.transition(s1, INTERACT, STAY)
    assert s2.chefs[0].held == ONION and s2.counters[k] == 0
    s3 = state(g, (((2, 2), S, DISH), FAR), counters={k: ONION})
    s4, _, _ = g.transition(s3, INTERACT, STAY)  # a full counter refuses
    assert s4.chefs[0].held == DISH and s4.counters[k] == ONION


@pytest.mark.parametrize(
    ("held0", "held1", "counter", "e0", "e1", "ecounter"),
    [
        (ONION, 0, 0, 0, ONION, 0),  # player_0 places, then player_1 picks it up, same step
        (0, ONION, 0, 0, 0, ONION),  # player_0 finds nothing, then player_1 places
        (0, 0, DISH, DISH, 0, 0),  # player_0 is served first
    ],
)
def test_player_0_interacts_first(tmp_path, held0, held1, counter, e0, e1, ecounter) -> None:
    g = face_to_face_game(tmp_path)
    k = g.layout.counters.index((3, 1))
    s = state(g, (((2, 1), E, held0), ((4, 1), W, held1)), counters={k: counter})
    nxt, _, _ = g.transition(s, INTERACT, INTERACT)
    assert (nxt.chefs[0].held, nxt.chefs[1].held, nxt.counters[k]) == (e0, e1, ecounter)


def test_pot_filled_by_both_chefs_at_once(tmp_path) -> None:
    g = face_to_face_game(tmp_path)
    s = state(g, (((2, 2), E, ONION), ((4, 2), W, ONION)), pots=((2, -1),))
    nxt, _, _ = g.transition(s, INTERACT, INTERACT)
    assert nxt.pots == ((3, 1),)  # player_0's onion fills it and it starts cooking
    assert nxt.chefs[0].held == 0 and nxt.chefs[1].held == ONION
    ready = state(g, (((2, 2), E, DISH), ((4, 2), W, DISH)), pots=((3, 20),))
    nxt, _, _ = g.transition(ready, INTERACT, INTERACT)
    assert nxt.chefs[0].held == SOUP3 and nxt.chefs[1].held == DISH and nxt.pots == ((0, -1),)


def test_two_deliveries_in_one_step_pay_40() -> None:
    g = game("asymmetric_advantages")
    s = state(g, (((3, 2), N, SOUP3), ((7, 1), E, SOUP3)))
    result = g.step(s, {0: INTERACT, 1: INTERACT}, np.random.default_rng(0))
    assert result.rewards == (40.0, 40.0) == (g.reward_range[1],) * 2
    assert result.events == ("player_0:delivery", "player_1:delivery")


def test_one_soup_from_scratch_takes_the_known_number_of_steps() -> None:
    """Alone in the cramped room, player_0 cooks and delivers one soup; player_1 stays."""
    g = game()
    plan = [N, W, INTERACT, E, N, INTERACT, W, INTERACT, E, N, INTERACT, W, INTERACT, E, N,
            INTERACT]  # fmt: skip
    s = g.initial_state(np.random.default_rng(0))
    for a in plan:
        s, r, _ = g.transition(s, a, STAY)
        assert r == 0
    assert s.pots == ((3, 1),) and s.timestep == 16
    plan = [S, W, S, INTERACT, N, E, N]  # to the plate dispenser and back below the pot
    for a in plan:
        s, _, _ = g.transition(s, a, STAY)
    assert s.chefs[0] == Chef((2, 1), N, DISH), s.chefs[0]
    while s.pots[0][1] < 20:
        s, _, _ = g.transition(s, INTERACT, STAY)  # waits: a plate cannot take a cooking soup
    assert s.timestep == 16 + 19 and s.chefs[0].held == DISH
    s, _, _ = g.transition(s, INTERACT, STAY)
    assert s.chefs[0].held == SOUP3
    for a in (S, E, S, INTERACT):  # around player_1, who stands on (3, 1)
        s, r, _ = g.transition(s, a, STAY)
    assert r == 20 and s.score == 20 and s.timestep == 40


def test_episode_ends_at_the_horizon() -> None:
    g = game(horizon=3)
    s = g.initial_state(np.random.default_rng(0))
    for _ in range(3):
        assert g.current_players(s) == (0, 1)
        assert g.legal_actions(s, 0) == ALL_ACTIONS
        s = g.step(s, {0: STAY, 1: STAY}, np.random.default_rng(0)).state
    assert g.is_terminal(s) and g.current_players(s) == () and g.legal_actions(s, 1) == ()
    with pytest.raises(IllegalActionError):
        g.step(s, {0: STAY, 1: STAY}, np.random.default_rng(0))


@pytest.mark.parametrize(
    "joint",
    [{0: 6, 1: 0}, {0: -1, 1: 0}, {0: 1.0, 1: 0}, {0: True, 1: 0}, {0: 0}, {0: 0, 1: 0, 2: 0},
     {1: 0, 0: "interact"}],
)  # fmt: skip
def test_malformed_joint_actions_raise(joint) -> None:
    g = game()
    s = g.initial_state(np.random.default_rng(0))
    with pytest.raises(IllegalActionError):
        g.step(s, joint, np.random.default_rng(0))


def test_fast_path_equals_checked_path() -> None:
    g = game()
    rng = np.random.default_rng(0)
    s = g.initial_state(rng)
    for a0, a1 in rng.integers(6, size=(200, 2)):
        fast = g.step(s, {0: int(a0), 1: int(a1)}, rng)
        slow = g.step(s, {0: np.int64(a0), 1: np.int64(a1)}, rng)  # numpy ints: full checks
        assert fast == slow
        s = fast.state


def test_random_start_comes_from_the_seed() -> None:
    g = game(random_start=True)
    assert g.tags.chance == "stochastic" and game().tags.chance == "deterministic"
    starts = {g.initial_state(np.random.default_rng(s)).chefs for s in range(30)}
    assert len(starts) > 10
    for chefs in starts:
        assert chefs[0].pos != chefs[1].pos
        assert all(c.pos in g.layout.floor for c in chefs)
    a = g.initial_state(np.random.default_rng(7))
    assert a == g.initial_state(np.random.default_rng(7))


@pytest.mark.parametrize(
    "kwargs",
    [{"cooking": "sometimes"}, {"horizon": 0}, {"cook_time": 0}, {"observation": "pixels"},
     {"names": ("Al", "Al")}, {"layout": "nowhere"}],
)  # fmt: skip
def test_bad_configs_are_refused(kwargs) -> None:
    with pytest.raises(ValueError):
        OvercookedConfig(**kwargs)


def test_facts() -> None:
    g = game()
    assert g.num_players == 2 and g.num_actions == 6 == len(Action)
    assert g.tags.utility == "identical" and g.tags.dynamics == "simultaneous"
    assert g.max_steps == 400 and g.reward_range == (0.0, 40.0)
    assert [item_name(i) for i in range(6)] == [
        "nothing", "onion", "plate", "soup of 1 onion", "soup of 2 onions", "soup",
    ]  # fmt: skip
    assert isinstance(g, OvercookedGame)
    assert hash(g.initial_state(np.random.default_rng(0)))


def test_useful_plate_event_follows_overcooked_ais_shaping_rule() -> None:
    """A plate picked up while fewer plates are in play than started pots is 'useful'."""
    from tom_envs.games.overcooked.rules import Item

    from .helpers import game as make_game
    from .helpers import state as make_state

    g = make_game("cramped_room")
    at_dispenser = ((1, 2), 1, 0)  # facing the plate dispenser, hands empty
    elsewhere = ((3, 1), 0, 0)

    def events(pots, partner=elsewhere) -> tuple[str, ...]:
        s = make_state(g, (at_dispenser, partner), pots=pots)
        return g.transition(s, 5, 4)[2]

    assert events(((3, 5),)) == ("player_0:pickup_plate", "player_0:useful_plate")  # cooking
    assert events(((3, 25),)) == ("player_0:pickup_plate", "player_0:useful_plate")  # cooked
    assert events(((2, -1),)) == ("player_0:pickup_plate",)  # not started yet
    assert events(((0, -1),)) == ("player_0:pickup_plate",)  # empty pot
    holding = ((3, 1), 0, int(Item.DISH))  # the partner already holds a plate for that soup
    assert events(((3, 5),), holding) == ("player_0:pickup_plate",)


def test_soup_from_pot_is_paid_at_the_pot_only(tmp_path) -> None:
    """overcooked-ai pays SOUP_PICKUP_REWARD for a soup taken from the pot, never for one taken
    back off a counter: both are a ``pickup_soup``, only the pot's is a ``soup_from_pot`` (the
    event a shaping weight names, so that a counter loop cannot farm it)."""
    g = face_to_face_game(tmp_path)
    at_pot = state(g, (((2, 2), E, DISH), FAR_EAST), pots=((3, 20),))
    assert g.transition(at_pot, INTERACT, STAY)[2] == (
        "player_0:pickup_soup", "player_0:soup_from_pot",
    )  # fmt: skip
    k = g.layout.counters.index((3, 1))
    on_counter = state(g, (((2, 1), E, 0), FAR_EAST), counters={k: SOUP3})
    assert g.transition(on_counter, INTERACT, STAY)[2] == ("player_0:pickup_soup",)
    put_back = state(g, (((2, 1), E, SOUP3), FAR_EAST))
    assert g.transition(put_back, INTERACT, STAY)[2] == ("player_0:place_soup",)


FAR_EAST = ((5, 1), N, 0)  # the second chef, out of the way in the face-to-face kitchen
