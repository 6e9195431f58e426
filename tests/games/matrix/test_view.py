"""What each seat sees: egocentric history, window truncation, first_round, last_actions, symmetry."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tom_envs.games.matrix.env import make_bundle, raw_env
from tom_envs.games.matrix.rules import MatrixConfig, MatrixGame, MatrixState
from tom_envs.games.matrix.view import MatrixView


def play(game: MatrixGame, joint: list[tuple[int, int]]) -> MatrixState:
    state = game.initial_state(np.random.default_rng(0))
    for a, b in joint:
        state = game.step(state, {0: a, 1: b}, None).state  # type: ignore[arg-type]
    return state


def test_initial_views() -> None:
    game = MatrixGame(MatrixConfig(game="ibs", horizon=4))
    s = game.initial_state(None)  # type: ignore[arg-type]
    for p in (0, 1):
        v = game.observe(s, p)
        assert v == MatrixView(
            player=p, round=0, horizon=4, history=(), first_round=1, my_score=0.0,
            partner_score=0.0, legal_actions=(0, 1),
        )
        assert v.last_actions is None


def test_views_are_egocentric() -> None:
    # IBS: (J, F) pays (0, 0); (F, F) pays (7, 10); (J, J) pays (10, 7)
    game = MatrixGame(MatrixConfig(game="ibs", horizon=5))
    s = play(game, [(0, 1), (1, 1), (0, 0)])
    v0, v1 = game.observe(s, 0), game.observe(s, 1)
    assert v0 == MatrixView(
        player=0, round=3, horizon=5, history=((0, 1), (1, 1), (0, 0)), first_round=1,
        my_score=17.0, partner_score=17.0, legal_actions=(0, 1),
    )
    # player_1's history is (mine, partner's): the pairs are swapped
    assert v1.history == ((1, 0), (1, 1), (0, 0))
    assert (v1.my_score, v1.partner_score) == (17.0, 17.0)
    assert v0.last_actions == (0, 0) and v1.last_actions == (0, 0)
    s2 = play(game, [(0, 1), (1, 1), (0, 0), (1, 0)])
    assert game.observe(s2, 0).last_actions == (1, 0)
    assert game.observe(s2, 1).last_actions == (0, 1)
    assert (game.observe(s2, 0).my_score, game.observe(s2, 1).my_score) == (17.0, 17.0)


def test_unequal_scores_are_attributed_to_the_right_seat() -> None:
    game = MatrixGame(MatrixConfig(game="ipd", horizon=3))
    s = play(game, [(1, 0), (1, 0)])  # player_0 defects on a cooperator twice
    assert (game.observe(s, 0).my_score, game.observe(s, 0).partner_score) == (20.0, 0.0)
    assert (game.observe(s, 1).my_score, game.observe(s, 1).partner_score) == (0.0, 20.0)


def test_observe_rejects_bad_seats() -> None:
    game = MatrixGame(MatrixConfig())
    s = game.initial_state(None)  # type: ignore[arg-type]
    for bad in (-1, 2, 5):
        with pytest.raises(ValueError, match="player"):
            game.observe(s, bad)


@pytest.mark.parametrize("window", [1, 2, 3])
def test_window_truncation_and_first_round(window: int) -> None:
    game = MatrixGame(MatrixConfig(game="rps", horizon=6, window=window))
    joint = [(0, 1), (1, 2), (2, 0), (0, 0), (1, 1)]
    for t in range(len(joint) + 1):
        s = play(game, joint[:t])
        v0, v1 = game.observe(s, 0), game.observe(s, 1)
        shown = joint[max(0, t - window) : t]
        assert v0.history == tuple(shown), t
        assert v1.history == tuple((b, a) for a, b in shown), t
        # first_round names history[0] in 1-based rounds (1 before any round is played)
        assert v0.first_round == v1.first_round == t - len(shown) + 1
        assert v0.round == t
        assert v0.last_actions == (joint[t - 1] if t else None)
        # scores are over the whole game, not the window
        assert v0.my_score == s.scores[0] and v1.my_score == s.scores[1]


def test_window_known_values() -> None:
    game = MatrixGame(MatrixConfig(game="rps", horizon=10, window=2))
    s = play(game, [(0, 0), (1, 1), (2, 2), (0, 2), (1, 0)])
    v = game.observe(s, 0)
    assert v.history == ((0, 2), (1, 0))
    assert v.first_round == 4
    assert v.my_score == 2.0 and v.partner_score == -2.0
    # a window longer than the game shows everything
    big = MatrixGame(MatrixConfig(game="rps", horizon=3, window=50))
    s = play(big, [(0, 1), (2, 2), (1, 0)])
    assert big.observe(s, 1).history == ((1, 0), (2, 2), (0, 1))
    assert big.observe(s, 1).first_round == 1


def test_terminal_view() -> None:
    game = MatrixGame(MatrixConfig(game="ipd", horizon=2))
    s = play(game, [(0, 0), (0, 1)])
    for p in (0, 1):
        v = game.observe(s, p)
        assert v.round == 2 == v.horizon
        assert v.legal_actions == ()
    assert game.observe(s, 1).last_actions == (1, 0)


def test_views_are_frozen_values() -> None:
    game = MatrixGame(MatrixConfig(game="rps", horizon=3))
    s = play(game, [(0, 1)])
    v = game.observe(s, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.round = 9  # type: ignore[misc]
    assert v == game.observe(s, 0) and hash(v) == hash(game.observe(s, 0))


def mirrored(joint: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(b, a) for a, b in joint]


@pytest.mark.parametrize("g", ["rps", "ipd"])  # the symmetric games
@pytest.mark.parametrize("window", [None, 2])
def test_seat_swap_symmetry(g: str, window: int | None) -> None:
    """In a symmetric game, seat 0 of a history sees exactly what seat 1 sees of the mirror."""
    bundle = make_bundle(game=g, horizon=6, window=window)
    game = bundle.game
    rng = np.random.default_rng(3)
    n = game.num_actions
    joint = [(int(rng.integers(n)), int(rng.integers(n))) for _ in range(6)]
    for t in range(len(joint) + 1):
        s, m = play(game, joint[:t]), play(game, mirrored(joint[:t]))
        for p in (0, 1):
            v, w = game.observe(s, p), game.observe(m, 1 - p)
            assert dataclasses.replace(w, player=p) == v
            # so every rendering agrees too (the text speaks of "you" and "the other player")
            assert np.array_equal(bundle.encoder.encode(v), bundle.encoder.encode(w))
            assert bundle.text.observation_text(v) == bundle.text.observation_text(w)
            assert bundle.text.rules_prompt(v) == bundle.text.rules_prompt(w)


def test_ibs_is_not_seat_symmetric() -> None:
    """Battle of the Sexes: the same egocentric history is worth different scores per seat."""
    game = MatrixGame(MatrixConfig(game="ibs", horizon=3))
    v = game.observe(play(game, [(0, 0)]), 0)
    w = game.observe(play(game, [(0, 0)]), 1)
    assert v.history == w.history == ((0, 0),)
    assert (v.my_score, w.my_score) == (10.0, 7.0)


def test_env_views_match_the_rules() -> None:
    env = raw_env(game="rps", horizon=4, window=2)
    env.reset(seed=0)
    for a, b in [(0, 1), (2, 2), (1, 0)]:
        env.step(a)
        env.step(b)
    assert env.view("player_0").history == ((2, 2), (1, 0))
    assert env.view("player_1").history == ((2, 2), (0, 1))
    assert env.view("player_1").first_round == 2
    assert env.view("player_0").my_score == -1.0 + 0.0 + 1.0
