"""The batched Hanabi engine beyond the registry-driven parity test (tests/test_vector_parity.py:
every seat's observation, masks with the no-op, rewards and ends against the AEC env, random and
bot play, 2-5 players, small and full decks): illegal and waiting-seat actions refused, decks
uniform permutations from the seed, the Gymnasium adapter, and the vectorised simple partner,
which plays what the bot plays."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector_reference import Reference

from tom_envs.core.vector import GymVectorEnv, RandomPartner
from tom_envs.games.hanabi.bots import bot_table
from tom_envs.games.hanabi.env import make_bundle, raw_env
from tom_envs.games.hanabi.vector import HanabiVectorEnv


def test_illegal_and_waiting_seat_actions_are_refused() -> None:
    venv = HanabiVectorEnv(3)
    venv.reset(seed=0)
    a = np.full((3, 2), venv.noop)
    a[:, 0] = 5  # play card 0 (seat 0 acts first)
    a[1, 1] = 0  # a waiting seat must send the no-op
    with pytest.raises(ValueError, match=r"actions\[1, 1\]"):
        venv.step(a)
    a[1, 1] = venv.noop
    a[2, 0] = 0  # discarding with every information token in the box is illegal
    with pytest.raises(ValueError, match=r"actions\[2, 0\] = 0 is illegal"):
        venv.step(a)
    a[2, 0] = venv.noop  # the acting seat cannot pass
    with pytest.raises(ValueError, match=r"actions\[2, 0\]"):
        venv.step(a)
    a[2, 0] = 6
    venv.step(a)
    assert venv.current_player.tolist() == [1, 1, 1]


def test_decks_are_uniform_permutations_from_the_seed() -> None:
    a, b = HanabiVectorEnv(500, observations=False), HanabiVectorEnv(500, observations=False)
    a.reset(seed=3)
    b.reset(seed=3)
    assert np.array_equal(a.deck, b.deck)
    full = np.sort(a._full_deck)
    assert all(np.array_equal(np.sort(d), full) for d in a.deck)
    # each card kind comes first about as often as its share of the deck
    first = np.bincount(a.deck[:, 0], minlength=25)
    expected = 500 * np.bincount(full, minlength=25) / len(full)
    assert (np.abs(first - expected) < 5 * np.sqrt(expected) + 1).all()


def test_gym_adapter_runs_a_learner_against_a_random_partner() -> None:
    env = GymVectorEnv(HanabiVectorEnv(4), seat=0, partner=RandomPartner(1))
    obs, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(200):
        m = env.action_masks()
        assert m.any(axis=1).all()
        mine = env.engine.current_player == 0
        assert (m[~mine, :-1].sum() == 0) and m[~mine, -1].all()  # waiting: only the no-op
        u = rng.random(m.shape) + m
        obs, r, te, tr, infos = env.step(u.argmax(axis=1))
        assert obs.shape == (4, 658) and r.shape == (4,) and not tr.any()
        assert np.array_equal(infos["action_mask"], env.action_masks())
        ended += te.sum()
    assert ended > 0  # random play ends games (lives lost) within 200 moves


@pytest.mark.parametrize(
    "kw", [{"players": 2}, {"players": 3}, {"players": 5}, {"players": 2, "colors": 2, "ranks": 3}]
)
def test_vectorised_simple_partner_plays_what_the_bot_plays(kw) -> None:
    from tom_envs.games.hanabi.vector import HanabiPartner

    bundle, table = make_bundle(**kw), bot_table(**kw)
    n, B = bundle.game.num_players, 10
    agents = [[table.make("simple", bundle) for _ in range(n)] for _ in range(B)]
    venv = HanabiVectorEnv(B, **kw)
    ref = Reference(lambda: raw_env(**kw), agents, seeds=list(range(B)), noop=venv.noop)
    partner = HanabiPartner(venv, "simple", seats=tuple(range(n)))
    obs = venv.reset(seed=3)
    for i in range(B):
        ref.reset(i, venv.start_state(i))
    kinds, ends = set(), 0
    for t in range(300):
        a = ref.actions()
        assert np.array_equal(partner(obs, venv.action_masks()), a), t
        kinds |= {int(venv.game.moves[x].kind) for x in a[np.arange(B), venv.current_player]}
        obs, _, term, _ = venv.step(a)
        ref.step(a)
        for i in np.flatnonzero(term):
            ends += 1
            ref.reset(int(i), venv.start_state(int(i)))
    assert kinds == {1, 2, 3, 4} and ends > 0
    with pytest.raises(ValueError, match="simple"):
        HanabiPartner(venv, "convention")
