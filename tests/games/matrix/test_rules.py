"""Rules of the iterated matrix games: payoffs from both seats, scoring, horizon, validation.

The expected payoffs are the paper's Tables 5-7 (specs/games.md §5), written out here cell by cell
so that a typo in ``PRESETS`` cannot hide: ``(player_0's action, player_1's action) ->
(player_0's reward, player_1's reward)``; player_1's reward is the second (column) entry.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools

import numpy as np
import pytest

from tom_envs.core.game import IllegalActionError
from tom_envs.games.matrix.env import make_bundle, parallel_env
from tom_envs.games.matrix.rules import (
    MatrixConfig,
    MatrixGame,
    MatrixState,
    payoff,
    payoff_matrix,
)

#: The paper's tables: (a0 of player_0, a of player_1) -> (reward player_0, reward player_1).
PAYOFFS: dict[str, dict[tuple[int, int], tuple[float, float]]] = {
    "rps": {
        (0, 0): (0, 0), (0, 1): (-1, 1), (0, 2): (1, -1),
        (1, 0): (1, -1), (1, 1): (0, 0), (1, 2): (-1, 1),
        (2, 0): (-1, 1), (2, 1): (1, -1), (2, 2): (0, 0),
    },
    "ibs": {(0, 0): (10, 7), (0, 1): (0, 0), (1, 0): (0, 0), (1, 1): (7, 10)},
    "ipd": {(0, 0): (8, 8), (0, 1): (0, 10), (1, 0): (10, 0), (1, 1): (5, 5)},
}
NUM_ACTIONS = {"rps": 3, "ibs": 2, "ipd": 2}
GAMES = tuple(PAYOFFS)
CELLS = [(g, a, b) for g in GAMES for (a, b) in PAYOFFS[g]]


def game_of(name: str, **kw: object) -> MatrixGame:
    return MatrixGame(MatrixConfig(game=name, **kw))  # type: ignore[arg-type]


def play(game: MatrixGame, joint: list[tuple[int, int]]) -> MatrixState:
    state = game.initial_state(np.random.default_rng(0))
    for a, b in joint:
        state = game.step(state, {0: a, 1: b}, np.random.default_rng(0)).state
    return state


# ------------------------------------------------------------------------------ payoffs
def test_every_table_is_complete() -> None:
    for g in GAMES:
        n = NUM_ACTIONS[g]
        assert set(PAYOFFS[g]) == set(itertools.product(range(n), range(n)))
        assert game_of(g).num_actions == n


@pytest.mark.parametrize(("g", "a", "b"), CELLS, ids=[f"{g}-a{a}-b{b}" for g, a, b in CELLS])
def test_step_pays_both_seats_from_the_table(g: str, a: int, b: int) -> None:
    r0, r1 = PAYOFFS[g][(a, b)]
    game = game_of(g, horizon=3)
    s0 = game.initial_state(np.random.default_rng(0))
    res = game.step(s0, {0: a, 1: b}, np.random.default_rng(0))
    assert res.rewards == (r0, r1)
    assert all(isinstance(r, float) for r in res.rewards)
    assert res.state.history == ((a, b),)
    assert res.state.scores == (r0, r1)
    # the same numbers through the egocentric helpers, from both seats
    cfg = game.config
    assert payoff(cfg, 0, a, b) == r0
    assert payoff(cfg, 1, b, a) == r1  # player_1 plays b against a: the column entry
    assert payoff_matrix(cfg, 0)[a, b] == r0
    assert payoff_matrix(cfg, 1)[b, a] == r1
    # and the views: my_score is mine, partner_score the other's
    v0, v1 = game.observe(res.state, 0), game.observe(res.state, 1)
    assert (v0.my_score, v0.partner_score) == (r0, r1)
    assert (v1.my_score, v1.partner_score) == (r1, r0)


@pytest.mark.parametrize("g", GAMES)
def test_parallel_env_rewards_match_the_table(g: str) -> None:
    for (a, b), (r0, r1) in PAYOFFS[g].items():
        env = parallel_env(game=g, horizon=2)
        env.reset(seed=0)
        _, rewards, _, _, _ = env.step({"player_0": a, "player_1": b})
        assert rewards == {"player_0": r0, "player_1": r1}, (g, a, b)


def test_ibs_headline_cell() -> None:
    # the brief's example: IBS (a0, a0) pays (10, 7); player_1's preferred outcome is (a1, a1)
    game = game_of("ibs")
    assert game.step(play(game, []), {0: 0, 1: 0}, None).rewards == (10.0, 7.0)  # type: ignore[arg-type]
    assert payoff(game.config, 1, 1, 1) == 10.0
    assert payoff(game.config, 1, 0, 0) == 7.0


def test_game_facts() -> None:
    rps, ibs, ipd = game_of("rps"), game_of("ibs"), game_of("ipd")
    assert rps.reward_range == (-1.0, 1.0)
    assert ibs.reward_range == (0.0, 10.0)
    assert ipd.reward_range == (0.0, 10.0)
    assert rps.tags.utility == "zero_sum"
    assert ibs.tags.utility == ipd.tags.utility == "general_sum"
    for g in (rps, ibs, ipd):
        assert g.num_players == 2
        assert g.tags.dynamics == "simultaneous"
        assert g.tags.chance == "deterministic"
        assert g.max_steps == 100  # the paper's T
    # RPS really is zero-sum, IPD symmetric, IBS not symmetric
    m0, m1 = payoff_matrix(rps.config, 0), payoff_matrix(rps.config, 1)
    assert np.array_equal(m0, m1) and np.array_equal(m0, -m0.T)
    assert np.array_equal(payoff_matrix(ipd.config, 0), payoff_matrix(ipd.config, 1))
    assert not np.array_equal(payoff_matrix(ibs.config, 0), payoff_matrix(ibs.config, 1))


# ------------------------------------------------------------------------------ scoring
@pytest.mark.parametrize("g", GAMES)
def test_scores_accumulate(g: str) -> None:
    n = NUM_ACTIONS[g]
    rng = np.random.default_rng(11)
    joint = [(int(rng.integers(n)), int(rng.integers(n))) for _ in range(7)]
    game = game_of(g, horizon=7)
    state = game.initial_state(rng)
    total = [0.0, 0.0]
    for t, (a, b) in enumerate(joint):
        res = game.step(state, {0: a, 1: b}, rng)
        r0, r1 = PAYOFFS[g][(a, b)]
        assert res.rewards == (r0, r1)
        total[0] += r0
        total[1] += r1
        state = res.state
        assert state.round == t + 1
        assert state.scores == tuple(total)
        assert state.history == tuple(joint[: t + 1])


def test_ipd_known_totals() -> None:
    game = game_of("ipd", horizon=4)
    # C/C, D/C, C/D, D/D -> (8+10+0+5, 8+0+10+5)
    assert play(game, [(0, 0), (1, 0), (0, 1), (1, 1)]).scores == (23.0, 23.0)
    assert play(game, [(1, 0)] * 4).scores == (40.0, 0.0)


# ----------------------------------------------------------------------------- horizon
@pytest.mark.parametrize("horizon", [1, 2, 5])
@pytest.mark.parametrize("g", GAMES)
def test_terminal_exactly_at_horizon(g: str, horizon: int) -> None:
    game = game_of(g, horizon=horizon)
    state = game.initial_state(np.random.default_rng(0))
    all_actions = tuple(range(NUM_ACTIONS[g]))
    for t in range(horizon):
        assert not game.is_terminal(state), t
        assert game.current_players(state) == (0, 1)
        assert game.legal_actions(state, 0) == game.legal_actions(state, 1) == all_actions
        assert list(game.legal_mask(state, 0)) == [1] * len(all_actions)
        state = game.step(state, {0: 0, 1: 0}, None).state  # type: ignore[arg-type]
    assert state.round == horizon
    assert game.is_terminal(state)
    assert game.current_players(state) == ()
    assert game.legal_actions(state, 0) == game.legal_actions(state, 1) == ()
    assert list(game.legal_mask(state, 1)) == [0] * len(all_actions)
    assert game.observe(state, 0).legal_actions == ()
    with pytest.raises(IllegalActionError, match="over"):
        game.step(state, {0: 0, 1: 0}, None)  # type: ignore[arg-type]


# -------------------------------------------------------------------------- validation
BAD_ACTIONS = [
    pytest.param({0: 0}, "must act", id="missing-player_1"),
    pytest.param({1: 0}, "must act", id="missing-player_0"),
    pytest.param({}, "must act", id="nobody"),
    pytest.param({0: 0, 1: 0, 2: 0}, "must act", id="extra-player"),
    pytest.param({0: 3, 1: 0}, "out of range", id="out-of-range-high"),
    pytest.param({0: 0, 1: -1}, "out of range", id="negative"),
    pytest.param({0: 1.0, 1: 0}, "integer", id="float"),
    pytest.param({0: "1", 1: 0}, "integer", id="string"),
    pytest.param({0: None, 1: 0}, "integer", id="none"),
    pytest.param({0: True, 1: 0}, "integer", id="bool"),
    pytest.param({0: 0, 1: np.bool_(False)}, "integer", id="numpy-bool"),
    pytest.param({0: np.array([1]), 1: 0}, "integer", id="array"),
]


@pytest.mark.parametrize(("actions", "message"), BAD_ACTIONS)
@pytest.mark.parametrize("g", GAMES)
def test_step_rejects_bad_actions_and_leaves_state_untouched(
    g: str, actions: dict, message: str
) -> None:
    game = game_of(g, horizon=5)
    state = play(game, [(1, 0), (0, 1)])
    before = copy.deepcopy(state)
    with pytest.raises(IllegalActionError, match=message):
        game.step(state, actions, np.random.default_rng(0))
    assert state == before
    assert state.round == 2 and state.history == ((1, 0), (0, 1))
    # and the game goes on from it as if nothing happened
    nxt = game.step(state, {0: 1, 1: 1}, None).state  # type: ignore[arg-type]
    assert nxt.history == ((1, 0), (0, 1), (1, 1))


def test_out_of_range_depends_on_the_game() -> None:
    # action 2 is scissors in RPS but does not exist in the 2-action games
    game_of("rps").step(play(game_of("rps"), []), {0: 2, 1: 2}, None)  # type: ignore[arg-type]
    for g in ("ibs", "ipd"):
        game = game_of(g)
        with pytest.raises(IllegalActionError, match="out of range"):
            game.step(game.initial_state(None), {0: 2, 1: 0}, None)  # type: ignore[arg-type]


def test_numpy_integers_are_accepted_and_stored_as_int() -> None:
    game = game_of("rps", horizon=2)
    res = game.step(game.initial_state(None), {0: np.int64(2), 1: np.int8(1)}, None)  # type: ignore[arg-type]
    assert res.rewards == (1.0, -1.0)
    assert res.state.history == ((2, 1),)
    assert all(type(x) is int for x in res.state.history[0])


# ------------------------------------------------------------------------ state values
def test_states_are_immutable_hashable_values() -> None:
    game = game_of("ipd", horizon=4)
    s0 = game.initial_state(np.random.default_rng(0))
    s1 = game.step(s0, {0: 0, 1: 1}, None).state  # type: ignore[arg-type]
    # stepping is pure: s0 is unchanged and still usable (branching)
    assert s0 == MatrixState(round=0, history=(), scores=(0.0, 0.0))
    s1b = game.step(s0, {0: 1, 1: 1}, None).state  # type: ignore[arg-type]
    assert s1 != s1b
    with pytest.raises(dataclasses.FrozenInstanceError):
        s1.round = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s1.scores = (0.0, 0.0)  # type: ignore[misc]
    assert isinstance(s1.history, tuple) and isinstance(s1.history[0], tuple)
    # equal by value, hash by value: two roads to the same state meet in a dict
    again = play(game, [(0, 1)])
    assert again == s1 and hash(again) == hash(s1)
    table = {s1: "x"}
    assert table[again] == "x"
    assert len({s0, s1, s1b, again}) == 3
    # configs are values too (the metrics cache is keyed by them)
    assert MatrixConfig(game="ipd", horizon=4) == MatrixConfig(game="ipd", horizon=4)
    assert hash(MatrixConfig(game="ipd")) == hash(MatrixConfig(game="ipd"))
    assert MatrixConfig(game="ipd") != MatrixConfig(game="ibs")


def test_initial_state_ignores_the_rng() -> None:
    game = game_of("rps")
    assert game.initial_state(np.random.default_rng(1)) == game.initial_state(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ config
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game": "chess"}, "unknown matrix game"),
        ({"game": "RPS"}, "unknown matrix game"),
        ({"horizon": 0}, "horizon"),
        ({"horizon": -3}, "horizon"),
        ({"window": 0}, "window"),
        ({"window": -1}, "window"),
        ({"action_names": "emoji"}, "action_names"),
        ({"action_names": "Letters"}, "action_names"),
    ],
)
def test_config_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MatrixConfig(**kwargs)
    with pytest.raises(ValueError, match=message):
        make_bundle(**kwargs)


def test_config_error_lists_the_choices() -> None:
    with pytest.raises(ValueError) as err:
        MatrixConfig(game="chess")
    assert "ibs" in str(err.value) and "ipd" in str(err.value) and "rps" in str(err.value)
    with pytest.raises(ValueError) as err:
        MatrixConfig(action_names="emoji")
    for name in ("letters", "repeated", "canonical", "nonsense"):
        assert name in str(err.value)


def test_config_defaults_and_seen_rounds() -> None:
    cfg = MatrixConfig()
    assert (cfg.game, cfg.horizon, cfg.window, cfg.include_round, cfg.action_names) == (
        "rps", 100, None, True, "letters"
    )
    assert cfg.seen_rounds == 100
    assert MatrixConfig(horizon=10, window=3).seen_rounds == 3
    assert MatrixConfig(horizon=10, window=50).seen_rounds == 10
    assert MatrixConfig(horizon=1, window=1).seen_rounds == 1
